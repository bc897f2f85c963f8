import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_INVOICE, onboardBenchProject } from '../../bench/lib.ts';

/**
 * `npm start` on PostgreSQL: the API in the service process, the job workers forked into a process of their own
 * (`NFSE_ROLE=worker`, lower priority) that uses the sandboxes the service started, and both stop with SIGTERM to npm.
 */
const root = new URL('../../', import.meta.url).pathname;
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
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

describe.runIf(await postgresAvailable())('npm start on PostgreSQL', () => {
  it('serves the API in one process and issues in a forked, lower-priority worker process; SIGTERM to npm stops both', async () => {
    const name = `nfse_worker_proc_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    cleanups.push(async () => {
      await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
      await admin.end();
    });
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const parent = mkdtempSync(join(tmpdir(), 'nfse-worker-proc-'));
    cleanups.push(() => rmSync(parent, { recursive: true, force: true }));
    const port = await freePort();
    const adminKey = `svc_admin_${randomBytes(16).toString('hex')}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: url.toString(),
      NFSE_GOVERNMENT: 'sandbox',
      DATA_DIR: join(parent, 'data'),
      PORT: String(port),
      LOG_LEVEL: 'warn',
      NFSE_ADMIN_KEY: adminKey,
      NFSE_MASTER_KEY: randomBytes(32).toString('hex'),
    };
    delete env.NFSE_ROLE;
    delete env.NFSE_SINGLE_PROCESS;
    const npm = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      npm.on('exit', (code, signal) => resolve({ code, signal })),
    );
    cleanups.push(() => void npm.kill('SIGKILL'));
    const origin = `http://127.0.0.1:${port}/api/v1`;
    const deadline = Date.now() + 150_000; // the first npm start after a source change builds dist/ first
    for (;;) {
      const ok = await fetch(`${origin}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error('no health');
      await new Promise((r) => setTimeout(r, 200));
    }
    const service = childrenOf(npm.pid!).find((c) => c.args.includes('node'))!;
    const key = await onboardBenchProject(origin, adminKey);
    const accepted = await fetch(`${origin}/emitir`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(BENCH_INVOICE),
    });
    expect(accepted.status).toBe(202);
    const { invoiceId } = (await accepted.json()) as { invoiceId: string };
    let status: { status: string; pdfUrl?: string | null } = { status: 'queued' };
    for (let i = 0; i < 300 && !(status.status === 'issued' && status.pdfUrl); i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await (await fetch(`${origin}/invoices/${invoiceId}/status`, { headers: { 'x-api-key': key } })).json();
    }
    expect(status.status).toBe('issued');
    expect(status.pdfUrl).toBeTruthy();

    const children = childrenOf(service.pid);
    const sandbox = children.filter((c) => c.args.includes('sandbox/main'));
    const workers = children.filter((c) => !c.args.includes('sandbox/main') && c.args.includes('main.js'));
    expect(sandbox).toHaveLength(1);
    expect(workers).toHaveLength(1);
    expect(getPriority(workers[0]!.pid)).toBeGreaterThan(getPriority(service.pid));

    npm.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    for (const pid of [service.pid, sandbox[0]!.pid, workers[0]!.pid]) expect(() => process.kill(pid, 0)).toThrow();
  }, 240_000);
});
