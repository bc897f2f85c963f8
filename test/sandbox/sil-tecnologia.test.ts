import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import { silTecnologiaFamily } from '../../src/engines/dps-provider/sil-tecnologia.ts';
import { silSandbox } from '../../src/sandbox/soap-string/sil.ts';
import { signXml } from '../../src/xml/sign.ts';
import { normalized, startMunicipalSandbox } from '../conformance/soap-string-support.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The SIL/TBW sandbox's own rules, over raw SOAP: exclusive C14N only ("Falha na validação da assinatura"), the
 * provisional infNFSe Id, the NBS requirement, SOAP faults for a wrong shape, and the double-escaped consultation.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3205200',
  ...IBS_CBS_FRAMING,
});

let env: Awaited<ReturnType<typeof startMunicipalSandbox>>;
let agent: Agent;
let number = 500_000 + (Date.now() % 100_000);

beforeAll(async () => {
  env = await startMunicipalSandbox(silSandbox, project);
  agent = new Agent({ connect: { ca: env.caPem } });
});
afterAll(async () => {
  await agent?.close();
  await env?.close();
});

function unsigned(invoice: NormalizedInvoice = normalized(project)): string {
  return silTecnologiaFamily.declaration.build({
    project,
    invoice,
    serie: '1',
    number: ++number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  }).xml;
}

function sign(xml: string, canonicalization: 'inclusive' | 'exclusive', elementName?: string): string {
  return signXml(xml, {
    ...(elementName ? { elementName } : {}),
    key: { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem },
    algorithm: 'rsa-sha256',
    canonicalization,
  });
}

async function soap(operation: string, xml: string, options: { namespace?: string; qualified?: boolean } = {}) {
  const ns = options.namespace ?? 'http://webservices.sil.com/';
  const param = options.qualified ? 'ns:xml' : 'xml';
  const body =
    `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><ns:${operation} xmlns:ns="${ns}">` +
    `<${param}><![CDATA[${xml}]]></${param}></ns:${operation}></soap:Body></soap:Envelope>`;
  const res = await request(`${env.url}/municipal/siltecnologia/producaorestrita`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
    body,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

const unescapeXml = (raw: string) =>
  raw.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&amp;', '&');
const retornoOf = (text: string) => unescapeXml(/<return>([\s\S]*)<\/return>/.exec(text)?.[1] ?? '');

describe('SIL/TBW sandbox', () => {
  it('issues an NFSe signed on infNFSe with exclusive C14N and answers PROCESSADO_COM_SUCESSO with number and key', async () => {
    const res = await soap('NotaFiscalNacionalGerar', sign(unsigned(), 'exclusive', 'infNFSe'));
    expect(res.status).toBe(200);
    expect(res.text).toContain('NotaFiscalNacionalGerarResponse');
    const retorno = retornoOf(res.text);
    expect(retorno).toContain('<Status>PROCESSADO_COM_SUCESSO</Status>');
    expect(retorno).toMatch(/<chaveAcesso>\d{50}<\/chaveAcesso>/);
    expect(retorno).toMatch(/<nNFSe>\d+<\/nNFSe>/);
  });

  it('refuses the inclusive C14N signature with "Falha na validação da assinatura"', async () => {
    const res = await soap('NotaFiscalNacionalGerar', sign(unsigned(), 'inclusive', 'infNFSe'));
    const retorno = retornoOf(res.text);
    expect(retorno).toContain('<Status>ERRO</Status>');
    expect(retorno).toContain('Falha na validação da assinatura');
  });

  it('refuses an infNFSe Id that is not the provisional key of the DPS emitter', async () => {
    const wrong = unsigned().replace(/Id="NFS(\d{7})1/, 'Id="NFS$12');
    const retorno = retornoOf((await soap('NotaFiscalNacionalGerar', sign(wrong, 'exclusive', 'infNFSe'))).text);
    expect(retorno).toContain('<Status>ERRO</Status>');
    expect(retorno).toContain('<codigo>E0004</codigo>');
  });

  it('refuses a DPS without NBS', async () => {
    const invoice = normalized(project);
    const withoutNbs = unsigned({ ...invoice, servico: { ...invoice.servico, nbs: null } });
    expect(withoutNbs).not.toContain('<cNBS>');
    const retorno = retornoOf((await soap('NotaFiscalNacionalGerar', sign(withoutNbs, 'exclusive', 'infNFSe'))).text);
    expect(retorno).toContain('<codigo>E0318</codigo>');
  });

  it('answers a SOAP Fault for an unknown operation or a qualified <xml> part', async () => {
    const other = await soap('NotaFiscalNacionalGerar', '<x/>', { namespace: 'http://example.com/' });
    expect(other.status).toBe(500);
    expect(other.text).toContain('<faultcode>soap:Client</faultcode>');
    const qualified = await soap('NotaFiscalNacionalGerar', '<x/>', { qualified: true });
    expect(qualified.text).toContain('não qualificado');
  });

  it('answers consultations double-escaped, signed on the whole document by the consulente', async () => {
    const signed = sign(unsigned(), 'exclusive', 'infNFSe');
    const issued = retornoOf((await soap('NotaFiscalNacionalGerar', signed)).text);
    const chave = /<chaveAcesso>(\d{50})<\/chaveAcesso>/.exec(issued)?.[1];
    const consulta = `<ConsultaNFSe><consulente><CNPJ>${project.cnpj}</CNPJ></consulente><chaveAcesso>${chave}</chaveAcesso></ConsultaNFSe>`;
    const res = await soap('NotaFiscalNacionalConsultar', sign(consulta, 'exclusive'));
    expect(res.text).toContain('&amp;lt;Retorno&amp;gt;');
    expect(unescapeXml(retornoOf(res.text))).toContain(`<chaveAcesso>${chave}</chaveAcesso>`);
    const inclusive = await soap('NotaFiscalNacionalConsultar', sign(consulta, 'inclusive'));
    expect(unescapeXml(retornoOf(inclusive.text))).toContain('Falha na validação da assinatura');
  });
});
