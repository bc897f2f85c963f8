import { request } from 'undici';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saoPauloFamily } from '../../src/engines/sao-paulo/family.ts';
import { rpsSignatureString } from '../../src/engines/sao-paulo/messages.ts';
import { saoPauloSandbox } from '../../src/sandbox/sao-paulo/service.ts';
import { signXml } from '../../src/xml/sign.ts';
import { normalized, startMunicipalSandbox } from '../conformance/soap-string-support.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The São Paulo sandbox's own rules over raw SOAP: the manual's v2 signature string, the SOAPAction, the client
 * certificate, the RPS signature (1206), ValorInicialCobrado (640), the remetente (1100) and the schema (1001).
 */
const project = fiscalProfile({
  ambiente: 1,
  codigoMunicipio: '3550308',
  inscricaoMunicipal: '31000000',
  codigoServicoSp: '02658',
  ...IBS_CBS_FRAMING,
});
const NS = 'http://www.prefeitura.sp.gov.br/nfe';

let env: Awaited<ReturnType<typeof startMunicipalSandbox>>;
let agent: Agent;
let number = 700_000 + (Date.now() % 100_000);

beforeAll(async () => {
  env = await startMunicipalSandbox(saoPauloSandbox, project);
  agent = new Agent({
    connect: { ca: env.caPem, key: env.certificate.keyPem, cert: env.certificate.certPem },
  });
});
afterAll(async () => {
  await agent?.close();
  await env?.close();
});

function unsigned(): string {
  return saoPauloFamily.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: ++number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  }).xml;
}

const sign = (xml: string) =>
  signXml(xml, {
    key: { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem },
    algorithm: 'rsa-sha1',
  });

const escapeXmlString = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const unescapeXmlString = (s: string) =>
  s.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&amp;', '&');

async function envio(xml: string, options: { action?: string; dispatcher?: Agent } = {}) {
  const body =
    `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><EnvioRPSRequest xmlns="${NS}">` +
    `<VersaoSchema>2</VersaoSchema><MensagemXML>${escapeXmlString(xml)}</MensagemXML></EnvioRPSRequest></soap:Body></soap:Envelope>`;
  const res = await request(`${env.url}/municipal/isssaopaulo/producao`, {
    method: 'POST',
    dispatcher: options.dispatcher ?? agent,
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${options.action ?? `${NS}/ws/envioRPS`}"` },
    body,
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    text,
    retorno: unescapeXmlString(/<RetornoXML>([\s\S]*)<\/RetornoXML>/.exec(text)?.[1] ?? ''),
  };
}

describe('São Paulo sandbox (lotenfe.asmx)', () => {
  it("composes the manual's v2 RPS signature string (90 characters, CCM 12, ValorFinalCobrado in cents)", () => {
    const value = rpsSignatureString({
      ccm: '123456789012',
      serie: 'RTNT',
      numero: 1,
      dataEmissao: '2026-01-01',
      tributacao: 'T',
      status: 'N',
      issRetido: false,
      valorFinalCobrado: 20500,
      valorDeducoes: 5000,
      codigoServico: '2658',
      tomador: { kind: 'cpf', cpf: '13167474254' },
    });
    expect(value).toBe('123456789012RTNT 00000000000120260101TNN00000000205000000000000050000002658100013167474254');
    expect(value).toHaveLength(90);
    const nif = rpsSignatureString({
      ccm: '123456789012',
      serie: 'RTNT',
      numero: 1,
      dataEmissao: '2026-01-01',
      tributacao: 'T',
      status: 'N',
      issRetido: false,
      valorFinalCobrado: 20500,
      valorDeducoes: 5000,
      codigoServico: '2658',
      tomador: { kind: 'nif', nif: 'W123456789' },
    });
    expect(nif.endsWith('2658400000000000000W123456789')).toBe(true);
  });

  it('issues a signed PedidoEnvioRPS and answers an escaped RetornoEnvioRPS with the ChaveNFe', async () => {
    const res = await envio(sign(unsigned()));
    expect(res.status).toBe(200);
    expect(res.text).toContain('EnvioRPSResponse');
    expect(res.retorno).toContain('<Sucesso>true</Sucesso>');
    expect(res.retorno).toMatch(/<NumeroNFe>\d+<\/NumeroNFe><CodigoVerificacao>\w{8}<\/CodigoVerificacao>/);
  });

  it('refuses a wrong SOAPAction with a SOAP fault, and a call without a client certificate', async () => {
    const wrong = await envio(sign(unsigned()), { action: `${NS}/ws/envioLoteRPS` });
    expect(wrong.status).toBe(500);
    expect(wrong.text).toContain('SOAPAction');
    const anonymous = new Agent({ connect: { ca: env.caPem } });
    try {
      const res = await envio(sign(unsigned()), { dispatcher: anonymous });
      expect(res.status).toBe(403);
    } finally {
      await anonymous.close();
    }
  });

  it('refuses a tampered RPS signature string (1206) and ValorInicialCobrado (640)', async () => {
    const tampered = unsigned().replace(
      /<Assinatura>[^<]+<\/Assinatura>/,
      `<Assinatura>${Buffer.alloc(256, 1).toString('base64')}</Assinatura>`,
    );
    expect((await envio(sign(tampered))).retorno).toContain('<Codigo>1206</Codigo>');
    const inicial = unsigned().replace(/ValorFinalCobrado>/g, 'ValorInicialCobrado>');
    expect((await envio(sign(inicial))).retorno).toContain('<Codigo>640</Codigo>');
  });

  it('refuses a remetente other than the TLS certificate (1100) and an unsigned or schema-invalid message (1057, 1001)', async () => {
    const other = unsigned().replace(/<CPFCNPJRemetente><CNPJ>\d+</, '<CPFCNPJRemetente><CNPJ>11444777000161<');
    const remetente = await envio(sign(other));
    expect(remetente.retorno, remetente.retorno).toContain('<Codigo>1100</Codigo>');
    expect((await envio(unsigned())).retorno).toContain('<Codigo>1001</Codigo>');
    const sha256 = signXml(unsigned(), {
      key: { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem },
      algorithm: 'rsa-sha256',
    });
    expect((await envio(sha256)).retorno).toContain('<Codigo>1057</Codigo>');
  });
});
