/**
 * Start to healthy of `npm start` as the README runs it (embedded PGlite, in-process sandbox), and of
 * `npm run dev` (tsx on the sources, how `npm start` ran before) in the same run:
 *   npx tsx bench/start.ts [rounds]
 * Each round starts the service on a fresh, not yet existing data directory (first start: the database, keys
 * and sandbox identity are created), stops it with SIGTERM to npm, and starts it again on the same directory
 * (second start). Times run from spawning `npm start` to the first 200 from /api/v1/health (polled every 10 ms);
 * the stop time is from SIGTERM to npm's exit. dist/ is built beforehand (not timed) if the sources changed.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error plain JavaScript build script, no declarations
import { build, buildIsFresh } from '../scripts/build.mjs';
import { ROOT } from './lib.ts';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

async function startOnce(script: string, dataDir: string): Promise<{ healthyMs: number; stopMs: number; cpu: number }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.NFSE_ADMIN_KEY;
  delete env.NFSE_MASTER_KEY;
  const t0 = performance.now();
  const child: ChildProcess = spawn('npm', ['run', script], { cwd: ROOT, env, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
        if (res.status === 200) break;
      } catch {
        /* not listening yet */
      }
      if (performance.now() - t0 > 120_000) throw new Error('not healthy after 120 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    const healthyMs = performance.now() - t0;
    // The service's own CPU up to healthy (its pid is in the data directory's lock file), npm's apart: on a
    // shared machine wall time depends on the neighbours, CPU time much less.
    const cpu = cpuSeconds(Number(readFileSync(join(dataDir, 'nfse.lock'), 'utf8'))) + cpuSeconds(child.pid!);
    const t1 = performance.now();
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) throw new Error(`npm start exited with ${code} after SIGTERM`);
    return { healthyMs, stopMs: performance.now() - t1, cpu };
  } finally {
    child.kill('SIGKILL');
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const rounds = Number(process.argv[2] ?? 3);
  if (!buildIsFresh()) {
    console.log('building dist/ first (not timed)…');
    await build();
  }
  anchors();
  try {
    await measure('start', 'npm start (compiled)', rounds);
    // The way `npm start` ran before (tsx on the sources, no database template), for comparison in the same run.
    await measure('dev', 'npm run dev (tsx, sources)', rounds);
  } finally {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The rounds' data directories, removed when the run ends, not after each round: on ext4 without a journal (this VM's
 * disk) creating a file right after thousands were removed costs several times the kernel CPU (bench/intake.ts,
 * `afterAllSettings`), and each round's first start would pay for the previous round's cluster.
 */
const dataDirs: string[] = [];

/**
 * The machine's speed in this run (start times are absolute, so they move with it; this box's CPU has been seen
 * to run the same work 1.6 times slower from one hour to the next): a bare `node -e 0` start and a fixed loop.
 */
function anchors() {
  const spawns: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    spawns.push(performance.now() - t0);
  }
  const t0 = performance.now();
  let x = 0;
  for (let i = 0; i < 1e8; i++) x += i;
  const loop = performance.now() - t0;
  console.log(
    `anchors: bare node start ${median(spawns).toFixed(0)} ms (median of 5), 1e8-iteration loop ${loop.toFixed(0)} ms${x < 0 ? '' : ''}`,
  );
}

async function measure(script: string, name: string, rounds: number) {
  const first: number[] = [];
  const second: number[] = [];
  const stops: number[] = [];
  const cpuFirst: number[] = [];
  const cpuSecond: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const parent = mkdtempSync(join(tmpdir(), 'nfse-bench-start-'));
    dataDirs.push(parent);
    const dataDir = join(parent, 'data');
    const a = await startOnce(script, dataDir);
    const b = await startOnce(script, dataDir);
    first.push(a.healthyMs);
    second.push(b.healthyMs);
    stops.push(a.stopMs, b.stopMs);
    cpuFirst.push(a.cpu);
    cpuSecond.push(b.cpu);
    console.log(
      `${name} round ${i + 1}: first start ${(a.healthyMs / 1000).toFixed(2)} s (${a.cpu.toFixed(2)} s CPU), ` +
        `second ${(b.healthyMs / 1000).toFixed(2)} s (${b.cpu.toFixed(2)} s CPU)`,
    );
  }
  console.log(
    `${name} to healthy (median of ${rounds}): first start ${(median(first) / 1000).toFixed(2)} s, ` +
      `second start ${(median(second) / 1000).toFixed(2)} s; CPU of npm + service to healthy: first ` +
      `${median(cpuFirst).toFixed(2)} s, second ${median(cpuSecond).toFixed(2)} s; SIGTERM to exit ` +
      `${(median(stops) / 1000).toFixed(2)} s; load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`,
  );
}

await main();
