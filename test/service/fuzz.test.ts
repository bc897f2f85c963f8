import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import {
  deleteAt,
  familyOf,
  fieldPaths,
  HOSTILE_URL_VALUES,
  HOSTILE_VALUES,
  type Json,
  jsonBodySchema,
  multipartSchema,
  pickSome,
  prng,
  RAW_BODIES,
  requiredPaths,
  sampleOf,
  setAt,
} from '../support/fuzz.ts';
import { startTestService, type TestResponse, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';
import {
  type ApiOperation,
  apiOperations,
  keyKindFor,
  nextCnpj,
  projectBody,
  tinyPng,
} from '../support/route-checks.ts';
import { type Receiver, startReceiver } from '../webhooks/support.ts';

/**
 * The fuzz suite (issue 9, item 10). It reads the served OpenAPI document and, for every operation, sends
 * mutated input with valid keys of the right kind: each body field (walked from the request schema) with
 * hostile values (wrong types, huge numbers, 1e21, NUL, unpaired surrogates, long strings, deep nesting),
 * required fields removed, unknown fields added, malformed raw bodies, wrong content types, hostile query and
 * path parameters, malformed multipart bodies and requests aborted mid-body. Path parameters are mostly real
 * ids (so the handlers run to their end); the organization routes that change or delete act on a sacrificial
 * project, the operator routes on a sacrificial organization, and the deletions run last.
 *
 * Asserted: no response is 5xx, every error is problem+json with a code, and at the end the service is healthy
 * (it still issues an invoice end to end). Bounded (a few thousand requests) and deterministic (seeded); the
 * counts per route family are printed. Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
 */

const SEED = 20_261_123;
const CONCURRENCY = 6;

let t: TestService;
let receiver: Receiver;
let main: OnboardedProject;
/** resources the destructive operations may delete or revoke */
const ids: Record<string, string> = {};
let victimCertificate: Buffer;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestService({
    NFSE_ORG_RATE_LIMIT: '1000000',
    NFSE_WEBHOOKS_ALLOW_INSECURE: 'true',
  });
  main = await onboardProject(t, { plan: 'enterprise', rateLimitPerMinute: 1_000_000 });

  const issued = await t.request('POST', '/emitir', { key: main.apiKey, body: invoiceBody() });
  expect(issued.status, issued.text).toBe(202);
  ids.invoice = issued.body.invoiceId;
  await waitForInvoice(t, main.apiKey, ids.invoice!, 30_000);
  const batch = await t.request('POST', '/emitir/batch', { key: main.apiKey, body: { items: [invoiceBody()] } });
  expect(batch.status, batch.text).toBe(202);
  ids.batch = batch.body.batchId;

  const endpoint = await t.request('POST', '/webhooks/endpoints', {
    key: main.apiKey,
    body: { url: `${receiver.url}/hook`, events: ['nfse.issued'], secret: 'fuzz-secret-0123456789' },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  ids.endpoint = endpoint.body.id;
  const test = await t.request('POST', `/webhooks/endpoints/${ids.endpoint}/test`, { key: main.apiKey });
  expect(test.status, test.text).toBe(200);
  ids.delivery = test.body.delivery.id;

  // sacrificial: a second project (with its certificate and a key) for every change and deletion of the
  // organization routes, and a second organization (with a token) for the operator routes
  const victimCnpj = nextCnpj();
  const victim = await t.request('POST', '/org/projects', {
    key: main.orgToken,
    body: projectBody({ cnpj: victimCnpj }),
  });
  expect(victim.status, victim.text).toBe(201);
  ids.victimProject = victim.body.id;
  victimCertificate = createA1Certificate({ cnpj: victimCnpj, name: 'VICTIM', password: 'segredo' }).pfx;
  const victimKey = await t.request('POST', `/org/projects/${ids.victimProject}/api-keys`, {
    key: main.orgToken,
    body: { name: 'victim' },
  });
  expect(victimKey.status, victimKey.text).toBe(201);
  ids.victimKey = victimKey.body.id;
  const victimOrg = await t.createOrganization('pro', 'Victim Org');
  ids.victimOrg = victimOrg.id;
  const token = await t.request('POST', `/admin/organizations/${victimOrg.id}/tokens`, {
    key: t.adminKey,
    body: { name: 'victim', scopes: ['projects:read'] },
  });
  expect(token.status, token.text).toBe(201);
  ids.victimToken = token.body.id;
}, 180_000);

afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

const isDestructive = (op: ApiOperation) => op.method === 'DELETE';

/** The real id a path parameter gets (mutated ones are added separately). */
function realParam(op: ApiOperation, name: string): string {
  const local = op.path.replace(/^\/api\/v1/, '');
  if (local.startsWith('/admin/organizations/')) return name === 'tokenId' ? ids.victimToken! : ids.victimOrg!;
  if (local.startsWith('/org/projects/')) {
    if (name === 'keyId') return ids.victimKey!;
    return op.method === 'GET' ? main.projectId : ids.victimProject!;
  }
  if (local.startsWith('/webhooks/endpoints/')) return ids.endpoint!;
  if (local.startsWith('/webhooks/deliveries/')) return ids.delivery!;
  if (local.startsWith('/invoices/batch/')) return ids.batch!;
  if (local.startsWith('/invoices/')) return ids.invoice!;
  return '00000000-0000-4000-8000-000000000000';
}

/** A known-good body per operation (the schema's own sample otherwise). */
function baseBody(op: ApiOperation): Json {
  const local = `${op.method} ${op.path.replace(/^\/api\/v1/, '')}`;
  switch (local) {
    case 'POST /admin/organizations':
      return { name: 'Fuzz Org', plan: 'free' };
    case 'POST /admin/organizations/{id}/tokens':
      return { name: 'fuzz', scopes: ['projects:read'] };
    case 'PUT /admin/organizations/{id}/plan':
      return { plan: 'pro' };
    case 'POST /admin/organizations/{id}/members':
      return { email: 'fuzz@exemplo.com.br', password: 'senha-do-fuzz-123' };
    case 'POST /org/projects':
      return projectBody();
    case 'PATCH /org/projects/{id}':
      return { name: 'Empresa Renomeada', email: 'fiscal@exemplo.com.br' };
    case 'PATCH /org/projects/{id}/numeracao':
      return { ultimoNumeroNfse: 10 };
    case 'POST /org/projects/{id}/api-keys':
      return { name: 'fuzz', scopes: ['query'], rateLimitPerMinute: 60 };
    case 'PATCH /org/settings':
      return { storageBaseUrl: 'https://docs.exemplo.com.br' };
    case 'POST /webhooks/endpoints':
      return { url: `${receiver.url}/fuzz`, events: ['nfse.issued'], description: 'fuzz' };
    case 'PATCH /webhooks/endpoints/{id}':
      return { description: 'fuzz', active: true };
    case 'POST /emitir':
      return invoiceBody({ referencia: 'fuzz' });
    case 'POST /emitir/batch':
      return { items: [invoiceBody()] };
    case 'POST /cancelar':
      return { invoiceId: ids.invoice, motivo: 'Cancelamento de teste do fuzz' };
    default:
      return sampleOf(jsonBodySchema(op));
  }
}

function keyFor(op: ApiOperation): string | null {
  const kind = keyKindFor(op.path);
  return kind === 'admin' ? t.adminKey : kind === 'org' ? main.orgToken : kind === 'project' ? main.apiKey : null;
}

interface Call {
  op: ApiOperation;
  label: string;
  params?: Record<string, string>;
  query?: string;
  body?: { json: Json } | { raw: string | Buffer; type?: string } | { form: () => FormData };
  headers?: Record<string, string>;
}

function urlOf(call: Call): string {
  const path = call.op.path
    .replace(/^\/api\/v1/, '')
    .replace(/\{([^}]+)\}/g, (_m, name: string) => call.params?.[name] ?? realParam(call.op, name));
  return `${path}${call.query ? `?${call.query}` : ''}`;
}

/** Every mutated request of one operation (deterministic for the seed). */
function callsFor(op: ApiOperation, rand: () => number): Call[] {
  const calls: Call[] = [];
  const name = `${op.method} ${op.path}`;
  const params = (op.operation.parameters ?? []).filter((p) => p.in === 'path');
  const queries = (op.operation.parameters ?? []).filter((p) => p.in === 'query');
  const jsonSchema = jsonBodySchema(op);
  const formSchema = multipartSchema(op);
  const base = jsonSchema ? baseBody(op) : undefined;
  const withBase = (): Partial<Call> => (jsonSchema ? { body: { json: base } } : {});

  // the operation as a client would call it, then the same request four times at once (races on unique rows)
  calls.push({ op, label: `${name} (valid)`, ...withBase() });
  for (let i = 0; i < 4; i++) calls.push({ op, label: `${name} (valid, concurrent #${i})`, ...withBase() });
  // hostile path parameters
  for (const param of params) {
    for (const value of pickSome(rand, HOSTILE_URL_VALUES, 8)) {
      calls.push({ op, label: `${name} path ${param.name}=${value.slice(0, 40)}`, params: { [param.name]: value } });
    }
  }
  // hostile query parameters, alone and with an unknown one
  for (const param of queries) {
    for (const value of pickSome(rand, HOSTILE_URL_VALUES, 10)) {
      calls.push({ op, label: `${name} query ${param.name}=${value.slice(0, 40)}`, query: `${param.name}=${value}` });
    }
    calls.push({ op, label: `${name} query ${param.name} twice`, query: `${param.name}=1&${param.name}=2` });
  }
  if (op.method === 'GET') {
    calls.push({ op, label: `${name} unknown query`, query: 'unknown=%00&page[]=1&__proto__=x' });
  }
  if (jsonSchema) {
    // each field with hostile values; each required field removed (removing an optional one mostly leaves a
    // valid request, which only costs an issuance)
    for (const path of fieldPaths(jsonSchema)) {
      for (const value of pickSome(rand, HOSTILE_VALUES, 4)) {
        const label = `${name} ${path.join('.')}=${JSON.stringify(value)?.slice(0, 40)}`;
        calls.push({ op, label, body: { json: setAt(base, path, value) } });
      }
    }
    for (const path of requiredPaths(jsonSchema)) {
      calls.push({ op, label: `${name} missing ${path.join('.')}`, body: { json: deleteAt(base, path) } });
    }
    // unknown fields, and the whole body replaced
    for (const value of pickSome(rand, HOSTILE_VALUES, 4)) {
      calls.push({ op, label: `${name} extra field`, body: { json: { ...base, extra: value } } });
    }
    calls.push({ op, label: `${name} odd keys`, body: { json: { ...base, 'k\u0000': 1, '\ud800': 2 } } });
    for (const value of pickSome(rand, HOSTILE_VALUES, 6)) {
      calls.push({ op, label: `${name} body=${JSON.stringify(value)?.slice(0, 40)}`, body: { json: value } });
    }
    for (const raw of pickSome(rand, RAW_BODIES, 8)) {
      calls.push({ op, label: `${name} raw ${JSON.stringify(raw.slice(0, 30))}`, body: { raw } });
    }
    // content types other than JSON
    for (const type of [
      'text/plain',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
    ]) {
      calls.push({ op, label: `${name} content-type ${type}`, body: { raw: JSON.stringify(base), type } });
    }
    calls.push({
      op,
      label: `${name} gzip content-encoding`,
      body: { json: base },
      headers: { 'content-encoding': 'gzip' },
    });
    calls.push({
      op,
      label: `${name} utf-16 body`,
      body: { raw: Buffer.from(JSON.stringify(base), 'utf16le'), type: 'application/json' },
    });
  }
  if (formSchema) {
    for (const call of multipartCalls(op, name, rand)) calls.push(call);
  }
  if (name === 'POST /api/v1/emitir') {
    for (let i = 0; i < 4; i++) {
      const headers = { 'idempotency-key': 'fuzz-same-key' };
      calls.push({ op, label: `${name} same idempotency-key, concurrent #${i}`, ...withBase(), headers });
    }
    for (const value of ['', 'x'.repeat(300), '%00', 'ÿ', 'a b']) {
      calls.push({
        op,
        label: `${name} idempotency-key ${value.slice(0, 20)}`,
        ...withBase(),
        headers: { 'idempotency-key': value },
      });
    }
  }
  return calls;
}

/** Multipart operations: the file and text fields with hostile content, and malformed bodies. */
function multipartCalls(op: ApiOperation, name: string, rand: () => number): Call[] {
  const calls: Call[] = [];
  const isCertificate = op.path.endsWith('/certificate');
  const cert = isCertificate
    ? { file: victimCertificate, password: 'segredo' }
    : { file: tinyPng(), password: undefined };
  const form =
    (file: Buffer | null, fields: Record<string, string>, fileName = 'upload.bin') =>
    () => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.set(k, v);
      if (file) f.set('file', new Blob([new Uint8Array(file)]), fileName);
      return f;
    };
  const fields: Record<string, string> = isCertificate ? { password: cert.password! } : {};
  calls.push({ op, label: `${name} multipart valid`, body: { form: form(cert.file, fields) } });
  const textValues = ['', 'a\u0000b', 'x'.repeat(5_000), '😀', '\ufffd'];
  for (const value of textValues) {
    calls.push({
      op,
      label: `${name} multipart text field`,
      body: { form: form(cert.file, { ...fields, password: value }) },
    });
  }
  const files: Buffer[] = [
    Buffer.alloc(0),
    Buffer.from('not a file'),
    cert.file.subarray(0, Math.floor(cert.file.length / 2)),
    Buffer.concat([cert.file, Buffer.from('trailing')]),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]),
    Buffer.alloc(2 * 1024 * 1024, 1),
  ];
  for (const file of files) {
    calls.push({ op, label: `${name} multipart file ${file.length} bytes`, body: { form: form(file, fields) } });
  }
  calls.push({
    op,
    label: `${name} multipart odd file name`,
    body: { form: form(cert.file, fields, '../../\u0000x.pfx') },
  });
  const b = 'fuzzboundary';
  const type = `multipart/form-data; boundary=${b}`;
  const part = (headers: string, content: string) => `--${b}\r\n${headers}\r\n\r\n${content}\r\n`;
  const end = `--${b}--\r\n`;
  const raws = [
    '',
    'garbage without any boundary',
    `--${b}\r\n`,
    part('Content-Disposition: form-data; name="file"; filename="a"', 'unterminated'),
    part('', 'no headers') + end,
    part('Content-Disposition: form-data; name="__proto__"', 'x') + end,
    part('Content-Disposition: form-data; name="file"', 'a text field named file') + end,
    part('Content-Disposition: form-data; name="password"; filename="p.txt"', 'password as a file') + end,
    Array.from({ length: 40 }, (_, i) => part(`Content-Disposition: form-data; name="f${i}"`, 'v')).join('') + end,
    part('Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'%E2%9C%93%00.pfx', 'x') + end,
  ];
  for (const raw of pickSome(rand, raws, raws.length)) {
    calls.push({ op, label: `${name} multipart raw ${JSON.stringify(raw.slice(0, 40))}`, body: { raw, type } });
  }
  calls.push({ op, label: `${name} multipart without boundary`, body: { raw: 'x', type: 'multipart/form-data' } });
  calls.push({ op, label: `${name} json to a multipart route`, body: { json: { file: 'x', password: 'y' } } });
  return calls;
}

async function send(call: Call): Promise<TestResponse> {
  const key = keyFor(call.op);
  const headers: Record<string, string> = { ...(call.headers ?? {}) };
  let rawBody: string | Buffer | FormData | undefined;
  if (call.body && 'json' in call.body) {
    rawBody = JSON.stringify(call.body.json) ?? 'null';
    headers['content-type'] = 'application/json';
  } else if (call.body && 'raw' in call.body) {
    rawBody = call.body.raw;
    headers['content-type'] = call.body.type ?? 'application/json';
  } else if (call.body && 'form' in call.body) {
    rawBody = call.body.form();
  }
  return t.request(call.op.method, urlOf(call), { key, rawBody, headers });
}

/** Requests opened with a long content-length and abandoned mid-body. */
async function abortMidBody(op: ApiOperation): Promise<void> {
  const { port } = new URL(t.baseUrl);
  const multipart = multipartSchema(op) !== null;
  const head = [
    `${op.method} ${op.path.replace(/\{([^}]+)\}/g, (_m, n: string) => realParam(op, n))} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    `x-api-key: ${keyFor(op)}`,
    `content-type: ${multipart ? 'multipart/form-data; boundary=zz' : 'application/json'}`,
    'content-length: 100000',
    '',
    '',
  ].join('\r\n');
  const partial = multipart
    ? '--zz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc'
    : '{"a": "abc';
  await new Promise<void>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(head + partial);
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 20);
    });
    socket.on('error', () => resolve());
  });
}

describe('fuzzing every operation of the OpenAPI document', () => {
  it('never answers 5xx, always answers errors as problem+json, and stays healthy', async () => {
    const started = Date.now();
    const { ops } = await apiOperations(t);
    // destructive operations last, the project deletion at the very end
    const ordered = [...ops].sort((x, y) => {
      const rank = (op: ApiOperation) => (isDestructive(op) ? (op.path.endsWith('/org/projects/{id}') ? 2 : 1) : 0);
      return rank(x) - rank(y);
    });
    const rand = prng(SEED);
    const counts = new Map<
      string,
      { requests: number; ok2xx: number; errors4xx: number; limited: number; errors5xx: number }
    >();
    const failures: string[] = [];
    for (const op of ordered) {
      const family = familyOf(op.path);
      const tally = counts.get(family) ?? { requests: 0, ok2xx: 0, errors4xx: 0, limited: 0, errors5xx: 0 };
      counts.set(family, tally);
      const calls = callsFor(op, rand);
      for (let i = 0; i < calls.length; i += CONCURRENCY) {
        const slice = calls.slice(i, i + CONCURRENCY);
        const responses = await Promise.all(slice.map(send));
        for (const [j, res] of responses.entries()) {
          tally.requests++;
          if (res.status < 400) tally.ok2xx++;
          else if (res.status < 500) tally.errors4xx++;
          if (res.status === 429) tally.limited++;
          const what = `${slice[j]!.label} → ${res.status} ${res.text.slice(0, 200)}`;
          if (res.status >= 500) {
            tally.errors5xx++;
            failures.push(what);
          } else if (res.status >= 400) {
            const problem = (res.headers.get('content-type') ?? '').includes('application/problem+json');
            if (!problem || typeof res.body?.code !== 'string') failures.push(`not problem+json: ${what}`);
          }
        }
      }
      if (jsonBodySchema(op) || multipartSchema(op)) {
        await abortMidBody(op);
        tally.requests++;
      }
    }

    const total = [...counts.values()].reduce((n, c) => n + c.requests, 0);
    const total5xx = [...counts.values()].reduce((n, c) => n + c.errors5xx, 0);
    const lines = [...counts.entries()].map(
      ([family, c]) =>
        `  ${family.padEnd(10)} ${String(c.requests).padStart(5)} requests: ${String(c.ok2xx).padStart(4)} < 400, ` +
        `${String(c.errors4xx).padStart(4)} 4xx (${c.limited} 429), ${c.errors5xx} ≥ 500`,
    );
    console.log(
      `fuzz (seed ${SEED}, ${t.databaseUrl ? 'PostgreSQL' : 'PGlite'}): ${ops.length} operations, ${total} requests, ` +
        `${total5xx} responses ≥ 500, ${((Date.now() - started) / 1000).toFixed(1)} s\n${lines.join('\n')}`,
    );
    expect(failures.slice(0, 30)).toEqual([]);
    // a throttled fuzz tests nothing past the rate limiter: its keys must be allowed the whole run
    const limited = [...counts.values()].reduce((n, c) => n + c.limited, 0);
    expect(limited, 'requests answered 429: raise the rate limits of the fuzz keys').toBe(0);
    expect(total).toBeGreaterThan(1500);
    expect(total).toBeLessThan(6000);

    // healthy: answering, and still issuing end to end
    expect((await t.request('GET', '/health')).status).toBe(200);
    const fresh = await t.request('POST', `/org/projects/${main.projectId}/api-keys`, {
      key: main.orgToken,
      body: { name: 'after the fuzz' },
    });
    expect(fresh.status, fresh.text).toBe(201);
    const after = await t.request('POST', '/emitir', {
      key: fresh.body.key,
      body: invoiceBody({ referencia: 'after' }),
    });
    expect(after.status, after.text).toBe(202);
    const status = await waitForInvoice(t, fresh.body.key, after.body.invoiceId, 60_000);
    expect(status.status, JSON.stringify(status)).toBe('issued');
  }, 300_000);
});
