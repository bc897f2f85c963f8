import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { readCloneQuirks, simplissDefinition } from '../../src/engines/dps-provider/sefin-clone.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SandboxServer, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { createSefinCloneService, SIMPLISS_NON_JSON_BODY } from '../../src/sandbox/sefin-clone/service.ts';
import { gzipBase64 } from '../../src/xml/transport-encoding.ts';

/** The Sefin-clone sandbox's own rules and quirks, and how the engine definitions read them. */

let dir: string;
let server: SandboxServer;
let caPem: string;
let withCert: Agent;
let withoutCert: Agent;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sefin-clone-sandbox-'));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  caPem = identity.caPem;
  const files = createA1Certificate({
    cnpj: '11222333000181',
    name: 'EMPRESA',
    password: 'x',
    issuer: createCertificateAuthority('AC Teste'),
  });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  const deps = { signer: identity.signer, now: () => new Date(), logger: { info() {}, warn() {} }, dataDir: null };
  server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [createSefinCloneService('simpliss', deps), createSefinCloneService('rlz', deps)],
  });
  withCert = new Agent({ connect: { key: read.value.keyPem, cert: read.value.certPem, ca: caPem } });
  withoutCert = new Agent({ connect: { ca: caPem } });
});
afterAll(async () => {
  await withCert?.close();
  await withoutCert?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const post = async (path: string, body: string, dispatcher: Agent) => {
  const res = await request(`${server.url}${path}`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
};

describe('the Sefin-clone sandbox', () => {
  it('answers SimplISS’s non-JSON 400 to a body that is not JSON, and Sefin’s E1225 elsewhere', async () => {
    const simpliss = await post('/municipal/simpliss/producaorestrita/nfse', 'not json', withCert);
    expect(simpliss.status).toBe(400);
    expect(simpliss.type).toContain('text/plain');
    expect(simpliss.text).toBe(SIMPLISS_NON_JSON_BODY);
    const rlz = await post('/municipal/rlz/producaorestrita/nfse', 'not json', withCert);
    expect(rlz.status).toBe(400);
    expect(JSON.parse(rlz.text).erros[0].codigo).toBe('E1225');
  });

  it('requires the client certificate (mTLS), as Sefin does', async () => {
    const body = JSON.stringify({ dpsXmlGZipB64: gzipBase64('<DPS/>') });
    const res = await post('/municipal/rlz/producaorestrita/nfse', body, withoutCert);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text).erros[0].codigo).toBe('E1200');
  });

  it('validates the DPS against the official XSD', async () => {
    const body = JSON.stringify({ dpsXmlGZipB64: gzipBase64('<DPS xmlns="http://www.sped.fazenda.gov.br/nfse"/>') });
    const res = await post('/municipal/simpliss/producaorestrita/nfse', body, withCert);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).erros[0].codigo).toBe('E1235');
  });
});

describe('the Sefin-clone definitions', () => {
  const answer = (status: number, body: string) => ({ kind: 'response' as const, status, headers: {}, body });

  it('read a 4xx that is not JSON as unknown (it may have been processed), never as a rejection', () => {
    expect(readCloneQuirks('SimplISS', answer(400, SIMPLISS_NON_JSON_BODY))?.kind).toBe('unknown');
    expect(readCloneQuirks('SimplISS', answer(502, '<html>Bad gateway</html>'))).toBeNull();
    expect(readCloneQuirks('SimplISS', answer(400, '{"erros":[{"codigo":"E0006"}]}'))).toBeNull();
  });

  it('read an ASP.NET {"Message"} 4xx as the E9999 refusal ACBr makes of it', () => {
    const outcome = readCloneQuirks('Tiplan', answer(400, '{"Message":"The request is invalid."}'));
    expect(outcome).toMatchObject({ kind: 'rejected', errorCode: 'E9999', errorMessage: 'The request is invalid.' });
  });

  it('never send a Sefin-clone request to a city whose registry URL is an ABRASF SOAP service', async () => {
    const http = new GovernmentHttpClient({ connectMs: 500, responseMs: 500 }, caPem);
    try {
      const engine = createEngine(simplissDefinition, {
        http,
        endpoints: { url: () => 'http://wsherculandia.simplissweb.com.br/nfseservice.svc' },
        signatureAlgorithm: 'rsa-sha256',
        validateBeforeSend: false,
      });
      const files = createA1Certificate({ cnpj: '11222333000181', name: 'E', password: 'x' });
      const read = readPkcs12(files.pfx, files.password);
      if (!read.ok) throw new Error(read.error.message);
      const outcome = await engine.issue(
        { id: 'DPS', xml: '<DPS/>' },
        { certificate: read.value, ambiente: 1, municipality: '3519006' },
      );
      expect(outcome).toMatchObject({ kind: 'rejected', errorCode: 'ENGINE_ENDPOINT_UNKNOWN' });
    } finally {
      await http.close();
    }
  });
});
