import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxServer, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { createBauhausService } from '../../src/sandbox/own-layout/bauhaus.ts';
import { createElLegacyService } from '../../src/sandbox/own-layout/el.ts';

/**
 * The own-layout sandboxes refuse what their providers refuse, with hand-written messages: EL legacy
 * (RpsServiceService: password, session, the LoteRps XSD, the lote's prestador) and Bauhaus (the authorization key,
 * the documented DadosNota structure, the key's inscrição municipal).
 */
const CNPJ = '11222333000181';
const EL_NS = 'http://des36.el.com.br:8080/el-issonline/';
let server: SandboxServer;
let base: string;

const deps = { signer: null as never, now: () => new Date(), logger: { info() {}, warn() {} }, dataDir: null };

async function soap(operation: string, params: string) {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">' +
    `<soap:Body><ns:${operation} xmlns:ns="${EL_NS}">${params}</ns:${operation}></soap:Body></soap:Envelope>`;
  const res = await fetch(`${base}/municipal/own-layout-el/producaorestrita`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const returnOf = (text: string) => /<return>([\s\S]*)<\/return>/.exec(text)?.[1] ?? '';

async function bauhaus(path: string, body: unknown, key: string | null = 'chave') {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = key;
  const res = await fetch(`${base}/municipal/own-layout-bauhaus/producaorestrita${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, Record<string, unknown>> };
}

beforeAll(async () => {
  server = await startSandboxServer({
    transport: { kind: 'http' },
    services: [createElLegacyService(deps), createBauhausService(deps)],
  });
  base = server.url;
  const put = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  await put('/__sandbox/own-layout-el/settings', {
    users: { [CNPJ]: { senha: 'certa', inscricaoMunicipal: '12345' } },
  });
  await put('/__sandbox/own-layout-bauhaus/settings', { keys: { chave: { inscricaoMunicipal: '12345' } } });
});
afterAll(async () => {
  await server?.close();
});

describe('EL legacy sandbox', () => {
  it('refuses a wrong password (EL001) and opens a session with the right one', async () => {
    const wrong = await soap(
      'autenticarContribuinte',
      `<identificacaoPrestador>${CNPJ}</identificacaoPrestador><senha>x</senha>`,
    );
    expect(returnOf(wrong.text)).toContain('EL001');
    const right = await soap(
      'autenticarContribuinte',
      `<identificacaoPrestador>${CNPJ}</identificacaoPrestador><senha>certa</senha>`,
    );
    expect(returnOf(right.text)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('refuses a lote without a valid session (EL002) and a lote the XSD refuses (EL003)', async () => {
    const noSession = await soap(
      'EnviarLoteRpsEnvio',
      `<identificacaoPrestador>${CNPJ}</identificacaoPrestador><hashIdentificador>nada</hashIdentificador><arquivo>x</arquivo>`,
    );
    expect(returnOf(noSession.text)).toContain('EL002');
    const login = await soap(
      'autenticarContribuinte',
      `<identificacaoPrestador>${CNPJ}</identificacaoPrestador><senha>certa</senha>`,
    );
    const hash = returnOf(login.text);
    const invalid = `<![CDATA[<LoteRps xmlns="http://www.el.com.br/nfse/xsd/el-nfse.xsd"><Id>1</Id></LoteRps>]]>`;
    const refused = await soap(
      'EnviarLoteRpsEnvio',
      `<identificacaoPrestador>${CNPJ}</identificacaoPrestador><hashIdentificador>${hash}</hashIdentificador><arquivo>${invalid}</arquivo>`,
    );
    expect(returnOf(refused.text)).toContain('EL003');
  });

  it('answers an unknown protocol with E86 and an operation outside the service namespace with a Fault', async () => {
    const unknown = await soap(
      'ConsultarSituacaoLoteRpsEnvio',
      `<identificacaoPrestador>${CNPJ}</identificacaoPrestador><numeroProtocolo>1</numeroProtocolo>`,
    );
    expect(returnOf(unknown.text)).toContain('E86');
    const res = await fetch(`${base}/municipal/own-layout-el/producaorestrita`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><x:a xmlns:x="urn:x"/></soap:Body></soap:Envelope>',
    });
    expect(res.status).toBe(500);
    expect(await res.text()).toContain('Fault');
  });
});

describe('Bauhaus sandbox', () => {
  it('refuses a request without the authorization key (401, 001) or with an unknown one', async () => {
    expect((await bauhaus('/gerar', {}, null)).status).toBe(401);
    const unknown = await bauhaus('/gerar', {}, 'outra');
    expect(unknown.status).toBe(401);
    expect(unknown.json.Message?.Code).toBe('ERRO-001');
  });

  it('refuses a DadosNota outside the documented structure (012) and a missing DadosNota (011)', async () => {
    expect((await bauhaus('/gerar', {})).json.Message?.Code).toBe('ERRO-011');
    const bad = await bauhaus('/gerar', { DadosNota: { MunicipioPrestacao: 1501709, NaturezaOperacao: 9 } });
    expect(bad.status).toBe(400);
    expect(bad.json.Message?.Code).toBe('ERRO-012');
    expect(bad.json.Message?.DetailError).toEqual(['NaturezaOperacao']);
  });

  it('answers an unknown RPS with 404 (040) and a cancellation of an unknown note with 040', async () => {
    const res = await fetch(`${base}/municipal/own-layout-bauhaus/producaorestrita/consultar?NumeroRps=999`, {
      headers: { authorization: 'chave' },
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { Message: { Code: string } }).Message.Code).toBe('ERRO-040');
    const cancel = await bauhaus('/cancelar', { DadosNota: { Numero: 999, Cancelamento: { Motivo: 'erro' } } });
    expect(cancel.json.Message?.Code).toBe('ERRO-040');
  });
});
