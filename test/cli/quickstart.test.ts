import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/cli/nfse/csv.ts';
import { signatureHeaders } from '../../src/webhooks/signing.ts';
import { pgliteTemplate } from '../support/harness.ts';

/**
 * The README as a new user follows it: the service started as `npm start` does (embedded defaults, a fresh data
 * directory, generated operator key), then every shell command of the README's ```sh blocks run by bash as
 * written, in order (the operator CLI, the sandbox certificate, curl requests, the `nfse` CLI), each expected to
 * succeed. Only the port differs (a free one instead of 3000: `127.0.0.1:3000` is rewritten, PORT set, and
 * NFSE_API_URL points `nfse` at it); the values the README tells to copy (ORG_TOKEN, PROJECT_ID, KEY, INVOICE_ID)
 * are taken from the previous commands' output. Also: start-up failures are one line, not a stack trace.
 */

const root = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
let service: ChildProcess | undefined;
let port: number;
let dataDir: string;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function freshDataDir(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  cpSync(await pgliteTemplate(), join(dir, 'db'), { recursive: true });
  return dir;
}

function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
  for (const name of ['DATABASE_URL', 'NFSE_ADMIN_KEY', 'NFSE_MASTER_KEY', 'NFSE_API_KEY', 'NFSE_API_URL']) {
    delete env[name];
  }
  return { ...env, ...extra };
}

function startProcess(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exit, stderr: () => stderr };
}

async function waitForHealth(url: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      /* starting */
    }
    if (Date.now() > deadline) throw new Error('no health');
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  dataDir = await freshDataDir('nfse-quickstart-');
  port = await freePort();
  const started = startProcess(serviceEnv({ DATA_DIR: dataDir, PORT: String(port) }));
  service = started.child;
  await waitForHealth(`http://127.0.0.1:${port}/api/v1/health`, 60_000);
}, 90_000);

afterAll(async () => {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service!.on('exit', resolve));
    service.kill('SIGTERM');
    await exited;
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('start-up failures', () => {
  it('a second service on the same data directory: one line naming the holder, exit 1', async () => {
    const second = startProcess(serviceEnv({ DATA_DIR: dataDir, PORT: String(await freePort()) }));
    expect(await second.exit).toBe(1);
    const lines = second.stderr().trim().split('\n');
    expect(lines, second.stderr()).toHaveLength(1);
    expect(lines[0]).toBe(
      `Cannot start the NFS-e service: the data directory ${dataDir} is in use by process ${service!.pid}; the embedded database allows one process (use DATABASE_URL for several)`,
    );
    // the running service keeps its lock and its health
    expect(readFileSync(join(dataDir, 'nfse.lock'), 'utf8').trim()).toBe(String(service!.pid));
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status).toBe(200);
  }, 60_000);

  it('a second service on a port in use: one line naming the port, exit 1, its data directory released', async () => {
    const other = await freshDataDir('nfse-port-');
    const second = startProcess(serviceEnv({ DATA_DIR: other, PORT: String(port) }));
    expect(await second.exit).toBe(1);
    const lines = second.stderr().trim().split('\n');
    expect(lines, second.stderr()).toEqual([
      `Cannot start the NFS-e service: port ${port} is already in use on 127.0.0.1 (set PORT to a free port)`,
    ]);
    expect(existsSync(join(other, 'nfse.lock'))).toBe(false);
  }, 90_000);
});

/** The commands of README's ```sh blocks, in order (a command spans lines while a single quote is open). */
function readmeCommands(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const commands: string[] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let current = '';
    for (const line of block[1]!.split('\n')) {
      current = current ? `${current}\n${line}` : line;
      if ((current.match(/'/g) ?? []).length % 2 === 0) {
        if (current.trim()) commands.push(current.trim());
        current = '';
      }
    }
  }
  return commands;
}

/** README's example CSV (the ```csv block). */
function readmeCsv(): string {
  const m = /```csv\n([\s\S]*?)```/.exec(readFileSync(join(root, 'README.md'), 'utf8'));
  if (!m) throw new Error('README has no csv block');
  return m[1]!;
}

describe("the README's shell commands", () => {
  it('run as written, in order, and succeed', async () => {
    const work = mkdtempSync(join(tmpdir(), 'nfse-readme-'));
    dirs.push(work);
    writeFileSync(join(work, 'notas.csv'), readmeCsv());
    const vars: Record<string, string> = {};
    const ran: string[] = [];
    const skipped = /^(npm ci|npm start|npm test|npm run bench|npx tsx bench|NFSE_ROLE=api npm start)\b/;

    for (const written of readmeCommands()) {
      if (skipped.test(written)) continue;
      let command = written.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`);
      command = command.replace(/^npm run /, `npm --prefix ${root} run --silent `);
      if (/nfse -- webhooks verify/.test(command)) {
        // a captured delivery, signed as the service signs it
        vars.SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
        const body = JSON.stringify({ event: 'nfse.issued', deliveryId: 'd1', data: { invoiceId: vars.INVOICE_ID } });
        const ts = Math.floor(Date.now() / 1000);
        const headers = { 'webhook-id': 'd1', 'webhook-timestamp': String(ts), 'x-svc-delivery': 'd1' };
        Object.assign(headers, signatureHeaders({ current: vars.SECRET, previous: null }, 'd1', ts, body));
        writeFileSync(join(work, 'body.bin'), body);
        writeFileSync(
          join(work, 'headers.txt'),
          Object.entries(headers)
            .map(([k, v]) => `${k}: ${v}`)
            .join('\n'),
        );
      }
      const exported = /^export (\w+)=/.exec(command)?.[1];
      const script = exported ? `${command}; printf %s "$${exported}"` : command;
      const r = spawnSync('bash', ['-c', script], {
        cwd: work,
        encoding: 'utf8',
        timeout: 240_000,
        env: {
          ...serviceEnv({ DATA_DIR: dataDir, PORT: String(port), NFSE_API_URL: `http://127.0.0.1:${port}/api/v1` }),
          ...vars,
        },
      });
      expect(r.status, `${written}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(0);
      ran.push(written.split('\n')[0]!);
      if (exported) {
        vars[exported] = r.stdout;
        continue;
      }
      let json: Record<string, unknown> | null = null;
      try {
        json = JSON.parse(r.stdout);
      } catch {
        json = null;
      }
      if (json && typeof json.status === 'number' && json.status >= 400) {
        throw new Error(`${written}\nanswered ${r.stdout}`);
      }
      // the values the README tells the reader to copy
      if (/admin -- org create/.test(command)) vars.ORG_TOKEN = String(json?.token);
      if (/\/org\/projects -H/.test(command)) vars.PROJECT_ID = String(json?.id);
      if (/\/api-keys /.test(command)) vars.KEY = String(json?.key);
      if (/nfse -- emit notas\.csv/.test(command)) {
        const results = parseCsv(readFileSync(join(work, 'notas.results.csv'), 'utf8'));
        expect(results.rows.map((row) => row[2])).toEqual(['issued', 'issued']);
        vars.INVOICE_ID = results.rows[0]![1]!;
      }
      if (/admin -- cert sandbox/.test(command)) expect(statSync(join(work, 'empresa.pfx')).mode & 0o777).toBe(0o600);
      if (/admin -- org list/.test(command)) expect(r.stdout).toContain('Acme');
    }
    // every kind of command of the quick start and of the CLI section ran
    for (const expected of [
      'curl http://127.0.0.1:3000/api/v1/health',
      'npm run admin -- org create',
      'npm run admin -- org list',
      'npm run admin -- cert sandbox',
      'npm run nfse -- emit notas.csv',
      'npm run nfse -- status',
      'npm run nfse -- download',
      'npm run nfse -- cancel',
      'npm run nfse -- webhooks verify',
    ]) {
      expect(
        ran.some((c) => c.startsWith(expected)),
        expected,
      ).toBe(true);
    }
    expect(readFileSync(join(work, 'nota.pdf')).subarray(0, 5).toString()).toBe('%PDF-');
    expect(readFileSync(join(work, `${vars.INVOICE_ID}.xml`), 'utf8')).toContain('<NFSe');
  }, 480_000);
});
