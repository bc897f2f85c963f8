import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EGOVERNE_NS, notaFiscalXml, withAccessKey } from '../../src/engines/own-layout/egoverneiss.ts';
import { type SandboxServer, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { createEGoverneIssService } from '../../src/sandbox/own-layout/egoverneiss.ts';
import { normalized } from '../conformance/raw-xml-env.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The eGoverneISS sandbox on the wire (plain HTTP, as the provider takes no client certificate): the access key, the
 * data-contract order, the environment flag, the ISS rate bounds, a receipt number used once, the query by receipt
 * and the cancellation (a second one refused as already cancelled).
 */
const KEY = 'chave-teste-0001';
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3534401',
  inscricaoMunicipal: '123456',
  ...IBS_CBS_FRAMING,
});
let server: SandboxServer;
let number = 100;

const nota = (overrides: { ambiente?: 1 | 2 } = {}) =>
  withAccessKey(
    notaFiscalXml({
      project: { ...project, ambiente: overrides.ambiente ?? 2 },
      invoice: normalized(project, { valores: { total: 1000, aliquotaIss: 2 } }),
      number: ++number,
      issuedAt: new Date(),
    }),
    KEY,
  );

async function call(
  operation: string,
  request: string,
  action = `http://tempuri.org/INotaFiscalEletronicaServico/${operation}`,
) {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">' +
    `<soap:Body><tem:${operation} xmlns:tem="${EGOVERNE_NS.tem}"><tem:request>${request}</tem:request>` +
    `</tem:${operation}></soap:Body></soap:Envelope>`;
  const res = await fetch(`${server.url}/municipal/egoverneiss/producaorestrita`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` },
    body,
  });
  return { status: res.status, text: await res.text() };
}
const tag = (text: string, name: string) => new RegExp(`<a:${name}>([^<]*)</a:${name}>`).exec(text)?.[1];
const eis = (name: string, value: string) => `<eis:${name} xmlns:eis="${EGOVERNE_NS.eis}">${value}</eis:${name}>`;

beforeAll(async () => {
  server = await startSandboxServer({
    transport: { kind: 'http' },
    services: [
      createEGoverneIssService({
        signer: null as never,
        now: () => new Date(),
        logger: { info() {}, warn() {} },
        dataDir: null,
      }),
    ],
  });
  await fetch(`${server.url}/__sandbox/egoverneiss/settings`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ keys: { [KEY]: { simplesNacional: false } } }),
  });
});
afterAll(async () => server?.close());

describe('eGoverneISS sandbox', () => {
  it('issues a well-formed note, once per receipt, finds it by receipt and cancels it once', async () => {
    const xml = nota();
    const issued = await call('RTC_EmitirNFE', xml);
    expect(tag(issued.text, 'Erro')).toBe('false');
    const numero = tag(issued.text, 'Numero');
    expect(numero).toMatch(/^\d+$/);
    const again = await call('RTC_EmitirNFE', xml);
    expect(tag(again.text, 'MensagemErro')).toMatch(/já utilizado/);
    const found = await call(
      'RTC_ConsultarNFE',
      eis('ChaveAutenticacao', KEY) + eis('NumeroReciboUnico', String(number)),
    );
    expect(tag(found.text, 'Numero')).toBe(numero);
    const cancel = eis('ChaveAutenticacao', KEY) + eis('Homologacao', 'true') + eis('NumeroNota', numero!);
    expect(tag((await call('Cancelar', cancel)).text, 'Erro')).toBe('false');
    expect(tag((await call('Cancelar', cancel)).text, 'MensagemErro')).toMatch(/já está cancelada/);
  });

  it('refuses what the service would refuse: key, order, environment, rate, SOAPAction', async () => {
    const unknownKey = await call('RTC_EmitirNFE', nota().replace(KEY, 'outra-chave'));
    expect(tag(unknownKey.text, 'MensagemErro')).toMatch(/Chave de autenticação/);
    const swapped = nota().replace(
      /(<eis1:Aliquota>[^<]*<\/eis1:Aliquota>)(<eis1:Atividade>[^<]*<\/eis1:Atividade>)/,
      '$2$1',
    );
    const order = await call('RTC_EmitirNFE', swapped);
    expect(order.status).toBe(500);
    expect(order.text).toMatch(/fora da ordem/);
    expect(tag((await call('RTC_EmitirNFE', nota({ ambiente: 1 }))).text, 'MensagemErro')).toMatch(/ambiente/);
    const low = nota().replace(/<eis1:Aliquota>[^<]*</, '<eis1:Aliquota>1.0000<');
    expect(tag((await call('RTC_EmitirNFE', low)).text, 'MensagemErro')).toMatch(/2% e 5%/);
    const action = await call('RTC_EmitirNFE', nota(), 'http://tempuri.org/Outra');
    expect(action.status).toBe(500);
    const missing = await call('RTC_EmitirNFE', nota().replace(/<eis1:Valor>[^<]*<\/eis1:Valor>/, ''));
    expect(tag(missing.text, 'MensagemErro')).toMatch(/Valor é obrigatório/);
  });
});
