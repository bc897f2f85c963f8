import { type ChildProcess, fork } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { ConfigError, loadConfig } from './config.ts';
import { claimEmbeddedDataDir, DataDirectoryInUseError } from './db/embedded-dir.ts';
import { createLogger } from './logging.ts';
import { startSandboxProcess } from './sandbox/process.ts';
import type { RunningService } from './service.ts';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`Configuration error: ${err.message}`);
    process.exit(78);
  }
  throw err;
}

/** One line for the start-up failures an operator can fix (port taken, data directory held, database down…). */
function startupFailure(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  const where = `${config.host}:${config.port}`;
  if (e?.code === 'EADDRINUSE')
    return `port ${config.port} is already in use on ${config.host} (set PORT to a free port)`;
  if (e?.code === 'EACCES' && e.syscall === 'listen')
    return `no permission to listen on ${where} (set PORT above 1023)`;
  if (e?.code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no such local address (check HOST)`;
  if (err instanceof DataDirectoryInUseError) return err.message;
  if (e?.code === 'ECONNREFUSED' && config.databaseUrl)
    return `cannot connect to the database of DATABASE_URL (${e.message})`;
  return e instanceof Error ? e.message : String(err);
}

/**
 * On PostgreSQL the default role (`all`) runs as two processes: this one serves the API and forks the job workers
 * (`NFSE_ROLE=worker`, the `npm run worker` process) at a lower scheduling priority, so signing, validation, PDF
 * rendering and the database driver's work for issuing never share the event loop (or the CPU, when it is short)
 * that takes `POST /emitir`. The embedded database allows one process per data directory: there both stay here.
 * NFSE_SINGLE_PROCESS=1 keeps them in one process on PostgreSQL too.
 */
const splitWorkers = config.role === 'all' && config.databaseUrl !== null && process.env.NFSE_SINGLE_PROCESS !== '1';
/** The nice value of the forked worker process (0-19; higher yields the CPU to the API process). */
const WORKER_NICE = 10;

/**
 * On the embedded database the API, the job workers and PGlite share this one process, and its V8 heap was the
 * largest part of its peak RSS (bench/intake.ts, 2,000 notes in flight: 308 MB committed for 75 MB live after a full
 * collection): with no heap limit below 2 GB, V8 lets the old space grow to up to 4 times what survived the last full
 * collection. V8 reads this growing factor whenever it sets the next limit, so it is set here at run time (`npm
 * start` gives node only the young generation's size and the malloc setting, package.json): 1.3, the factor V8 itself
 * applies under a small heap limit, with no limit (a cap could run out of heap). An operator's own heap flags
 * (NODE_OPTIONS or node flags) win.
 */
const EMBEDDED_HEAP_GROWING_PERCENT = 30;
/**
 * PGlite's WebAssembly (PostgreSQL, about 9 MB of code) is compiled by V8's baseline compiler (Liftoff) at start and
 * then, function by function as they get hot, again by its optimizing compiler (TurboFan) on background threads.
 * That second compilation held 60-90 MB of memory in the process: its working memory in malloc arenas, which glibc
 * keeps, and the second copy of the code. On the embedded database this process stays on the baseline code, for
 * libxml2-wasm's validator too (`--liftoff-only`, read by V8 when a module is compiled, so set here before PGlite
 * loads; `--no-wasm-tier-up` is ignored under V8's dynamic tiering, measured). bench/intake.ts measured the same CPU per issued note and the same
 * issuing rate either way, a faster start, and a peak RSS 30-45 MB lower. An operator's own WebAssembly flags win.
 */
if (!config.databaseUrl) {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''];
  if (!given.some((a) => /--max-old-space-size|--heap-growing-percent/.test(a)))
    setFlagsFromString(`--heap-growing-percent=${EMBEDDED_HEAP_GROWING_PERCENT}`);
  if (!given.some((a) => /--(no-)?(wasm|liftoff)/.test(a))) setFlagsFromString('--liftoff-only');
}

let service: RunningService;
let workerProcess: { close(): Promise<void> } | null = null;
try {
  // the embedded database's directory first: a first start's template copy runs while the service's modules load
  if (!config.databaseUrl) claimEmbeddedDataDir(config.dataDir);
  // the local sandboxes' process starts now, beside this one loading the service (it was on the start's critical
  // path: the service waited for it after its migrations)
  const logger = createLogger(config.logLevel);
  const sandboxProcess =
    config.government !== 'live' && !config.sefinSandboxUrl
      ? startSandboxProcess({
          dir: resolve(config.dataDir, 'sandbox'),
          logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m) },
        })
      : null;
  sandboxProcess?.catch(() => undefined); // awaited by the service; an early failure is reported there
  const { startService } = await import('./service.ts');
  service = await startService(splitWorkers ? { ...config, role: 'api' } : config, { logger, sandboxProcess });
  if (splitWorkers) workerProcess = await startWorkerProcess(service);
} catch (err) {
  console.error(`Cannot start the NFS-e service: ${startupFailure(err)}`);
  if (['debug', 'trace'].includes(config.logLevel)) console.error(err);
  process.exit(1);
}

/**
 * A worker's heap holds its jobs in flight, a small fraction of a megabyte each, yet V8 lets the old space of a busy
 * process grow far past its live data before collecting (bench/issuing.ts: 403 MB peak RSS with 2,000 notes in
 * flight at concurrency 128; 266 MB with a 160 MB cap, same throughput). The worker gets a cap scaled to its
 * concurrency (160 MB + 0.5 MB per job slot) unless the operator set one (NODE_OPTIONS or node flags). At 128 MB +
 * 0.5 MB per slot the default worker (32 slots, 144 MB) ran out of heap in bench/intake.ts on PostgreSQL (4,000 notes
 * accepted in 8 s, live heap 138 MB after a full collection); with no cap its heap peaked at 151 MB (RSS 286 MB).
 */
function workerHeapFlags(): string[] {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('--max-old-space-size'));
  return given ? [] : [`--max-old-space-size=${Math.round(160 + config.workerConcurrency / 2)}`];
}

/** Forks this entry as the worker role, pointed at the sandboxes this process started; resolves once it is up. */
function startWorkerProcess(api: RunningService): Promise<{ close(): Promise<void> }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NFSE_ROLE: 'worker', NFSE_WORKER_OF: String(process.pid) };
  const sandboxCa = resolve(config.dataDir, 'sandbox', 'ca.cert.pem');
  if (config.government === 'sandbox' && !config.sefinSandboxUrl && api.ctx.government.caPem) {
    // the sandboxes run in this process's child: the worker talks to the same ones
    env.NFSE_SEFIN_SANDBOX_URL = new URL(api.ctx.government.sefinBaseUrl(2)).origin;
    if (existsSync(sandboxCa)) env.NFSE_SEFIN_SANDBOX_CA_FILE = sandboxCa;
  }
  const child: ChildProcess = fork(process.argv[1]!, [], {
    env,
    execArgv: [...process.execArgv, ...workerHeapFlags()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    if (child.pid) setPriority(child.pid, WORKER_NICE);
  } catch {
    /* not permitted here: same priority */
  }
  let closing = false;
  return new Promise((resolveReady, reject) => {
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`the worker process exited while starting (code ${code}, signal ${signal})`));
    child.once('exit', onExit);
    child.on('message', (message: { type?: string }) => {
      if (message?.type !== 'worker-ready') return;
      child.off('exit', onExit);
      child.on('exit', (code, signal) => {
        if (closing) return;
        // a worker that dies is not replaced in place: stop, and let the process manager restart the service
        api.ctx.logger.error({ code, signal }, 'the worker process exited; stopping the service');
        void shutdown('worker exit', 1);
      });
      resolveReady({
        close: () =>
          new Promise<void>((done) => {
            if (closing || child.exitCode !== null || child.signalCode !== null) return done();
            closing = true;
            const kill = setTimeout(() => child.kill('SIGKILL'), 25_000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
/**
 * NFSE_MEMORY_TRACE=<file> (a diagnostic, read by bench/intake.ts): every 250 ms this process appends one JSON line of
 * its memory to the file: RSS, the V8 heap (used, total), external memory and array buffers (process.memoryUsage();
 * external counts the embedded database's WebAssembly memory) and that WebAssembly memory alone.
 */
const memoryTrace = process.env.NFSE_MEMORY_TRACE;
if (memoryTrace) {
  setInterval(() => {
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    const wasm = service.ctx.database.engineMemoryBytes();
    const line = { pid: process.pid, role: config.role, rss, heapUsed, heapTotal, external, arrayBuffers, wasm };
    appendFileSync(memoryTrace, `${JSON.stringify(line)}\n`);
  }, 250).unref();
}

if (service.url)
  service.ctx.logger.info(`NFS-e service listening on ${service.url}/api/v1 (docs at ${service.url}/docs)`);
else service.ctx.logger.info(`NFS-e worker started (role ${config.role})`);

// The worker process of an API process (above): ready once started; stops when its parent goes away (kill -9 too).
if (process.env.NFSE_WORKER_OF && typeof process.send === 'function') {
  process.send({ type: 'worker-ready' });
  process.on('disconnect', () => void shutdown('parent gone'));
}

let stopping = false;
async function shutdown(signal: string, exitCode = 0) {
  if (stopping) return;
  stopping = true;
  service.ctx.logger.info({ signal }, 'shutting down: no new requests, finishing in-flight work');
  const timer = setTimeout(() => {
    service.ctx.logger.error('shutdown took too long; exiting');
    process.exit(1);
  }, 30_000);
  timer.unref();
  // the workers first: their jobs in flight finish against the sandboxes and database this process still holds
  await workerProcess?.close();
  await service.close();
  process.exit(exitCode);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
