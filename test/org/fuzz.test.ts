import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestResponse, type TestService } from '../support/harness.ts';
import {
  createTenant,
  ORG_ROUTES,
  type OrgRoute,
  projectBody,
  routeName,
  type Tenant,
} from '../support/route-checks.ts';

/**
 * Malformed input to every organization route: broken and hostile JSON, wrong types in every field, wrong
 * content types, malformed multipart bodies and aborted requests. Never a 5xx, always a problem+json body for
 * the errors, and the service keeps answering.
 */

let t: TestService;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: '1000000' });
  tenant = await createTenant(t, 'enterprise');
});
afterAll(async () => {
  await t?.close();
});

function pathOf(route: OrgRoute) {
  return route.path.replace('{id}', tenant.projectId).replace('{keyId}', crypto.randomUUID());
}

function expectHandled(res: TestResponse, what: string) {
  expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status >= 400) {
    expect(res.headers.get('content-type'), what).toContain('application/problem+json');
    expect(typeof res.body?.code, what).toBe('string');
  }
}

async function expectAlive() {
  const health = await t.request('GET', '/health');
  expect(health.status).toBe(200);
  expect((await t.request('GET', '/org/settings', { key: tenant.token })).status).toBe(200);
}

const MALFORMED_JSON = [
  '{',
  '{"name":',
  '{"name": "x",}',
  '[1, 2',
  'nul',
  'undefined',
  "{'name': 'x'}",
  '{"name": "x"} trailing',
  '\u0000',
  '\ufeff{"name":"x"}',
  '{"name": "\\ud800"}',
  '"just a string"',
  '12345',
  'null',
  'true',
  '[]',
  '1e999999',
  '-0',
  '{"__proto__": {"admin": true}}',
  '{"constructor": {"prototype": {"polluted": true}}}',
  '{"name": "\\u0000", "razaoSocial": "\\u0000"}',
  `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
  `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
  JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }),
];

const WEIRD_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  '',
  ' ',
  '\u0000',
  '\ud800',
  '😀'.repeat(1000),
  'x'.repeat(100_000),
  '1e999',
  '../../etc/passwd',
  "'; drop table projects; --",
  [],
  [null],
  ['a', 1, {}],
  {},
  { $gt: '' },
  { nested: { deeper: { deepest: [1, [2, [3]]] } } },
];

function fullProjectBody() {
  return projectBody({
    inscricaoMunicipal: '1',
    inscricaoEstadual: '1',
    regimeTributario: '1',
    codigoMunicipio: '3550308',
    email: 'a@b.com.br',
    telefone: '11999999999',
    description: 'd',
    endereco: { logradouro: 'r', numero: '1', complemento: 'c', bairro: 'b', cidade: 'c', uf: 'SP', cep: '01001000' },
    codigoTributacao: '010101',
    tributacaoIss: 1,
    serieNfse: '1',
    aliquotaSimples: 1,
    regimeIss: 1,
    codigoServicoSp: '02919',
    cnae: '6201501',
    basicAuthUsuario: 'u',
    basicAuthSenha: 's',
    ambiente: 2,
    serieNfe: 1,
    serieNfce: 1,
    cscId: '1',
    cscToken: 't',
    cstPisCofins: '01',
    aliquotaPis: 1,
    aliquotaCofins: 1,
    tipoRetencaoPisCofins: 0,
    defaultCstIbscbs: '000',
    defaultClassificacaoTributaria: '000001',
    defaultIndicadorOperacao: '100301',
    defaultNbs: '115021000',
    danfeTemplate: 'padrao',
  });
}

function baseBody(route: OrgRoute): Record<string, unknown> {
  if (route.path === '/org/projects' || (route.method === 'PATCH' && route.path === '/org/projects/{id}')) {
    return fullProjectBody();
  }
  if (route.path.endsWith('/numeracao')) return { ultimoNumeroNfse: 1, ultimoNumeroNfe: 1, ultimoNumeroNfce: 1 };
  if (route.path.endsWith('/api-keys')) return { name: 'k', scopes: ['emit'], rateLimitPerMinute: 60 };
  if (route.path === '/org/settings') return { storageBaseUrl: 'https://docs.exemplo.com.br' };
  return { file: 'x', password: 'y' };
}

/** A small seeded PRNG (mulberry32), so a failure can be replayed from the seed in its message. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random JSON value whose object keys are mostly the route's real field names. */
function randomValue(rand: () => number, keys: string[], depth = 0): unknown {
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)]!;
  const kind = Math.floor(rand() * (depth > 3 ? 6 : 9));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return pick([0, -1, 1, 999, 1000, 2 ** 31, -(2 ** 63), 1e21, 0.1, Number.MAX_SAFE_INTEGER + 2]);
    case 3:
      return Math.floor(rand() * 2_000_000) - 1_000_000;
    case 4:
      return pick(['', ' ', '0', '01', '3550308', '11222333000181', 'https://x.com', '\u0000', 'é', 'a'.repeat(300)]);
    case 5:
      return String.fromCharCode(...Array.from({ length: Math.floor(rand() * 20) }, () => Math.floor(rand() * 0xffff)));
    case 6:
    case 7: {
      const out: Record<string, unknown> = {};
      const n = Math.floor(rand() * 6);
      for (let i = 0; i < n; i++) out[rand() < 0.8 ? pick(keys) : `k${i}`] = randomValue(rand, keys, depth + 1);
      return out;
    }
    default:
      return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, keys, depth + 1));
  }
}

// every route but the project deletion, which would end the fuzzing of the project routes early
const TARGETS = ORG_ROUTES.filter((r) => !(r.method === 'DELETE' && r.path === '/org/projects/{id}'));
const BODY_TARGETS = TARGETS.filter((r) => r.method !== 'GET');

describe.each(BODY_TARGETS.map((r) => [routeName(r), r] as const))('%s', (_name, route) => {
  it('survives malformed JSON', async () => {
    for (const raw of MALFORMED_JSON) {
      const res = await t.request(route.method, pathOf(route), {
        key: tenant.token,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expectHandled(res, `${routeName(route)} ${JSON.stringify(raw.slice(0, 40))}`);
    }
    await expectAlive();
  });

  it('survives a wrong type in every field and as the whole body', async () => {
    const base = baseBody(route);
    for (const field of Object.keys(base)) {
      for (const value of WEIRD_VALUES) {
        const res = await t.request(route.method, pathOf(route), {
          key: tenant.token,
          body: { ...base, [field]: value },
        });
        expectHandled(res, `${routeName(route)} ${field}=${JSON.stringify(value)?.slice(0, 40)}`);
      }
    }
    for (const value of WEIRD_VALUES) {
      const res = await t.request(route.method, pathOf(route), { key: tenant.token, body: value });
      expectHandled(res, `${routeName(route)} body=${JSON.stringify(value)?.slice(0, 40)}`);
    }
    await expectAlive();
  });

  it('survives seeded random bodies', async () => {
    const seed = 20_261_122;
    const rand = prng(seed + route.path.length);
    const keys = [...Object.keys(baseBody(route)), 'logradouro', 'uf', 'cep'];
    for (let i = 0; i < 150; i++) {
      const body =
        rand() < 0.7 ? { ...baseBody(route), ...(randomValue(rand, keys, 3) as object) } : randomValue(rand, keys);
      const res = await t.request(route.method, pathOf(route), { key: tenant.token, body });
      expectHandled(res, `${routeName(route)} seed ${seed} #${i} ${JSON.stringify(body)?.slice(0, 120)}`);
    }
    await expectAlive();
  });

  it('survives wrong content types', async () => {
    const json = JSON.stringify(baseBody(route));
    const cases: [string | undefined, string | Buffer][] = [
      ['text/plain', json],
      ['application/xml', '<project><name>x</name></project>'],
      ['application/x-www-form-urlencoded', 'name=x&cnpj=1'],
      ['application/json; charset=utf-16', Buffer.from(json, 'utf16le')],
      ['application/json', ''],
      ['application/vnd.api+json', json],
      ['image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47])],
      ['multipart/form-data', json],
      ['multipart/form-data; boundary=', json],
      ['multipart/mixed; boundary=x', '--x\r\n\r\nhello\r\n--x--'],
      ['', json],
      ['application/json;;;;', json],
      [undefined, json],
    ];
    for (const [type, body] of cases) {
      const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
      const res = await t.request(route.method, pathOf(route), { key: tenant.token, rawBody: body, headers });
      expectHandled(res, `${routeName(route)} content-type ${type}`);
    }
    const gz = await t.request(route.method, pathOf(route), {
      key: tenant.token,
      rawBody: json,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expectHandled(gz, `${routeName(route)} content-encoding gzip`);
    await expectAlive();
  });

  it('survives malformed multipart bodies', async () => {
    const b = 'fuzzboundary';
    const type = `multipart/form-data; boundary=${b}`;
    const part = (headers: string, content: string) => `--${b}\r\n${headers}\r\n\r\n${content}\r\n`;
    const end = `--${b}--\r\n`;
    const cases: string[] = [
      '',
      'garbage without any boundary',
      `--${b}\r\n`,
      part('Content-Disposition: form-data; name="file"; filename="a.pfx"', 'unterminated'),
      part('', 'no headers') + end,
      part('Content-Type: text/plain', 'no disposition') + end,
      part('Content-Disposition: form-data; name="__proto__"', 'x') + end,
      part('Content-Disposition: form-data; name="constructor"; filename="x"', 'x') + end,
      part('Content-Disposition: form-data; name="file"', 'a text field named file') + end,
      part('Content-Disposition: form-data; name="password"; filename="p.txt"', 'password as a file') + end,
      part('Content-Disposition: form-data; name="password"', 'x'.repeat(10_000)) + end,
      part('Content-Disposition: form-data; name="data"\r\nContent-Type: application/json', '{bad json') + end,
      Array.from({ length: 60 }, (_, i) => part(`Content-Disposition: form-data; name="f${i}"`, 'v')).join('') + end,
      part('Content-Disposition: form-data; name="file"; filename="a.png"', 'one') +
        part('Content-Disposition: form-data; name="file"; filename="b.png"', 'two') +
        end,
      part('Content-Disposition: form-data; name="file"; filename="../../../etc/passwd\u0000.png"', 'x') + end,
      part('Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'%E2%9C%93%00.pfx', 'x') + end,
      part(
        'Content-Disposition: form-data; name="file"; filename="a.pfx"\r\nContent-Transfer-Encoding: base64',
        '!!!',
      ) + end,
      `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.pfx"\r\n\r\n${'A'.repeat(60 * 1024)}`,
      `--other\r\nContent-Disposition: form-data; name="file"\r\n\r\nx\r\n--other--\r\n`,
    ];
    for (const body of cases) {
      const res = await t.request(route.method, pathOf(route), {
        key: tenant.token,
        rawBody: body,
        headers: { 'content-type': type },
      });
      expectHandled(res, `${routeName(route)} multipart ${JSON.stringify(body.slice(0, 60))}`);
    }
    await expectAlive();
  });
});

describe('queries and ids', () => {
  it('survives hostile query strings and path ids on the read routes', async () => {
    const queries = [
      'page=1e309',
      'limit=NaN',
      'page=-0',
      'page=9999999999999999999999',
      'page[]=1&page[]=2',
      'active[]=true',
      'active=%00',
      'limit=%F0%9F%98%80',
      `page=${'9'.repeat(5000)}`,
      'page=1&page=2',
    ];
    for (const q of queries) {
      expectHandled(await t.request('GET', `/org/projects?${q}`, { key: tenant.token }), `GET /org/projects?${q}`);
    }
    for (const route of TARGETS.filter((r) => r.path.includes('{id}'))) {
      for (const id of ['%00', '%2e%2e%2f', 'x'.repeat(99), '00000000-0000-0000-0000-000000000000', '😀']) {
        const path = route.path.replace('{id}', id).replace('{keyId}', id);
        const res = await t.request(route.method, path, { key: tenant.token });
        expectHandled(res, `${route.method} ${path.slice(0, 80)}`);
      }
      // a path parameter above the router's maxParamLength (100) is refused by Fastify's router itself,
      // before any route code runs (its body is Fastify's default error shape, not problem+json)
      const long = route.path.replace('{id}', 'x'.repeat(5000)).replace('{keyId}', 'y');
      const refused = await t.request(route.method, long, { key: tenant.token });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(refused.status).toBeLessThan(500);
    }
    await expectAlive();
  });

  it('survives requests aborted mid-body', async () => {
    const { port } = new URL(t.baseUrl);
    for (const route of BODY_TARGETS) {
      const isMultipart = route.body === 'multipart';
      const head = [
        `${route.method} /api/v1${pathOf(route)} HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        `x-api-key: ${tenant.token}`,
        `content-type: ${isMultipart ? 'multipart/form-data; boundary=zz' : 'application/json'}`,
        'content-length: 100000',
        '',
        '',
      ].join('\r\n');
      const partial = isMultipart
        ? '--zz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc'
        : '{"name": "abc';
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(head + partial);
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 30);
        });
        socket.on('error', () => resolve());
      });
    }
    await expectAlive();
  });
});
