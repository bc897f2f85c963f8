import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type A1CertificateFiles,
  createA1Certificate,
  createCertificateAuthority,
  issueServerCertificate,
} from '../../src/certificates/generate.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { authorizationOf, readIcpBrasilIdentity } from '../../src/sandbox/kit/client-certificate.ts';
import { type ExchangeLine, recordedBody } from '../../src/sandbox/kit/exchanges.ts';
import {
  type SandboxServer,
  type SandboxService,
  SandboxHttpError,
  startSandboxServer,
} from '../../src/sandbox/kit/server.ts';
import { startSefinSandbox } from '../../src/sandbox/sefin/server.ts';

/**
 * The sandbox kit (src/sandbox/kit/) over real HTTPS: client certificates required and verified, the exchange log,
 * injected faults, the body limit, the admin routes; plain HTTP for providers authenticating by header.
 */

const CNPJ = '11222333000181';

let dir: string;
let serverTls: { keyPem: string; certPem: string };
let serverCaPem: string;
let trusted: A1CertificateFiles;
let untrusted: A1CertificateFiles;
const agents: Agent[] = [];

function agent(cert: A1CertificateFiles | null): Agent {
  const made = new Agent({
    connect: cert ? { key: cert.keyPem, cert: cert.certPem, ca: serverCaPem } : { ca: serverCaPem },
  });
  agents.push(made);
  return made;
}

async function call(
  server: { url: string },
  dispatcher: Agent | undefined,
  method: string,
  path: string,
  body?: string,
) {
  const res = await request(`${server.url}${path}`, {
    method: method as 'GET',
    dispatcher,
    body,
    headers: { 'content-type': 'application/json', authorization: 'Basic dXNlcjpzZWNyZXQ=' },
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null };
}

function exchanges(file: string): ExchangeLine[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ExchangeLine);
}

/** A small government service: a routes table plus its rules. */
let processedWrites = 0;
const ECHO: SandboxService = {
  family: 'kit-test',
  name: 'Echo',
  mount: '/:ambiente(producao|homologacao)/echo',
  routes: [
    {
      method: 'GET',
      path: '/hello/:name',
      handler: (req) => ({
        status: 200,
        body: {
          hello: req.params.name,
          ambiente: req.params.ambiente,
          cnpj: req.clientCertificate ? readIcpBrasilIdentity(req.clientCertificate.raw).cnpj : null,
          authorized: req.clientCertificate?.authorized ?? null,
        },
      }),
    },
    {
      method: 'POST',
      path: '/items',
      handler: (req) => {
        processedWrites++;
        return { status: 201, body: { received: req.json() } };
      },
    },
    {
      method: 'GET',
      path: '/teapot',
      handler: () => {
        throw new SandboxHttpError(418, 'short and stout');
      },
    },
  ],
  notFound: (req) => ({ status: 404, body: { message: `no route ${req.method} ${req.subPath}` } }),
  errorReply: (_req, err) => ({
    status: err instanceof SandboxHttpError ? err.status : 500,
    body: { message: err.message },
  }),
  faults: { errorReply: () => ({ status: 503, body: { message: 'injected' } }) },
  admin: [
    { method: 'GET', path: '/__sandbox/echo', handler: () => ({ status: 200, body: { writes: processedWrites } }) },
  ],
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-kit-'));
  const serverCa = createCertificateAuthority('Kit Test Server CA');
  serverCaPem = serverCa.certPem;
  const issued = issueServerCertificate(serverCa, ['localhost', '127.0.0.1']);
  serverTls = { keyPem: issued.keyPem, certPem: issued.certPem };
  const clientCa = createCertificateAuthority('AC Teste Clientes');
  trusted = createA1Certificate({ cnpj: CNPJ, name: 'EMPRESA', password: 'x', issuer: clientCa });
  untrusted = createA1Certificate({ cnpj: CNPJ, name: 'EMPRESA', password: 'x' });
  // the client CA, kept for the server of the next block
  writeFileSync(join(dir, 'client-ca.pem'), clientCa.certPem);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => {})));
  rmSync(dir, { recursive: true, force: true });
});

describe('HTTPS with client certificates required', () => {
  let server: SandboxServer;
  const warnings: string[] = [];

  beforeAll(async () => {
    server = await startSandboxServer({
      transport: {
        kind: 'https',
        tls: serverTls,
        clientCertificates: 'required',
        clientCa: readFileSync(join(dir, 'client-ca.pem'), 'utf8'),
      },
      services: [ECHO],
      sandboxDir: join(dir, 'sandbox'),
      bodyLimitBytes: 1024,
      random: () => 0.5,
      logger: { info: () => {}, warn: (m) => warnings.push(m) },
    });
  });
  afterAll(() => server?.close());
  beforeEach(() => server.setFaults({}));

  it('refuses a request without a client certificate, or with one from another CA', async () => {
    await expect(call(server, agent(null), 'GET', '/producao/echo/hello/world')).rejects.toThrow();
    await expect(call(server, agent(untrusted), 'GET', '/producao/echo/hello/world')).rejects.toThrow();
    const answer = await call(server, agent(trusted), 'GET', '/producao/echo/hello/mundo%20novo');
    expect(answer).toMatchObject({
      status: 200,
      body: { hello: 'mundo novo', ambiente: 'producao', cnpj: CNPJ, authorized: true },
    });
  });

  it('records each exchange (request and answer) in <sandboxDir>/<family>/exchanges.jsonl, 0600 in a 0700 dir', async () => {
    const client = agent(trusted);
    await call(server, client, 'POST', '/homologacao/echo/items?x=1', JSON.stringify({ name: 'á' }));
    const missing = await call(server, client, 'GET', '/homologacao/echo/nothing/here');
    expect(missing).toMatchObject({ status: 404, body: { message: 'no route GET /nothing/here' } });
    expect((await call(server, client, 'GET', '/homologacao/echo/teapot')).status).toBe(418);
    // outside every mount, and admin routes: answered, not recorded
    const outside = await call(server, client, 'GET', '/elsewhere');
    expect(outside).toEqual({
      status: 404,
      headers: expect.anything(),
      body: { error: 'use /{producao|homologacao}/echo/…' },
    });
    expect((await call(server, client, 'GET', '/__sandbox/echo')).body.writes).toBeGreaterThan(0);
    await server.flushExchanges();

    const file = server.exchangesFile('kit-test')!;
    expect(file).toBe(join(dir, 'sandbox', 'kit-test', 'exchanges.jsonl'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'sandbox', 'kit-test')).mode & 0o777).toBe(0o700);
    const lines = exchanges(file);
    const post = lines.find((l) => l.method === 'POST' && l.url === '/homologacao/echo/items?x=1')!;
    expect(post).toMatchObject({
      family: 'kit-test',
      requestBody: '{"name":"á"}',
      status: 201,
      responseBody: JSON.stringify({ received: { name: 'á' } }),
    });
    expect(post.requestHeaders['content-type']).toBe('application/json');
    expect(post.requestHeaders.authorization).toBe('Basic [redacted]');
    expect(post.responseHeaders?.['content-type']).toBe('application/json; charset=utf-8');
    expect(Date.parse(post.at)).not.toBeNaN();
    expect(post.fault).toBeUndefined();
    expect(lines.map((l) => l.status)).toEqual(expect.arrayContaining([404, 418]));
    expect(lines.some((l) => l.url.startsWith('/__sandbox') || l.url === '/elsewhere')).toBe(false);
  });

  it('injects a 5xx (nothing processed) and latency, set over the admin route', async () => {
    const client = agent(trusted);
    const before = processedWrites;
    const put = await call(server, client, 'PUT', '/__sandbox/faults', JSON.stringify({ errorRate: 1 }));
    expect(put).toMatchObject({ status: 200, body: { errorRate: 1 } });
    expect((await call(server, client, 'GET', '/__sandbox/faults')).body).toEqual({ errorRate: 1 });
    const failed = await call(server, client, 'POST', '/producao/echo/items', '{}');
    expect(failed).toMatchObject({ status: 503, body: { message: 'injected' } });
    expect(processedWrites).toBe(before);
    expect((await call(server, client, 'PUT', '/__sandbox/faults', '{"errorRate": 2}')).status).toBe(400);
    expect((await call(server, client, 'PUT', '/__sandbox/faults', '[]')).status).toBe(400);

    server.setFaults({ latencyMs: 250 });
    const started = Date.now();
    expect((await call(server, client, 'GET', '/producao/echo/hello/x')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);

    await server.flushExchanges();
    const injected = exchanges(server.exchangesFile('kit-test')!).filter((l) => l.fault === 'error');
    expect(injected.at(-1)).toMatchObject({ status: 503, requestBody: '{}' });
  });

  it('drops before processing, or processes a write and then drops the answer', async () => {
    const client = agent(trusted);
    const before = processedWrites;
    server.setFaults({ dropBeforeProcessRate: 1 });
    await expect(call(server, client, 'POST', '/producao/echo/items', '{"n":1}')).rejects.toThrow();
    expect(processedWrites).toBe(before);
    server.setFaults({ commitThenDropRate: 1 });
    await expect(call(server, client, 'POST', '/producao/echo/items', '{"n":2}')).rejects.toThrow();
    expect(processedWrites).toBe(before + 1);
    // reads are answered under commit-then-drop
    expect((await call(server, client, 'GET', '/producao/echo/hello/x')).status).toBe(200);
    await server.flushExchanges();
    const lines = exchanges(server.exchangesFile('kit-test')!);
    expect(lines.find((l) => l.fault === 'drop-before')).toMatchObject({ status: null, responseBody: null });
    expect(lines.find((l) => l.fault === 'commit-then-drop')).toMatchObject({ status: 201, requestBody: '{"n":2}' });
  });

  it('answers 413 to a body over the limit, through the service error reply', async () => {
    const client = agent(trusted);
    const big = JSON.stringify({ data: 'x'.repeat(4096) });
    const answer = await call(server, client, 'POST', '/producao/echo/items', big);
    expect(answer.status).toBe(413);
    expect(answer.body.message).toContain('request body too large');
    expect((await call(server, client, 'PUT', '/__sandbox/faults', big)).status).toBe(413);
    // far over the limit: the client is still sending when the sandbox has decided, and still gets the 413
    const huge = await call(server, client, 'POST', '/producao/echo/items', 'x'.repeat(8 * 1024 * 1024));
    expect(huge.status).toBe(413);
    // the connection is still usable
    expect((await call(server, client, 'GET', '/producao/echo/hello/x')).status).toBe(200);
  });
});

describe('other transports and helpers', () => {
  it('plain HTTP for providers authenticating by header', async () => {
    const server = await startSandboxServer({
      transport: { kind: 'http' },
      services: [
        {
          family: 'kit-http',
          name: 'Basic',
          mount: '/ws',
          routes: [
            { method: 'GET', path: '/who', handler: (req) => ({ status: 200, body: authorizationOf(req.headers) }) },
          ],
          before: (req) =>
            req.headers.authorization
              ? null
              : { status: 401, body: '<fault>no credentials</fault>', headers: { 'content-type': 'text/xml' } },
          notFound: () => ({ status: 404 }),
        },
      ],
    });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await call(server, undefined, 'GET', '/ws/who')).toMatchObject({
        status: 200,
        body: { scheme: 'basic', user: 'user', password: 'secret' },
      });
      const refused = await request(`${server.url}/ws/who`);
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['content-type']).toBe('text/xml');
      expect(await refused.body.text()).toBe('<fault>no credentials</fault>');
      expect(server.exchangesFile('kit-http')).toBeNull();
    } finally {
      await server.close();
    }
    expect(authorizationOf({ authorization: 'Bearer abc.def' })).toEqual({ scheme: 'bearer', token: 'abc.def' });
    expect(authorizationOf({})).toBeNull();
  });

  it('a requested (not required) certificate reaches the service, which decides', async () => {
    const server = await startSandboxServer({
      transport: { kind: 'https', tls: serverTls, clientCertificates: 'requested' },
      services: [ECHO],
    });
    try {
      const anonymous = await call(server, agent(null), 'GET', '/producao/echo/hello/a');
      expect(anonymous.body).toMatchObject({ cnpj: null, authorized: null });
      const withCert = await call(server, agent(untrusted), 'GET', '/producao/echo/hello/a');
      expect(withCert.body).toMatchObject({ cnpj: CNPJ, authorized: false });
    } finally {
      await server.close();
    }
  });

  it('a recording failure never breaks the answer', async () => {
    const blocker = join(dir, 'not-a-directory');
    writeFileSync(blocker, 'x');
    const warnings: string[] = [];
    const server = await startSandboxServer({
      transport: { kind: 'http' },
      services: [ECHO],
      sandboxDir: blocker,
      logger: { info: () => {}, warn: (m) => warnings.push(m) },
    });
    try {
      expect((await call(server, undefined, 'GET', '/producao/echo/hello/a')).status).toBe(200);
      await server.flushExchanges();
      expect((await call(server, undefined, 'GET', '/producao/echo/hello/b')).status).toBe(200);
      await server.flushExchanges();
      expect(warnings.some((w) => w.includes('not written'))).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('bounds recorded bodies and keeps binary ones as base64', () => {
    const big = 'é'.repeat(200 * 1024); // 400 KiB of UTF-8
    const cut = recordedBody(Buffer.from(big, 'utf8')) as string;
    expect(cut.endsWith(`…[truncated: ${400 * 1024} bytes in all]`)).toBe(true);
    expect(cut.startsWith('éé')).toBe(true);
    expect(Buffer.byteLength(cut)).toBeLessThan(257 * 1024);
    expect(recordedBody(Buffer.from([0x1f, 0x8b, 0xff]))).toEqual({ base64: 'H4v/' });
    expect(recordedBody(null)).toBeNull();
  });
});

describe('the national sandbox on the kit', () => {
  it('records Sefin and ADN exchanges in <sandboxDir>/national/exchanges.jsonl', async () => {
    const identity = provisionSandboxIdentity(join(dir, 'identity'));
    const sandboxDir = join(dir, 'national-sandbox');
    const sandbox = await startSefinSandbox({ tls: identity.tls, signer: identity.signer, sandboxDir });
    const client = new Agent({ connect: { key: trusted.keyPem, cert: trusted.certPem, ca: identity.caPem } });
    agents.push(client);
    try {
      const adn = await request(`${sandbox.url}/producaorestrita/parametrizacao/3304557/convenio`, {
        dispatcher: client,
      });
      expect(adn.statusCode).toBe(200);
      await adn.body.text();
      const sefin = await request(`${sandbox.url}/producaorestrita/SefinNacional/dps/DPS123`, { dispatcher: client });
      expect(sefin.statusCode).toBe(400);
      await sefin.body.text();
    } finally {
      await sandbox.close();
    }
    const file = join(sandboxDir, 'national', 'exchanges.jsonl');
    expect(sandbox.exchangesFile()).toBe(file);
    const lines = exchanges(file);
    expect(lines.map((l) => [l.family, l.method, l.url, l.status])).toEqual([
      ['national', 'GET', '/producaorestrita/parametrizacao/3304557/convenio', 200],
      ['national', 'GET', '/producaorestrita/SefinNacional/dps/DPS123', 400],
    ]);
    expect(JSON.parse(lines[0]!.responseBody as string).parametrosConvenio.aderenteAmbienteNacional).toBe(1);
    expect(JSON.parse(lines[1]!.responseBody as string).erro).toBeDefined();
  });
});
