import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EQUIPLANO_NS, loteXml } from '../../src/engines/own-layout/equiplano.ts';
import { createEquiplanoService } from '../../src/sandbox/own-layout/equiplano.ts';
import { signXml } from '../../src/xml/sign.ts';
import { normalized, startRawXmlSandbox } from '../conformance/raw-xml-env.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The Equiplano sandbox on the wire (HTTPS with the client certificate): unsigned or reordered messages refused
 * (101, 100), a lot whose ISS value does not follow base × rate processed with errors (stLote 2, 201), a lot number
 * received once (104), and no client certificate, no service (403).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4127700',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});
let env: Awaited<ReturnType<typeof startRawXmlSandbox>>;
let number = 5000;

const lote = () =>
  loteXml({ project, invoice: normalized(project), serie: '1', number: ++number, issuedAt: new Date() });
const sign = (xml: string) =>
  signXml(xml, { key: { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem } });
const escaped = (xml: string) => xml.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

async function call(operation: string, xml: string, dispatcher: Agent = env.admin) {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">' +
    `<soap:Body><ser:${operation} xmlns:ser="http://services.enfsws.es"><ser:nrVersaoXml>1</ser:nrVersaoXml>` +
    `<ser:xml>${escaped(xml)}</ser:xml></ser:${operation}></soap:Body></soap:Envelope>`;
  const res = await request(`${env.url}/municipal/equiplano/producaorestrita`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"urn:${operation}"` },
    body,
  });
  const text = (await res.body.text()).replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
  return { status: res.statusCode, text };
}
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
const prestador = `<prestador><nrInscricaoMunicipal>12345</nrInscricaoMunicipal><cnpj>${project.cnpj}</cnpj><idEntidade>136</idEntidade></prestador>`;

beforeAll(async () => {
  env = await startRawXmlSandbox({ project, slug: 'equiplano', create: (deps) => createEquiplanoService(deps) });
});
afterAll(async () => env?.close());

describe('Equiplano sandbox', () => {
  it('refuses an unsigned lot (101) and a signed one whose members are out of order (100)', async () => {
    expect(tag((await call('esRecepcionarLoteRps', lote())).text, 'cdMensagem')).toBe('101');
    const swapped = lote().replace(/(<nrLote>\d+<\/nrLote>)(<qtRps>1<\/qtRps>)/, '$2$1');
    const answer = await call('esRecepcionarLoteRps', sign(swapped));
    expect(tag(answer.text, 'cdMensagem')).toBe('100');
    expect(tag(answer.text, 'dsMensagem')).toMatch(/fora de ordem/);
  });

  it('processes a lot whose ISS value is wrong with errors (stLote 2, 201) and takes a lot number once (104)', async () => {
    const wrong = lote().replace(/<vlIssServico>[^<]*</, '<vlIssServico>1.00<');
    const received = await call('esRecepcionarLoteRps', sign(wrong));
    const protocolo = tag(received.text, 'nrProtocolo');
    expect(protocolo).toMatch(/^\d+$/);
    const query = `${prestador}<nrProtocolo>${protocolo}</nrProtocolo>`;
    const state = await call(
      'esConsultarSituacaoLoteRps',
      sign(
        `<es:esConsultarSituacaoLoteRpsEnvio xmlns:es="${EQUIPLANO_NS}">${query}</es:esConsultarSituacaoLoteRpsEnvio>`,
      ),
    );
    expect(tag(state.text, 'stLote')).toBe('2');
    const lot = await call(
      'esConsultarLoteRps',
      sign(`<es:esConsultarLoteRpsEnvio xmlns:es="${EQUIPLANO_NS}">${query}</es:esConsultarLoteRpsEnvio>`),
    );
    expect(tag(lot.text, 'cdMensagem')).toBe('201');
    expect(tag((await call('esRecepcionarLoteRps', sign(wrong))).text, 'cdMensagem')).toBe('104');
  });

  it('serves nobody without a client certificate (403)', async () => {
    const anonymous = new Agent({ connect: { ca: env.caPem } });
    try {
      const answer = await call('esRecepcionarLoteRps', sign(lote()), anonymous);
      expect(answer.status).toBe(403);
    } finally {
      await anonymous.destroy();
    }
  });
});
