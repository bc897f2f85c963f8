import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return res.json();
    } catch {
      /* starting */
    }
    if (Date.now() > deadline) throw new Error('no health');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `npm start` exactly as the README runs it: npm runs the compiled service (building dist/ first if stale). */
function npmStart(env: NodeJS.ProcessEnv, stdio: 'ignore' | 'pipe') {
  return spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', stdio, stdio] });
}

describe('the service process (npm start) on embedded defaults', () => {
  it('starts from an empty data directory, answers health, writes its keys 0600, and stops cleanly on SIGTERM to npm', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'nfse-life-'));
    dirs.push(parent);
    const dataDir = join(parent, 'data'); // does not exist yet: a first start
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
    delete env.DATABASE_URL;
    delete env.NFSE_ADMIN_KEY;
    delete env.NFSE_MASTER_KEY;
    const child = npmStart(env, 'ignore');
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      // Generous: the first `npm start` after a source change builds dist/ (tsc and the PGlite template) first.
      expect(await waitForHealth(`http://127.0.0.1:${port}/api/v1/health`, 150_000)).toEqual({
        status: 'ok',
        database: 'ok',
      });
      for (const file of ['admin.key', 'master.key']) {
        expect(statSync(join(dataDir, file)).mode & 0o777).toBe(0o600);
      }
      expect(existsSync(join(dataDir, 'nfse.lock'))).toBe(true);
      const servicePid = Number(readFileSync(join(dataDir, 'nfse.lock'), 'utf8'));
      expect(servicePid).not.toBe(child.pid); // npm's child is the service: the signal has to go through npm
      // The government sandboxes run beside the service, in a child process of their own (not on its event loop).
      const sandboxPids = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(servicePid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('sandbox/main'))
        .map((line) => Number(line.trim().split(/\s+/)[0]));
      expect(sandboxPids).toHaveLength(1);
      // SIGTERM to the npm process itself, as a process manager or `kill <pid of npm start>` sends it.
      child.kill('SIGTERM');
      expect(await exited).toEqual({ code: 0, signal: null });
      // The service released its data directory (graceful close) and is gone, not orphaned.
      expect(existsSync(join(dataDir, 'nfse.lock'))).toBe(false);
      expect(() => process.kill(servicePid, 0)).toThrow();
      expect(() => process.kill(sandboxPids[0]!, 0)).toThrow();
    } finally {
      child.kill('SIGKILL');
    }
  }, 240_000);

  it('refuses to start with a bad setting, naming the variable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nfse-bad-'));
    dirs.push(dataDir);
    const child = npmStart({ ...process.env, DATABASE_URL: '', PORT: 'eighty', DATA_DIR: dataDir }, 'pipe');
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain('PORT');
  }, 240_000);
});
