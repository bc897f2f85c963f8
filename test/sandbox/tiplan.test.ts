import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { tiplanDefinition } from '../../src/engines/dps-provider/sefin-clone.ts';
import { type OperationRequest, type SendContext, UnknownEndpointError } from '../../src/engines/kit/family.ts';
import type { HttpAnswer } from '../../src/engines/kit/http-client.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SandboxServer, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { createSefinCloneService } from '../../src/sandbox/sefin-clone/service.ts';
import { TIPLAN_INVALID_REQUEST, TIPLAN_UNAUTHORIZED } from '../../src/sandbox/sefin-clone/tiplan.ts';
import { gzipBase64 } from '../../src/xml/transport-encoding.ts';

/** Tiplan's paths and `{"Message"}` errors in the Sefin-clone sandbox, and where the definition sends what. */

let dir: string;
let server: SandboxServer;
let withCert: Agent;
let withoutCert: Agent;
let certificate: SendContext['certificate'];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tiplan-sandbox-'));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  const files = createA1Certificate({
    cnpj: '11222333000181',
    name: 'EMPRESA',
    password: 'x',
    issuer: createCertificateAuthority('AC Teste'),
  });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  certificate = read.value;
  const deps = { signer: identity.signer, now: () => new Date(), logger: { info() {}, warn() {} }, dataDir: null };
  server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [createSefinCloneService('tiplan', deps)],
  });
  withCert = new Agent({ connect: { key: read.value.keyPem, cert: read.value.certPem, ca: identity.caPem } });
  withoutCert = new Agent({ connect: { ca: identity.caPem } });
});
afterAll(async () => {
  await withCert?.close();
  await withoutCert?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const call = async (method: 'GET' | 'POST', path: string, dispatcher: Agent, body?: string) => {
  const res = await request(`${server.url}/municipal/tiplan/producaorestrita${path}`, {
    method,
    dispatcher,
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined ? { body } : {}),
  });
  return { status: res.statusCode, json: JSON.parse(await res.body.text()) as Record<string, unknown> };
};

describe('the Tiplan sandbox', () => {
  it('answers {"Message"} to a body without dpsXmlGZipB64 and to a request without a client certificate', async () => {
    expect(await call('POST', '/recepcao', withCert, 'not json')).toEqual({
      status: 400,
      json: { Message: TIPLAN_INVALID_REQUEST },
    });
    expect(await call('POST', '/evento', withCert, '{"pedidoRegistroEventoXmlGZipB64":""}')).toEqual({
      status: 400,
      json: { Message: TIPLAN_INVALID_REQUEST },
    });
    const body = JSON.stringify({ dpsXmlGZipB64: gzipBase64('<DPS/>') });
    expect(await call('POST', '/recepcao', withoutCert, body)).toEqual({
      status: 401,
      json: { Message: TIPLAN_UNAUTHORIZED },
    });
  });

  it('applies Sefin’s reception rules behind its own path (XSD: E1235)', async () => {
    const body = JSON.stringify({ dpsXmlGZipB64: gzipBase64('<DPS xmlns="http://www.sped.fazenda.gov.br/nfse"/>') });
    const res = await call('POST', '/recepcao', withCert, body);
    expect(res.status).toBe(400);
    expect((res.json.erros as { codigo: string }[])[0]?.codigo).toBe('E1235');
  });

  it('does not serve Sefin’s write paths, and answers an unknown DPS number with a 404 {"Message"}', async () => {
    const sefinPath = await call('POST', '/nfse', withCert, '{}');
    expect(sefinPath.status).toBe(404);
    expect(sefinPath.json.Message).toMatch(/No HTTP resource/);
    const unknown = await call('GET', '/chave-acesso/987654', withCert);
    expect(unknown.status).toBe(404);
    expect(unknown.json.Message).toMatch(/987654/);
  });
});

describe('the Tiplan definition', () => {
  const REST = 'https://city.example/api/adn/dps/recepcao';
  const SEFIN = 'https://national.example/SefinNacional';
  const context = (emitUrl: string): SendContext => ({
    endpoints: { url: (operation) => (operation === 'query' || operation === 'queryCancellation' ? SEFIN : emitUrl) },
    ambiente: 2,
    municipality: '3302403',
    certificate,
  });
  const document = { id: `DPS330240321122233300018100001${'000000000000042'}`, xml: '<DPS><nDPS>42</nDPS></DPS>' };
  const { emit, query, cancel, queryCancellation } = tiplanDefinition.operations;

  it('is registered with the national lookups of its .ini', () => {
    expect(tiplanDefinition.provider).toBe('Tiplan');
    expect(tiplanDefinition.nationalOperations).toEqual(['query', 'queryCancellation']);
  });

  it('posts the DPS to the city’s Recepcionar and the event to …/evento (no key in the path)', () => {
    if (!('request' in emit) || !cancel || !('request' in cancel.operation)) throw new Error('shape');
    expect(emit.request(document, context(REST)).url).toBe(REST);
    const chave = '3'.repeat(50);
    const input = {
      issued: { chave, numero: '1', verificationCode: null, ambiente: 2 as const, providerCnpj: '1' },
      reason: null,
    };
    const event = cancel.operation.request({ signed: '<pedRegEvento/>', input }, context(REST));
    expect(event.url).toBe('https://city.example/api/adn/dps/evento');
    expect(JSON.parse(event.body ?? '{}')).toHaveProperty('pedidoRegistroEventoXmlGZipB64');
  });

  it('looks the key up at …/chave-acesso/{nDPS} and reads cancellations at Sefin Nacional', async () => {
    if (!('exchange' in query) || !queryCancellation || !('exchange' in queryCancellation)) throw new Error('shape');
    const sent: string[] = [];
    const send = async (req: OperationRequest): Promise<HttpAnswer> => {
      sent.push(`${req.method} ${req.url}`);
      return { kind: 'response', status: 404, headers: {}, body: '{"Message":"DPS não encontrada."}' };
    };
    expect(await query.exchange(document, context(REST), send)).toEqual({ kind: 'ok', value: null });
    const issued = { chave: '3'.repeat(50), numero: '1', verificationCode: null, ambiente: 2 as const };
    expect(await queryCancellation.exchange(issued, context(REST), send)).toEqual({ kind: 'ok', value: null });
    expect(sent).toEqual([
      'GET https://city.example/api/adn/dps/chave-acesso/42',
      `GET ${SEFIN}/nfse/${'3'.repeat(50)}/eventos/101101/1`,
    ]);
  });

  it('refuses a city whose Recepcionar is an ABRASF SOAP service (ENGINE_ENDPOINT_UNKNOWN)', () => {
    if (!('request' in emit)) throw new Error('shape');
    expect(() => emit.request(document, context('https://city.example/nfse/WSNacional/nfse.asmx'))).toThrow(
      UnknownEndpointError,
    );
  });
});
