import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices } from '../../src/db/schema.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SefinSandbox, startSefinSandbox } from '../../src/sandbox/sefin/server.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * The "never issue twice" guarantee under the faults that create duplicates elsewhere: answers lost after
 * the government committed, and workers killed (kill -9) mid-transmission. Several processes share one
 * PostgreSQL, so this suite runs in the PostgreSQL pass (DATABASE_URL set; CI does it).
 */
const onPostgres = Boolean(process.env.DATABASE_URL);
const root = new URL('../../', import.meta.url).pathname;

describe.skipIf(!onPostgres)('faults on PostgreSQL: API and worker processes sharing one database', () => {
  let sandbox: SefinSandbox;
  let t: TestService;
  let p: OnboardedProject;
  let sandboxDir: string;
  const workers = new Set<ChildProcess>();

  function spawnWorker(): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role=worker'], {
      cwd: root,
      env: { ...process.env, ...t.env, NFSE_ROLE: 'worker', LOG_LEVEL: 'warn', NFSE_WORKER_CONCURRENCY: '16' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    workers.add(child);
    child.on('exit', () => workers.delete(child));
    return child;
  }

  async function killAll() {
    for (const w of workers) w.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
  }

  async function waitAllTerminal(ids: string[], timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await t.service.ctx.db
        .select({ status: invoices.status, n: sql<number>`count(*)`.mapWith(Number) })
        .from(invoices)
        .where(inArray(invoices.id, ids))
        .groupBy(invoices.status);
      const open = rows.filter((r) => r.status === 'queued' || r.status === 'processing').reduce((a, r) => a + r.n, 0);
      if (open === 0) return rows;
      if (Date.now() > deadline) throw new Error(`still open: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  async function emit(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 20) {
      const chunk = await Promise.all(
        Array.from({ length: Math.min(20, count - i) }, () =>
          t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() }),
        ),
      );
      for (const res of chunk) {
        expect(res.status).toBe(202);
        ids.push(res.body.invoiceId);
      }
    }
    return ids;
  }

  function assertNoDuplicates(ids: string[]) {
    const issued = sandbox.issued();
    const byDps = new Map<string, number>();
    for (const r of issued) byDps.set(r.idDps, (byDps.get(r.idDps) ?? 0) + 1);
    const duplicates = [...byDps.entries()].filter(([, n]) => n > 1);
    expect(duplicates).toEqual([]);
    return { issued, ids };
  }

  beforeAll(async () => {
    sandboxDir = mkdtempSync(join(tmpdir(), 'nfse-sandbox-'));
    const identity = provisionSandboxIdentity(sandboxDir);
    sandbox = await startSefinSandbox({ host: '127.0.0.1', port: 0, tls: identity.tls, signer: identity.signer });
    t = await startTestService({
      NFSE_ROLE: 'api',
      NFSE_SEFIN_SANDBOX_URL: sandbox.url,
      NFSE_SEFIN_SANDBOX_CA_FILE: identity.caFile,
    });
    p = await onboardProject(t, { rateLimitPerMinute: 100_000 });
  });

  afterAll(async () => {
    await killAll();
    await t?.close();
    await sandbox?.close();
    rmSync(sandboxDir, { recursive: true, force: true });
  });

  it('200 emissions with "commit, then drop the response" injected: no duplicate, all issued', async () => {
    sandbox.setFaults({ commitThenDropRate: 0.5 });
    spawnWorker();
    spawnWorker();
    const before = sandbox.issued().length;
    const ids = await emit(200);
    const rows = await waitAllTerminal(ids, 180_000);
    await killAll();
    sandbox.setFaults({});
    expect(rows.find((r) => r.status === 'issued')?.n).toBe(200);
    assertNoDuplicates(ids);
    expect(sandbox.issued().length - before).toBe(200);
    const keys = await t.service.ctx.db
      .select({ n: sql<number>`count(distinct ${invoices.accessKey})`.mapWith(Number) })
      .from(invoices)
      .where(inArray(invoices.id, ids));
    expect(keys[0]!.n).toBe(200);
  }, 240_000);

  it('20 kill -9 of worker processes mid-transmission: no duplicate, every invoice ends issued or error', async () => {
    sandbox.setFaults({ latencyMs: 150, latencyJitterMs: 300 });
    const before = sandbox.issued().length;
    const ids = await emit(150);
    let kills = 0;
    let current = spawnWorker();
    while (kills < 20) {
      await new Promise((r) => setTimeout(r, 700 + Math.random() * 900));
      current.kill('SIGKILL');
      kills++;
      current = spawnWorker();
    }
    const rows = await waitAllTerminal(ids, 240_000);
    await killAll();
    sandbox.setFaults({});
    const terminal = rows.reduce((a, r) => a + (r.status === 'issued' || r.status === 'error' ? r.n : 0), 0);
    expect(terminal).toBe(150);
    assertNoDuplicates(ids);
    const issuedCount = rows.find((r) => r.status === 'issued')?.n ?? 0;
    expect(sandbox.issued().length - before).toBe(issuedCount);
  }, 360_000);
});
