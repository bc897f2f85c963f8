import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pgliteTemplate } from '../support/harness.ts';

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

describe('the service process (npm start) on embedded defaults', () => {
  it('starts, answers health, writes its generated keys 0600, and exits cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nfse-life-'));
    dirs.push(dataDir);
    cpSync(await pgliteTemplate(), join(dataDir, 'db'), { recursive: true });
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
    delete env.DATABASE_URL;
    delete env.NFSE_ADMIN_KEY;
    delete env.NFSE_MASTER_KEY;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      expect(await waitForHealth(`http://127.0.0.1:${port}/api/v1/health`, 30_000)).toEqual({
        status: 'ok',
        database: 'ok',
      });
      for (const file of ['admin.key', 'master.key']) {
        expect(statSync(join(dataDir, file)).mode & 0o777).toBe(0o600);
      }
      expect(existsSync(join(dataDir, 'nfse.lock'))).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(existsSync(join(dataDir, 'nfse.lock'))).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);

  it('refuses to start with a bad setting, naming the variable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nfse-bad-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: '', PORT: 'eighty', DATA_DIR: dataDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain('PORT');
  }, 30_000);
});
