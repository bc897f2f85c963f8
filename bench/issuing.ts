/**
 * End-to-end issuing on PostgreSQL against the Sefin sandbox, each in its own process on this box, both compiled
 * (`node scripts/run.mjs`, what `npm start` runs):
 *   - issued notes/s (accept → worker → mTLS → sandbox → issued), anchored on raw RSA-2048 signatures/s
 *     measured in the same run (goal ≥ 20 %);
 *   - the same with the sandbox answering after 2 s (goal ≥ 80 % of the no-latency figure);
 *   - peak RSS of the API process and of the job worker process it forks on PostgreSQL (src/main.ts) with 2,000 notes
 *     in flight (goal ≤ 300 MB).
 *
 *   npx tsx bench/issuing.ts [notes] [workerConcurrency]   (needs PostgreSQL: BENCH_DATABASE_URL or DATABASE_URL)
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Agent } from 'undici';
// @ts-expect-error plain JavaScript build script, no declarations
import { build, buildIsFresh } from '../scripts/build.mjs';
import { BENCH_INVOICE, createDatabase, fmt, onboardBenchProject, printTable, startChild, waitForHttp } from './lib.ts';

const NOTES = Number(process.argv[2] ?? 1000);
const CONCURRENCY = Number(process.argv[3] ?? 128);
const PORT = 3730;
const SANDBOX_PORT = 3731;

/** Peak RSS (VmHWM, MB) of the job worker process `src/main.ts` forks on PostgreSQL, 0 when there is none. */
function workerPeakRssMb(servicePid: number): number {
  try {
    const pids = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(servicePid)], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('main.'))
      .map((l) => Number(l.trim().split(/\s+/)[0]))
      .filter(Boolean);
    return Math.max(
      0,
      ...pids.map((pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024),
    );
  } catch {
    return 0;
  }
}

function rawRsaPerSecond(): number {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const data = randomBytes(3500);
  const end = performance.now() + 1000;
  let n = 0;
  while (performance.now() < end) {
    sign('sha1', data, key);
    n++;
  }
  return n;
}

const invoice = BENCH_INVOICE;

const db = await createDatabase();
const dataDir = `/tmp/nfse-bench-issuing-${process.pid}`;
const sandboxDir = join(dataDir, 'sandbox-alone');
const adminKey = `svc_admin_${randomBytes(16).toString('hex')}`;
if (!buildIsFresh()) {
  console.error('building dist/ (not timed)…');
  await build({ quiet: true });
}
// both run compiled, as `npm start` and `npm run sandbox` run them
const sandbox = startChild(
  'src/sandbox/main.ts',
  [],
  { SANDBOX_PORT: String(SANDBOX_PORT), SANDBOX_DIR: sandboxDir, LOG_LEVEL: 'error' },
  { compiled: true },
);
let service: ReturnType<typeof startChild> | null = null;
const client = new pg.Client({ connectionString: db.url });
try {
  const sandboxUrl = `https://127.0.0.1:${SANDBOX_PORT}`;
  for (let i = 0; i < 100; i++) {
    try {
      readFileSync(join(sandboxDir, 'tls.cert.pem'));
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  await new Promise((r) => setTimeout(r, 1000));
  service = startChild(
    'src/main.ts',
    [],
    {
      DATABASE_URL: db.url,
      NFSE_ADMIN_KEY: adminKey,
      NFSE_MASTER_KEY: randomBytes(32).toString('hex'),
      NFSE_GOVERNMENT: 'sandbox',
      NFSE_SEFIN_SANDBOX_URL: sandboxUrl,
      NFSE_SEFIN_SANDBOX_CA_FILE: join(sandboxDir, 'ca.cert.pem'),
      NFSE_WORKER_CONCURRENCY: String(CONCURRENCY),
      PORT: String(PORT),
      LOG_LEVEL: 'error',
      DATA_DIR: dataDir,
    },
    { compiled: true },
  );
  const origin = `http://127.0.0.1:${PORT}/api/v1`;
  await waitForHttp(`${origin}/health`);
  await client.connect();
  const key = await onboardBenchProject(origin, adminKey);

  const setLatency = (latencyMs: number) =>
    fetch(`${sandboxUrl}/__sandbox/faults`, {
      method: 'PUT',
      body: JSON.stringify({ latencyMs }),
      headers: { 'content-type': 'application/json' },
      // the sandbox CA is private: this control call is not part of the measurement
      dispatcher: new Agent({ connect: { rejectUnauthorized: false } }),
    } as RequestInit);

  async function round(count: number): Promise<{ seconds: number; issued: number; errors: number }> {
    const before = await client.query("select count(*)::int as n from invoices where status in ('issued','error')");
    const t0 = performance.now();
    for (let i = 0; i < count; i += 100) {
      const statuses = await Promise.all(
        Array.from({ length: Math.min(100, count - i) }, () =>
          fetch(`${origin}/emitir`, {
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: JSON.stringify(invoice),
          }).then(async (r) => (r.status === 202 ? 202 : `${r.status} ${await r.text()}`)),
        ),
      );
      const refused = statuses.find((s) => s !== 202);
      if (refused) throw new Error(`POST /emitir refused: ${refused}`);
    }
    for (;;) {
      const r = await client.query(
        "select count(*) filter (where status = 'issued')::int as issued, count(*) filter (where status = 'error')::int as errors, count(*) filter (where status in ('issued','error'))::int as done from invoices",
      );
      if (performance.now() - t0 > 600_000) {
        const detail = await client.query('select status, error_code, count(*)::int from invoices group by 1, 2');
        throw new Error(`round did not finish: ${JSON.stringify(detail.rows)}`);
      }
      if (process.env.BENCH_DEBUG) {
        const detail = await client.query('select status, error_code, count(*)::int from invoices group by 1, 2');
        console.error(JSON.stringify(detail.rows));
      }
      if (r.rows[0].done - before.rows[0].n >= count) {
        return { seconds: (performance.now() - t0) / 1000, issued: r.rows[0].issued, errors: r.rows[0].errors };
      }
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  console.error('service ready; warming up');
  await round(50); // warm-up (certificate parse, TLS sessions, JIT)
  const rsa = rawRsaPerSecond();
  const fast = await round(NOTES);
  await setLatency(2000);
  const slow = await round(NOTES);
  await setLatency(5000);
  const beforePeak = service.peakRssMb();
  const beforeWorkerPeak = workerPeakRssMb(service.process.pid!);
  const inflight = await round(2000);
  const peak = service.peakRssMb();
  const workerPeak = workerPeakRssMb(service.process.pid!);
  await setLatency(0);
  const fastRate = NOTES / fast.seconds;
  const slowRate = NOTES / slow.seconds;
  printTable(
    `End-to-end issuing on PostgreSQL (API+worker process, sandbox process, load generator on one 2-core box; worker concurrency ${CONCURRENCY})`,
    [
      ['figure', 'value', 'anchor', 'ratio'],
      ['raw RSA-2048 sign/s (KeyObject, 1 core)', fmt(rsa), '', ''],
      [`issued notes/s (${NOTES} notes)`, fmt(fastRate, 1), `${fmt(rsa)} RSA/s`, `${fmt((100 * fastRate) / rsa, 1)} %`],
      [
        `issued notes/s, sandbox answering after 2 s`,
        fmt(slowRate, 1),
        `${fmt(fastRate, 1)} notes/s`,
        `${fmt((100 * slowRate) / fastRate, 1)} %`,
      ],
      [
        'peak RSS, 2,000 notes in flight (5 s latency): API process',
        `${fmt(peak)} MB`,
        `${fmt(beforePeak)} MB before`,
        `${fmt(2000 / inflight.seconds, 1)} notes/s`,
      ],
      [
        '  … and its job worker process (forked on PostgreSQL)',
        `${fmt(workerPeak)} MB`,
        `${fmt(beforeWorkerPeak)} MB before`,
        '',
      ],
    ],
  );
  console.log(`\n(errors: ${fast.errors + slow.errors + inflight.errors})`);
} finally {
  await client.end().catch(() => undefined);
  await service?.stop();
  await sandbox.stop();
  await db.drop();
}
