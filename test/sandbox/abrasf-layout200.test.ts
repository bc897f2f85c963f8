import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { GOVDIGITAL_CONFIG } from '../../src/engines/abrasf-v2/providers/govdigital.ts';
import { PRODATA_CONFIG } from '../../src/engines/abrasf-v2/providers/prodata.ts';
import { SINTESE_CONFIG } from '../../src/engines/abrasf-v2/providers/sintese.ts';
import type { OperationRequest, SendContext } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import type { PreparedDocument } from '../../src/engines/types.ts';
import { GOVDIGITAL_PROFILE } from '../../src/sandbox/abrasf-v2/baseline.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The official ABRASF 2.00 layout (nfse v2.00 XSD) in the base and the sandbox: GovDigital writes it for its 2.00
 * cities (Araguari, 3103504) and 2.01 for the others (Guaxupé, 3128709); the sandbox validates each message against
 * the XSD of the cabecalho's versaoDados, so a 2.01 RPS announced as 2.00 is refused (E160). Sintese's envelope: the
 * operation element named after the message root.
 */
const ABRASF = 'http://www.abrasf.org.br/nfse.xsd';
const profileOf = (codigoMunicipio: string) =>
  fiscalProfile({
    ambiente: 2,
    codigoMunicipio,
    regimeTributario: '3',
    aliquotaSimples: 6,
    inscricaoMunicipal: '123456',
  });
const araguari = profileOf('3103504');
const guaxupe = profileOf('3128709');
const family = defineAbrasfProvider(GOVDIGITAL_CONFIG);
let numbers = 700_000 + (Date.now() % 100_000);
let env: Awaited<ReturnType<typeof startAbrasfSandbox>>;
let http: GovernmentHttpClient;

beforeAll(async () => {
  env = await startAbrasfSandbox(GOVDIGITAL_PROFILE, araguari);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

const rpsFor = (project: ReturnType<typeof profileOf>) =>
  family.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: ++numbers,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  }).xml;

const escapeText = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
async function gerar(versao: string, signedRps: string) {
  const cabec = `<cabecalho versao="${versao}" xmlns="${ABRASF}"><versaoDados>${versao}</versaoDados></cabecalho>`;
  const body =
    `<nfse:GerarNfseRequest xmlns:nfse="http://nfse.abrasf.org.br"><nfseCabecMsg>${escapeText(cabec)}</nfseCabecMsg>` +
    `<nfseDadosMsg>${escapeText(`<GerarNfseEnvio xmlns="${ABRASF}">${signedRps}</GerarNfseEnvio>`)}</nfseDadosMsg></nfse:GerarNfseRequest>`;
  const answer = await http.send(env.certificate, 'POST', `${env.url}/municipal/abrasf-govdigital/producaorestrita`, {
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`,
  });
  if (answer.kind !== 'response') throw new Error(answer.reason);
  return [...answer.body.matchAll(/&lt;Codigo&gt;(\w+)&lt;\/Codigo&gt;/g)].map((m) => m[1]);
}

describe('the ABRASF 2.00 layout (GovDigital per city)', () => {
  it('writes the 2.00 RPS for a 2.00 city: Id and Reference on the inner Rps, dateTime dates, its own XSD', () => {
    const xml = rpsFor(araguari);
    expect(xml).toContain('<InfDeclaracaoPrestacaoServico><Rps Id="RPS');
    expect(xml).toMatch(/<DataEmissao>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d<\/DataEmissao>/);
    expect(xml).toMatch(/<Competencia>\d{4}-\d\d-01T00:00:00<\/Competencia>/);
    expect(xml).toMatch(/<\/InfDeclaracaoPrestacaoServico><Signature [^>]*>.*<Reference URI="#RPS/);
    const view = `<GerarNfseEnvio xmlns="${ABRASF}">${xml}</GerarNfseEnvio>`;
    expect(validateXml('abrasf200', view)).toEqual({ ok: true });
    expect(validateXml('abrasf201', view).ok).toBe(false);
    expect(family.declaration.schemaFor?.(xml)).toBe('abrasf200');
  });

  it('writes the 2.01 RPS for a 2.01 city, and the cabecalho and lote carry each city’s version', () => {
    const xml = rpsFor(guaxupe);
    expect(xml).toContain('<InfDeclaracaoPrestacaoServico Id="RPS');
    expect(family.declaration.schemaFor?.(xml)).toBe('abrasf201');
    type Built = { request(input: PreparedDocument, context: SendContext): OperationRequest };
    const send = (municipality: string, doc: string) =>
      (family.operations.emit as Built).request({ id: 'x', xml: doc } as PreparedDocument, {
        endpoints: { url: () => 'https://ws.homolog.nfe-cidades.com.br/ws/x' },
        ambiente: 2,
        municipality,
        certificate: env.certificate,
      }).body ?? '';
    expect(send('3103504', rpsFor(araguari))).toContain('versaoDados&gt;2.00&lt;');
    expect(send('3128709', xml)).toContain('versaoDados&gt;2.01&lt;');
    expect(family.check(araguari, normalized(araguari))).toEqual([]);
  });

  it('the sandbox issues a 2.00 RPS under versaoDados 2.00 and refuses a 2.01 RPS announced as 2.00 (E160)', async () => {
    expect(await gerar('2.00', rpsFor(araguari))).toEqual([]);
    expect(await gerar('2.00', rpsFor(guaxupe))).toContain('E160');
    expect(await gerar('2.01', rpsFor(araguari))).toContain('E160');
  });

  it('Sintese: `<GerarNfseEnvio>{nfseCabecMsg, nfseDadosMsg}` and its own SOAPAction', () => {
    const sintese = defineAbrasfProvider(SINTESE_CONFIG);
    type Built = { request(input: PreparedDocument, context: SendContext): OperationRequest };
    const request = (sintese.operations.query as Built).request({ id: 'x', xml: rpsFor(guaxupe) } as PreparedDocument, {
      endpoints: { url: () => 'https://homologacao.sintesetecnologia.com.br/nfsews/NfseWS' },
      ambiente: 2,
      municipality: '3135100',
      certificate: env.certificate,
    });
    expect(request.headers.soapaction).toBe('"http://nfsews.sintesetecnologia.com.br/ConsultarNfseRps"');
    expect(request.body).toMatch(/<(\w+:)?ConsultarNfseRpsEnvio[^>]*><nfseCabecMsg>/);
  });

  it('Prodata: the five federal values and Aliquota always, no ValorIss (ACBr Prodata.GravarXml)', () => {
    const prodata = defineAbrasfProvider(PRODATA_CONFIG);
    const project = profileOf('5212501');
    const xml = prodata.declaration.build({
      project,
      invoice: normalized(project),
      serie: '1',
      number: ++numbers,
      issuedAt: new Date(Date.now() - 60_000),
      certificate: env.certificate,
    }).xml;
    expect(xml).toMatch(
      /<Valores><ValorServicos>[\d.]+<\/ValorServicos><ValorPis>0\.00<\/ValorPis><ValorCofins>0\.00<\/ValorCofins><ValorInss>0\.00<\/ValorInss><ValorIr>0\.00<\/ValorIr><ValorCsll>0\.00<\/ValorCsll><Aliquota>[\d.]+<\/Aliquota><\/Valores>/,
    );
    expect(prodata.capabilities.mode).toBe('async');
  });
});
