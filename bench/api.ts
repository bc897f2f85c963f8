/**
 * API throughput on PostgreSQL: GET and POST /org/projects (issue: foundation) and POST /emitir accepted/s
 * (issue: national issuing) beside a bare Fastify JSON POST on the same box (the anchor; goal ≥ 25 %).
 * The service runs as a separate process (NFSE_ROLE=api, so no worker competes for the 2 cores).
 *
 *   npx tsx bench/api.ts [seconds] [connections]      (needs PostgreSQL: BENCH_DATABASE_URL or DATABASE_URL)
 */
import { randomBytes } from 'node:crypto';
import { BENCH_INVOICE, createDatabase, fmt, load, printTable, startChild, waitForHttp } from './lib.ts';

const SECONDS = Number(process.argv[2] ?? 8);
const CONNECTIONS = Number(process.argv[3] ?? 32);
const PORT = 3710;
const BARE_PORT = 3711;

function cnpjFrom(n: number): string {
  const base = String(10_000_000 + n).padStart(8, '0') + '0001';
  const dv = (b: string) => {
    let w = b.length - 7;
    let s = 0;
    for (const c of b) {
      s += Number(c) * w--;
      if (w < 2) w = 9;
    }
    const r = s % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = dv(base);
  return `${base}${d1}${dv(base + d1)}`;
}

const invoice = JSON.stringify(BENCH_INVOICE);

const db = await createDatabase();
const adminKey = `svc_admin_${randomBytes(16).toString('hex')}`;
const service = startChild('src/main.ts', [], {
  DATABASE_URL: db.url,
  NFSE_ADMIN_KEY: adminKey,
  NFSE_MASTER_KEY: randomBytes(32).toString('hex'),
  NFSE_GOVERNMENT: 'sandbox',
  NFSE_ROLE: 'api',
  PORT: String(PORT),
  LOG_LEVEL: 'error',
  NFSE_ORG_RATE_LIMIT: '1000000',
  DATA_DIR: `/tmp/nfse-bench-api-${process.pid}`,
});
const bare = startChild('bench/bare-fastify.ts', [], { PORT: String(BARE_PORT) });
try {
  const origin = `http://127.0.0.1:${PORT}`;
  await waitForHttp(`${origin}/api/v1/health`);
  await waitForHttp(`http://127.0.0.1:${BARE_PORT}/`);
  const org = await (
    await fetch(`${origin}/api/v1/admin/organizations`, {
      method: 'POST',
      headers: { 'x-api-key': adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', plan: 'enterprise' }),
    })
  ).json();
  const orgHeaders = { 'x-api-key': org.token, 'content-type': 'application/json' };
  let n = 0;
  const projectBody = () =>
    JSON.stringify({
      name: `Empresa ${n}`,
      cnpj: cnpjFrom(n++),
      razaoSocial: 'EMPRESA BENCH LTDA',
      regimeTributario: '1',
      codigoMunicipio: '2611606', // Recife: national-adherent, no sandbox ADN parametrisation (São Paulo has its own engine)
      inscricaoMunicipal: '12345',
      defaultNbs: '115021000',
      defaultIndicadorOperacao: '100301',
      defaultClassificacaoTributaria: '000001',
      defaultCstIbscbs: '000',
    });
  const first = await (
    await fetch(`${origin}/api/v1/org/projects`, { method: 'POST', headers: orgHeaders, body: projectBody() })
  ).json();
  const key = await (
    await fetch(`${origin}/api/v1/org/projects/${first.id}/api-keys`, {
      method: 'POST',
      headers: orgHeaders,
      body: JSON.stringify({ name: 'bench', rateLimitPerMinute: 1_000_000 }),
    })
  ).json();

  const run = (path: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: () => string) =>
    load({ origin, path, method, headers, body, connections: CONNECTIONS, seconds: SECONDS });

  // warm-up
  await run('/api/v1/org/projects?limit=20', 'GET', { 'x-api-key': org.token });
  const postProjects = await run('/api/v1/org/projects', 'POST', orgHeaders, projectBody);
  const getProjects = await run('/api/v1/org/projects?limit=20', 'GET', { 'x-api-key': org.token });
  await load({
    origin: `http://127.0.0.1:${BARE_PORT}`,
    path: '/emitir',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: () => invoice,
    connections: CONNECTIONS,
    seconds: 2,
  });
  const bareRun = await load({
    origin: `http://127.0.0.1:${BARE_PORT}`,
    path: '/emitir',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: () => invoice,
    connections: CONNECTIONS,
    seconds: SECONDS,
  });
  await run('/api/v1/emitir', 'POST', { 'x-api-key': key.key, 'content-type': 'application/json' }, () => invoice);
  const emitir = await run(
    '/api/v1/emitir',
    'POST',
    { 'x-api-key': key.key, 'content-type': 'application/json' },
    () => invoice,
  );

  printTable(
    `API on PostgreSQL, ${CONNECTIONS} connections, ${SECONDS} s each (same 2-core box as the load generator)`,
    [
      ['operation', 'req/s', 'p50 ms', 'p99 ms', 'statuses', 'vs anchor'],
      [
        'GET /org/projects',
        fmt(getProjects.rps),
        fmt(getProjects.p50, 1),
        fmt(getProjects.p99, 1),
        JSON.stringify(getProjects.statuses),
        '',
      ],
      [
        'POST /org/projects',
        fmt(postProjects.rps),
        fmt(postProjects.p50, 1),
        fmt(postProjects.p99, 1),
        JSON.stringify(postProjects.statuses),
        '',
      ],
      [
        'bare Fastify JSON POST (anchor)',
        fmt(bareRun.rps),
        fmt(bareRun.p50, 1),
        fmt(bareRun.p99, 1),
        JSON.stringify(bareRun.statuses),
        '100 %',
      ],
      [
        'POST /emitir (durable 202)',
        fmt(emitir.rps),
        fmt(emitir.p50, 1),
        fmt(emitir.p99, 1),
        JSON.stringify(emitir.statuses),
        `${fmt((100 * emitir.rps) / bareRun.rps, 1)} %`,
      ],
    ],
  );
} finally {
  await service.stop();
  await bare.stop();
  await db.drop();
}
