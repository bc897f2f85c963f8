/**
 * Intake while issuing, as users run the service: `npm start` exactly as the README starts it (API, job workers and
 * database in the service process; the local sandboxes in their own child process), on the embedded default
 * (PGlite) and on PostgreSQL, next to a bare Fastify JSON POST measured in the same run (the anchor).
 *
 * For each setting: start to healthy; a warm-up as the anchor's (the same load for 2 seconds, its notes issued);
 * `POST /emitir` accepted/s, p50 and p99 with CONNECTIONS concurrent clients
 * for SECONDS while the accepted notes are being issued; then, until every accepted note is issued with its PDF:
 * issued notes/s end to end and the CPU seconds per issued note of the service process and, apart, of the sandbox
 * process (from /proc); peak RSS of the service process, and what it held at its peak: the service runs with
 * NFSE_MEMORY_TRACE (src/main.ts: every 250 ms a line of process.memoryUsage() and the embedded database's WebAssembly
 * memory), and the sample of highest RSS is split into the WebAssembly memory (its size: RSS counts the pages touched),
 * the rest of `external`, the V8 heap (committed, and used) and the rest (the node binary, compiled code, malloc'd
 * native memory, stacks; RSS minus the others, so below zero when the untouched part of the external memory, the
 * WebAssembly memories' mostly, outweighs it); and the resident pages themselves, by kind, at the highest of the
 * service process's /proc/<pid>/smaps samples taken every second (`proc-memory.ts`: WebAssembly memories, malloc,
 * mapped files, other anonymous memory). Every note accepted stays in flight until the drain issues it: the default 8 seconds accept
 * about 10,000-12,000 notes on each setting on the 2-core box (1,200-1,500 req/s), five times the issue's 2,000 of the RSS
 * goal, and the drain takes minutes (issuing runs at 40-60 notes/s); `bench/intake.ts 2` stays near 2,000.
 *
 *   npx tsx bench/intake.ts [seconds=8] [connections=32] [settings=pglite,postgres]
 * (setting `postgres-single`: PostgreSQL with API and workers in one process, NFSE_SINGLE_PROCESS=1, for comparison)
 * PostgreSQL: BENCH_DATABASE_URL / DATABASE_URL / 127.0.0.1:5432 test (a fresh database is created and dropped).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
// @ts-expect-error plain JavaScript build script, no declarations
import { build, buildIsFresh } from '../scripts/build.mjs';
import {
  BENCH_INVOICE,
  createDatabase,
  fmt,
  load,
  onboardBenchProject,
  printTable,
  ROOT,
  startChild,
  waitForHttp,
} from './lib.ts';
import { type ResidentBreakdown, watchResidentPeak } from './proc-memory.ts';

const SECONDS = Number(process.argv[2] ?? 8);
const CONNECTIONS = Number(process.argv[3] ?? 32);
const SETTINGS = (process.argv[4] ?? 'pglite,postgres').split(',');
/** The warm-up load before each measured one, the anchor's and the service's alike. */
const WARM_SECONDS = 2;

const invoice = JSON.stringify(BENCH_INVOICE);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** CPU seconds (user + system) of a process so far (/proc, clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

function peakRssMb(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
}

function childrenOf(pid: number): { pid: number; args: string }[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => {
        const [p, ...args] = l.trim().split(/\s+/);
        return { pid: Number(p), args: args.join(' ') };
      });
  } catch {
    return [];
  }
}

interface Figures {
  setting: string;
  healthyMs: number;
  accepted: number;
  rps: number;
  p50: number;
  p99: number;
  statuses: Record<number, number>;
  /** CPU of the process that serves HTTP during the load, per accepted request (with whatever else it ran then) */
  apiCpuMsPerRequest: number;
  issuedPerSecond: number;
  serviceCpuMsPerNote: number;
  sandboxCpuMsPerNote: number;
  peakRss: number;
  /** the forked worker process's (PostgreSQL), null when the workers run in the service process */
  workerPeakRss: number | null;
  /** the service process's sample of highest RSS in its memory trace (null if it wrote none) */
  memoryAtPeak: MemorySample | null;
  /** the service process's resident pages by kind at its highest sample (/proc/<pid>/smaps every second) */
  residentAtPeak: ResidentBreakdown | null;
  errors: number;
}

/** One line of the service's memory trace (NFSE_MEMORY_TRACE, src/main.ts), bytes. */
interface MemorySample {
  pid: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** PGlite's WebAssembly memory (part of external), null on PostgreSQL */
  wasm: number | null;
}

/** The sample of highest RSS of one process in a memory trace file. */
function memoryAtPeak(file: string, pid: number): MemorySample | null {
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').split('\n');
  } catch {
    return null;
  }
  let peak: MemorySample | null = null;
  for (const line of lines) {
    if (!line) continue;
    const sample = JSON.parse(line) as MemorySample;
    if (sample.pid === pid && (!peak || sample.rss > peak.rss)) peak = sample;
  }
  return peak;
}

async function measure(setting: string): Promise<Figures> {
  const parent = mkdtempSync(join(tmpdir(), 'nfse-bench-intake-'));
  const port = await freePort();
  const adminKey = `svc_admin_${randomBytes(16).toString('hex')}`;
  const memoryTrace = join(parent, 'memory.jsonl');
  const db = setting.startsWith('postgres') ? await createDatabase() : null;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: join(parent, 'data'),
    PORT: String(port),
    LOG_LEVEL: 'error',
    NFSE_ADMIN_KEY: adminKey,
    NFSE_MASTER_KEY: randomBytes(32).toString('hex'),
    NFSE_MEMORY_TRACE: memoryTrace,
  };
  delete env.DATABASE_URL;
  if (db) {
    env.DATABASE_URL = db.url;
    env.NFSE_GOVERNMENT = 'sandbox'; // with PostgreSQL the default is the official services
    // postgres-single: API and workers in one process (NFSE_SINGLE_PROCESS=1), the layout before the worker process
    if (setting === 'postgres-single') env.NFSE_SINGLE_PROCESS = '1';
  }
  const t0 = performance.now();
  // BENCH_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", refused in NODE_OPTIONS): node scripts/run.mjs
  // src/main.ts started directly with those flags instead of npm start's own (its memory settings, package.json) —
  // a profiling and comparison aid; the figures are npm start's without it.
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean);
  const npm: ChildProcess = nodeFlags
    ? spawn(process.execPath, [...nodeFlags, 'scripts/run.mjs', 'src/main.ts'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      })
    : spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const origin = `http://127.0.0.1:${port}/api/v1`;
  try {
    for (;;) {
      try {
        if ((await fetch(`${origin}/health`)).status === 200) break;
      } catch {
        /* starting */
      }
      if (performance.now() - t0 > 120_000) throw new Error('not healthy after 120 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    const healthyMs = performance.now() - t0;
    const service = nodeFlags ? { pid: npm.pid! } : childrenOf(npm.pid!).find((c) => c.args.includes('node'))!;
    const sandbox = childrenOf(service.pid).find((c) => c.args.includes('sandbox/main'));
    if (!sandbox)
      throw new Error(
        `no sandbox child process found under ${JSON.stringify(service)}: ${JSON.stringify(childrenOf(service.pid))}`,
      );

    const key = await onboardBenchProject(origin, adminKey);
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };

    const emitLoad = (seconds: number, ids: string[]) =>
      load({
        origin: `http://127.0.0.1:${port}`,
        path: '/api/v1/emitir',
        method: 'POST',
        headers,
        body: () => invoice,
        connections: CONNECTIONS,
        seconds,
        onBody: (status, text) => {
          if (status === 202) ids.push(JSON.parse(text).invoiceId);
        },
      });
    // warm-up, as the anchor's: the same load for WARM_SECONDS, every note it accepted then issued (the whole
    // pipeline: certificate parse, TLS sessions, the compiler's optimized code, pdfkit load), so the figures are those
    // of a running service, not of its first seconds
    const warm: string[] = [];
    await emitLoad(WARM_SECONDS, warm);
    await waitIssued(origin, key, warm);

    // on PostgreSQL npm start forks the job workers into a process of their own (src/main.ts): the service's CPU is
    // that of both, the sandbox's is counted apart
    const workers = childrenOf(service.pid).filter((c) => c.pid !== sandbox.pid && c.args.includes('node'));
    const servicePids = [service.pid, ...workers.map((w) => w.pid)];
    const serviceCpu = () => servicePids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const cpu0 = { service: serviceCpu(), sandbox: cpuSeconds(sandbox.pid), api: cpuSeconds(service.pid) };
    const resident = watchResidentPeak(service.pid);
    const started = performance.now();
    const ids: string[] = [];
    const intake = await emitLoad(SECONDS, ids);
    const apiCpuDuringLoad = cpuSeconds(service.pid) - cpu0.api;
    const { errors } = await waitIssued(origin, key, ids);
    const seconds = (performance.now() - started) / 1000;
    const cpu1 = { service: serviceCpu(), sandbox: cpuSeconds(sandbox.pid) };
    const residentAtPeak = resident.stop();
    return {
      setting,
      healthyMs,
      accepted: ids.length,
      rps: intake.rps,
      p50: intake.p50,
      p99: intake.p99,
      statuses: intake.statuses,
      apiCpuMsPerRequest: (apiCpuDuringLoad * 1000) / Math.max(1, ids.length),
      issuedPerSecond: ids.length / seconds,
      serviceCpuMsPerNote: ((cpu1.service - cpu0.service) * 1000) / ids.length,
      sandboxCpuMsPerNote: ((cpu1.sandbox - cpu0.sandbox) * 1000) / ids.length,
      peakRss: peakRssMb(service.pid),
      workerPeakRss: workers.length > 0 ? peakRssMb(workers[0]!.pid) : null,
      memoryAtPeak: memoryAtPeak(memoryTrace, service.pid),
      residentAtPeak,
      errors,
    };
  } finally {
    await new Promise<void>((resolve) => {
      if (npm.exitCode !== null) return resolve();
      npm.once('exit', () => resolve());
      npm.kill('SIGTERM');
      setTimeout(() => npm.kill('SIGKILL'), 20_000).unref();
    });
    afterAllSettings.push(async () => {
      await db?.drop();
      rmSync(parent, { recursive: true, force: true });
    });
  }
}

/**
 * The settings' data directories and databases, removed once every setting is measured, not between settings. On
 * ext4 without a journal (this VM's disk) the kernel skips a recently freed inode one by one each time it creates a
 * file (`recently_deleted`, for up to 5 minutes while the freed inodes' blocks are dirty): right after 36,000 files and
 * directories laid out as a setting's documents were removed, creating a note's directory and two files cost 1.5-1.8
 * ms of kernel CPU instead of 0.2 ms (still 0.7-1.0 ms 40 s later), which the next setting's CPU per note counted.
 * Delete nothing else in bulk on the machine in the minutes before a run either (a test suite does).
 */
const afterAllSettings: (() => Promise<void>)[] = [];

/**
 * Waits until every note is issued with its PDF (or ended in error), asking little of the service while it works: the
 * newest pending note is polled every 250 ms (notes are issued roughly in order), and only once it is done are the
 * others swept, oldest first, 8 at a time (a sweep stops at the first one not done yet).
 */
async function waitIssued(origin: string, key: string, ids: string[]): Promise<{ errors: number }> {
  const pool = new Pool(new URL(origin).origin, { connections: 8 });
  let pending = [...ids];
  let errors = 0;
  const deadline = performance.now() + 900_000;
  const stateOf = async (id: string) => {
    const res = await pool.request({
      path: `/api/v1/invoices/${id}/status`,
      method: 'GET',
      headers: { 'x-api-key': key },
    });
    const s = (await res.body.json()) as { status: string; pdfUrl?: string | null };
    if (s.status === 'issued' && s.pdfUrl) return 'issued';
    return ['error', 'rejected', 'failed'].includes(s.status) ? 'error' : 'pending';
  };
  try {
    while (pending.length > 0) {
      if (performance.now() > deadline) throw new Error(`${pending.length} notes still pending after 15 min`);
      if ((await stateOf(pending.at(-1)!)) === 'pending') {
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      let swept = 0;
      sweep: for (; swept < pending.length; swept += 8) {
        const batch = pending.slice(swept, swept + 8);
        const states = await Promise.all(batch.map(stateOf));
        for (const [j, state] of states.entries()) {
          if (state === 'pending') {
            swept += j;
            break sweep;
          }
          if (state === 'error') errors++;
        }
      }
      pending = pending.slice(Math.min(swept, pending.length));
      if (pending.length > 0) await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await pool.close();
  }
  return { errors };
}

if (!buildIsFresh()) {
  console.error('building dist/ (not timed)…');
  await build({ quiet: true });
}
const barePort = await freePort();
const bare = startChild('bench/bare-fastify.ts', [], { PORT: String(barePort) });
await waitForHttp(`http://127.0.0.1:${barePort}/`);
const bareLoad = (seconds: number) =>
  load({
    origin: `http://127.0.0.1:${barePort}`,
    path: '/emitir',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: () => invoice,
    connections: CONNECTIONS,
    seconds,
  });
await bareLoad(WARM_SECONDS);
const anchor = await bareLoad(SECONDS);
await bare.stop();

const results: Figures[] = [];
try {
  for (const setting of SETTINGS) results.push(await measure(setting));
} finally {
  for (const cleanup of afterAllSettings) await cleanup();
}

printTable(
  `Intake while issuing, npm start as the README runs it, ${CONNECTIONS} connections for ${SECONDS} s (2-core box shared with the load generator)`,
  [
    ['setting', 'req/s', 'p50 ms', 'p99 ms', 'vs bare Fastify', 'HTTP process CPU ms/request', 'statuses'],
    [
      'bare Fastify JSON POST (anchor)',
      fmt(anchor.rps),
      fmt(anchor.p50, 1),
      fmt(anchor.p99, 1),
      '100 %',
      '',
      JSON.stringify(anchor.statuses),
    ],
    ...results.map((r) => [
      `POST /emitir accepted, ${r.setting}`,
      fmt(r.rps),
      fmt(r.p50, 1),
      fmt(r.p99, 1),
      `${fmt((100 * r.rps) / anchor.rps, 1)} %`,
      fmt(r.apiCpuMsPerRequest, 2),
      JSON.stringify(r.statuses),
    ]),
  ],
);
printTable('Issuing those notes end to end (issued with the PDF stored), per setting', [
  [
    'setting',
    'start to healthy',
    'notes',
    'issued notes/s',
    'service CPU ms/note',
    'sandbox CPU ms/note',
    'peak RSS (API / worker process)',
    'errors',
  ],
  ...results.map((r) => [
    r.setting,
    `${fmt(r.healthyMs)} ms`,
    fmt(r.accepted),
    fmt(r.issuedPerSecond, 1),
    fmt(r.serviceCpuMsPerNote, 2),
    fmt(r.sandboxCpuMsPerNote, 2),
    r.workerPeakRss === null ? `${fmt(r.peakRss)} MB` : `${fmt(r.peakRss)} / ${fmt(r.workerPeakRss)} MB`,
    fmt(r.errors),
  ]),
]);
const mb = (bytes: number) => fmt(bytes / 2 ** 20);
printTable('The service process at its highest sampled RSS (memory trace every 250 ms), MB', [
  [
    'setting',
    'RSS',
    'PGlite WebAssembly memory (size)',
    'other external',
    'V8 heap total (used)',
    'rest (RSS − the others)',
  ],
  ...results.map((r) => {
    const m = r.memoryAtPeak;
    if (!m) return [r.setting, 'no trace', '', '', '', ''];
    const wasm = m.wasm ?? 0;
    return [
      r.setting,
      mb(m.rss),
      m.wasm === null ? '–' : mb(wasm),
      mb(m.external - wasm),
      `${mb(m.heapTotal)} (${mb(m.heapUsed)})`,
      mb(m.rss - m.heapTotal - m.external),
    ];
  }),
]);
printTable(
  'The service process at its highest resident total (/proc/<pid>/smaps every second, bench/proc-memory.ts), MB',
  [
    [
      'setting',
      'resident',
      'WebAssembly memories',
      'malloc (heap, arenas)',
      'mapped files (node, libraries)',
      'other anonymous (V8 heap, code, stacks)',
    ],
    ...results.map((r) => {
      const b = r.residentAtPeak;
      if (!b) return [r.setting, 'no sample', '', '', '', ''];
      return [r.setting, mb(b.total), mb(b.wasm), mb(b.malloc), mb(b.files), mb(b.otherAnonymous)];
    }),
  ],
);
