import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestResponse, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';
import { apiOperations, expectProblem } from '../support/route-checks.ts';

/**
 * Input the service cannot store or use is a 4xx at the edge, on every route (issue 9, items 1 and 2): text
 * PostgreSQL cannot hold (U+0000, unpaired surrogates) is a 400 naming the field, pages are bounded by one
 * shared schema, and the refusals of the HTTP layer itself (431, malformed HTTP, wrong content types, over-long
 * path parameters) are problem+json with a catalogue code like every other error.
 */

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t);
});
afterAll(async () => {
  await t?.close();
});

function expectFieldRefused(res: TestResponse, field: string, code = 'VALIDATION_FAILED') {
  expectProblem(res, 400, code);
  expect(res.body.errors[0].field, res.text).toBe(field);
}

describe('text PostgreSQL cannot store', () => {
  it('POST /emitir: NUL or an unpaired surrogate in any field (or key) is a 400 naming it, and nothing is queued', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [invoiceBody({ referencia: 'a\u0000b' }), 'referencia'],
      [invoiceBody({ referencia: '\ud800' }), 'referencia'],
      [invoiceBody({ referencia: 'ok\udc00' }), 'referencia'],
      [invoiceBody({ tomador: { nome: 'x\u0000', cnpj: '11444777000161' } }), 'tomador.nome'],
      [invoiceBody({ servico: { descricao: 'Serviço \ud83d', codigo: '010101' } }), 'servico.descricao'],
      [{ ...invoiceBody(), 'extra\u0000': 1 }, 'extra\\u0000'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', '/emitir', { key: p.apiKey, body });
      expectFieldRefused(res, field);
    }
    // a surrogate pair (an emoji) is valid text
    const emoji = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'ok 😀' }) });
    expect(emoji.status, emoji.text).toBe(202);
    const used = await t.request('GET', '/org/settings', { key: p.orgToken });
    expect(used.body.subscription.creditsUsed).toBe(1);
  });

  it('the same on /emitir/batch, /cancelar, organization routes, webhooks and query strings', async () => {
    const batch = await t.request('POST', '/emitir/batch', {
      key: p.apiKey,
      body: { items: [invoiceBody(), invoiceBody({ servico: { descricao: 'a\u0000', codigo: '010101' } })] },
    });
    expectFieldRefused(batch, 'items.1.servico.descricao');
    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId: crypto.randomUUID(), motivo: 'erro\u0000' },
    });
    expectFieldRefused(cancel, 'motivo');
    const project = await t.request('POST', '/org/projects', {
      key: p.orgToken,
      body: { name: 'x\ud800', cnpj: '11444777000161', razaoSocial: 'X' },
    });
    expectFieldRefused(project, 'name');
    const settings = await t.request('PATCH', '/org/settings', {
      key: p.orgToken,
      body: { storageBaseUrl: 'https://docs.exemplo.com.br/\u0000' },
    });
    expectFieldRefused(settings, 'storageBaseUrl');
    const endpoint = await t.request('POST', '/webhooks/endpoints', {
      key: p.apiKey,
      body: { url: 'https://hooks.exemplo.com.br/x', events: ['nfse.issued'], description: '\udfff' },
    });
    expectFieldRefused(endpoint, 'description');
    const query = await t.request('GET', '/webhooks/deliveries?event=%00', { key: p.apiKey });
    expectFieldRefused(query, 'query.event', 'INVALID_QUERY');
    const param = await t.request('GET', '/invoices/%00/status', { key: p.apiKey });
    expectFieldRefused(param, 'params.id');
  });

  it('multipart fields: a NUL in the certificate password is a 400 naming it', async () => {
    const form = new FormData();
    form.set('password', 'segredo\u0000123');
    form.set('file', new Blob([new Uint8Array(Buffer.from('not read'))]), 'a.pfx');
    const res = await t.request('POST', `/org/projects/${p.projectId}/certificate`, { key: p.orgToken, rawBody: form });
    expectFieldRefused(res, 'password');
  });

  it('JSON nested deeper than 32 levels is a 400 naming where', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ extra: deep }) });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors[0].field).toMatch(/^extra(\.a)+$/);
    const arrays = await t.request('POST', '/emitir', {
      key: p.apiKey,
      rawBody: `{"x":${'['.repeat(50_000)}${']'.repeat(50_000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(arrays.status).toBe(400);
  });
});

describe('pagination', () => {
  const routes = () => [
    ['/webhooks/endpoints', p.apiKey],
    ['/webhooks/deliveries', p.apiKey],
    ['/org/projects', p.orgToken],
  ];

  it('page and limit out of range, huge or not integers are a 400 INVALID_QUERY naming the parameter', async () => {
    for (const [path, key] of routes()) {
      for (const q of [
        'page=99999999999999999999',
        'page=1e21',
        'page=1e999',
        'page=1000001',
        'page=0',
        'page=-1',
        'page=1.5',
        'page=abc',
        'limit=101',
        'limit=0',
        'limit=1e21',
      ]) {
        const res = await t.request('GET', `${path}?${q}`, { key });
        expectProblem(res, 400, 'INVALID_QUERY');
        expect(res.body.errors[0].field, `${path}?${q}`).toBe(`query.${q.split('=')[0]}`);
      }
      const last = await t.request('GET', `${path}?page=1000000&limit=100`, { key });
      expect(last.status, last.text).toBe(200);
      expect(last.body.pagination).toMatchObject({ page: 1_000_000, limit: 100 });
      expect(last.body.data).toEqual([]);
    }
  });

  it('every page, limit and offset parameter of the OpenAPI document is a bounded integer (one shared schema)', async () => {
    const { ops } = await apiOperations(t);
    const paged = ops.flatMap((op) =>
      (op.operation.parameters ?? [])
        .filter((param) => param.in === 'query' && ['page', 'limit', 'offset'].includes(param.name))
        .map((param) => ({ op, param })),
    );
    expect(paged.length).toBeGreaterThanOrEqual(6);
    for (const { op, param } of paged) {
      const schema = param.schema ?? {};
      const what = `${op.method} ${op.path} ${param.name}`;
      expect(schema.type, what).toBe('integer');
      expect(schema.minimum, what).toBe(1);
      expect(schema.maximum, what).toBe(param.name === 'page' ? 1_000_000 : 100);
    }
  });
});

describe('refusals of the HTTP layer are problem+json', () => {
  function rawRequest(text: string): Promise<string> {
    const { port } = new URL(t.baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
      let out = '';
      socket.on('data', (d) => {
        out += d.toString('utf8');
      });
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(), 5_000);
    });
  }

  it('431 for headers over the limit', async () => {
    const res = await t.request('GET', '/health', { headers: { 'x-padding': 'a'.repeat(100_000) } });
    expectProblem(res, 431, 'REQUEST_HEADERS_TOO_LARGE');
  });

  it('400 MALFORMED_REQUEST for HTTP the parser refuses', async () => {
    const answer = await rawRequest('GET /api/v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('application/problem+json');
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ status: 400, code: 'MALFORMED_REQUEST' });
  });

  it('415 for a body that is neither JSON nor multipart, 414 for an over-long path parameter, 400 for a bad URL', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const res = await t.request('POST', '/emitir', {
        key: p.apiKey,
        rawBody: JSON.stringify(invoiceBody()),
        headers: { 'content-type': type },
      });
      expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    expectProblem(
      await t.request('GET', `/invoices/${'x'.repeat(5000)}/status`, { key: p.apiKey }),
      414,
      'URI_TOO_LONG',
    );
    expectProblem(await t.request('GET', '/invoices/%E0%A4%A/status', { key: p.apiKey }), 400, 'VALIDATION_FAILED');
  });
});

describe('while the service closes', () => {
  it('a request arriving on a kept-alive connection gets a problem+json 503, and the one in flight completes', async () => {
    const own = await startTestService();
    const project = await onboardProject(own);
    const { port } = new URL(own.baseUrl);
    const body = JSON.stringify(invoiceBody());
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => {
      answer += d.toString('utf8');
    });
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // a request in flight (its body not complete yet) when the close starts
    socket.write(
      `POST /api/v1/emitir HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${project.apiKey}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 300));
    const closing = own.close();
    await new Promise((r) => setTimeout(r, 100));
    // the rest of its body, then a second request on the same connection
    socket.write(`${body.slice(10)}GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await Promise.race([ended, new Promise((r) => setTimeout(r, 10_000))]);
    socket.destroy();
    await closing;
    const responses = answer.split(/(?=HTTP\/1\.1 )/);
    expect(responses[0], answer).toMatch(/^HTTP\/1\.1 202 /);
    expect(responses[1], answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(responses[1]).toContain('application/problem+json');
    expect(responses[1]).toContain('"code":"SERVICE_UNAVAILABLE"');
  });
});
