import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** `npm run sandbox` on a port in use: one line naming the port and the setting, exit 1, no stack trace. */

const root = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'nfse-sandbox-start-'));
let holder: Server | undefined;
afterAll(() => {
  holder?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run sandbox start-up failures', () => {
  it('a port in use: one line, exit 1', async () => {
    holder = createServer();
    const port = await new Promise<number>((resolve) =>
      holder!.listen(0, '127.0.0.1', () => resolve((holder!.address() as { port: number }).port)),
    );
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/main.ts'], {
      cwd: root,
      env: { ...process.env, SANDBOX_PORT: String(port), SANDBOX_HOST: '127.0.0.1', SANDBOX_DIR: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      `Cannot start the sandbox: port ${port} is already in use on 127.0.0.1 (set SANDBOX_PORT to a free port)`,
    ]);
  }, 60_000);
});
