import { type ChildProcess, spawn } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_NAMES, JOB_POLICIES } from '../../src/jobs/catalogue.ts';
import { exhaustedStep } from '../../src/wiring/exhausted.ts';
import { deadLetterQueueOf } from '../../src/jobs/queue.ts';
import { outboxEvents, waitForStatus } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject, TAKER } from '../support/onboarding.ts';

/**
 * Every job ends its subject (issue 9, item 5): a handler that throws on every attempt (the test-only fault hook
 * NFSE_TEST_FAULTS, with the retries capped at 1 by NFSE_TEST_JOB_RETRY_LIMIT so the policy runs out in seconds)
 * must leave the invoice in a terminal, visible state with its event, through the catalogue's on-exhausted step.
 */

const FAST = { NFSE_TEST_JOB_RETRY_LIMIT: '1' };
const body = () => invoiceBody({ tomador: TAKER });

describe('the catalogue declares an on-exhausted step for every job', () => {
  it('has one beside each retry policy', () => {
    for (const name of JOB_NAMES) expect(JOB_POLICIES[name].onExhausted, name).toBeDefined();
    expect(JOB_POLICIES['invoice.issue'].onExhausted).toEqual({
      action: 'fail-invoice',
      code: 'INTERNAL_PROCESSING_FAILED',
    });
  });
});

describe('invoice.issue exhausted', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ ...FAST, NFSE_TEST_FAULTS: 'invoice.issue' });
  });
  afterAll(async () => t?.close());

  it('ends the invoice in error INTERNAL_PROCESSING_FAILED with nfse.error', async () => {
    const p = await onboardProject(t, { rateLimitPerMinute: 600 });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: body() });
    expect(res.status, res.text).toBe(202);
    const id = res.body.invoiceId;
    const status = await waitForStatus(t, p.apiKey, id, (s) => s.status !== 'queued' && s.status !== 'processing');
    expect(status.status).toBe('error');
    expect(status.errorCode).toBe('INTERNAL_PROCESSING_FAILED');
    expect(status.errorMessage).toMatch(/2 attempts/);
    expect(status.errorMessage).not.toMatch(/NFSE_TEST_FAULTS|injected/); // no internals to the customer
    const errors = await outboxEvents(t, { invoiceId: id, type: 'nfse.error' });
    expect(errors).toHaveLength(1);
    expect(errors[0]!.data).toMatchObject({ invoiceId: id, errorCode: 'INTERNAL_PROCESSING_FAILED' });
  });

  it('completes the batch whose items all ran out', async () => {
    const p = await onboardProject(t, { rateLimitPerMinute: 600 });
    const res = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items: [body(), body()] } });
    expect(res.status, res.text).toBe(202);
    const batchId = res.body.batchId;
    const deadline = Date.now() + 30_000;
    let batch: { status: number; body: { status: string } } | undefined;
    while (Date.now() < deadline) {
      batch = await t.request('GET', `/invoices/batch/${batchId}/status`, { key: p.apiKey });
      if (batch.body?.status !== 'processing') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(batch!.body.status).toBe('failed');
    const completed = await outboxEvents(t, { batchId, type: 'batch.completed' });
    expect(completed).toHaveLength(1);
    expect(completed[0]!.data).toMatchObject({ total: 2, issued: 0, errors: 2 });
  });
});

describe('invoice.cancel and invoice.documents exhausted', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ ...FAST, NFSE_TEST_FAULTS: 'invoice.cancel,invoice.documents' });
  });
  afterAll(async () => t?.close());

  it('documents: the invoice stays issued, documentStatus failed and visible; /xml still answers', async () => {
    const p = await onboardProject(t, { rateLimitPerMinute: 600 });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: body() });
    expect(res.status, res.text).toBe(202);
    const id = res.body.invoiceId;
    const status = await waitForStatus(t, p.apiKey, id, (s) => s.documentStatus === 'failed', 40_000);
    expect(status.status).toBe('issued');
    expect(status.documentsErrorCode).toBe('INTERNAL_PROCESSING_FAILED');
    expect(status.documentsCached).toBe(false);
    expect(await outboxEvents(t, { invoiceId: id, type: 'nfse.documents_ready' })).toHaveLength(0);
    const xml = await t.request('GET', `/invoices/${id}/xml`, { key: p.apiKey });
    expect(xml.status).toBe(200);
    expect(xml.text).toContain('<NFSe');

    // cancellation: the job throws on every attempt → cancellation failed, the invoice stays issued
    const cancel = await t.request('POST', '/cancelar', { key: p.apiKey, body: { invoiceId: id } });
    expect(cancel.status, cancel.text).toBe(202);
    const after = await waitForStatus(t, p.apiKey, id, (s) => s.cancellation?.status !== 'requested');
    expect(after.status).toBe('issued');
    expect(after.cancellation).toMatchObject({ status: 'failed', errorCode: 'INTERNAL_PROCESSING_FAILED' });
    expect(await outboxEvents(t, { invoiceId: id, type: 'nfse.cancelled' })).toHaveLength(0);
    // a failed cancellation may be asked again
    const again = await t.request('POST', '/cancelar', { key: p.apiKey, body: { invoiceId: id } });
    expect(again.status, again.text).toBe(202);
  });
});

/**
 * A last attempt that does not throw but EXPIRES (its worker hung past expireInSeconds, or was killed): pg-boss
 * fails the job itself and copies it to the job's dead-letter queue, whose worker runs the on-exhausted step.
 * `invoice.issue:hang` makes every attempt hang; NFSE_TEST_JOB_EXPIRE_SECONDS=2 lets pg-boss's supervisor expire
 * each attempt in seconds.
 */
describe('invoice.issue whose last attempt expires', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ ...FAST, NFSE_TEST_FAULTS: 'invoice.issue:hang', NFSE_TEST_JOB_EXPIRE_SECONDS: '2' });
  });
  afterAll(async () => t?.close());

  it('ends each invoice in error INTERNAL_PROCESSING_FAILED with one nfse.error and completes the batch', async () => {
    const p = await onboardProject(t, { rateLimitPerMinute: 600 });
    const res = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items: [body(), body()] } });
    expect(res.status, res.text).toBe(202);
    const batchId = res.body.batchId;
    const ids: string[] = res.body.items.map((i: { invoiceId: string }) => i.invoiceId);
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      const status = await waitForStatus(
        t,
        p.apiKey,
        id,
        (s) => s.status !== 'queued' && s.status !== 'processing',
        90_000,
      );
      expect(status.status).toBe('error');
      expect(status.errorCode).toBe('INTERNAL_PROCESSING_FAILED');
      expect(status.errorMessage).toMatch(/2 attempts/);
    }
    const batch = await t.request('GET', `/invoices/batch/${batchId}/status`, { key: p.apiKey });
    expect(batch.body.status).toBe('failed');

    // the steps are idempotent: running the on-exhausted step again (as a retried dead-letter copy would)
    // writes nothing more
    const step = exhaustedStep(t.service.ctx, 'invoice.issue');
    for (const id of ids) await step({ invoiceId: id } as never, 'job timed out');

    for (const id of ids) {
      const errors = await outboxEvents(t, { invoiceId: id, type: 'nfse.error' });
      expect(errors).toHaveLength(1);
      expect(errors[0]!.data).toMatchObject({ invoiceId: id, errorCode: 'INTERNAL_PROCESSING_FAILED' });
    }
    const completed = await outboxEvents(t, { batchId, type: 'batch.completed' });
    expect(completed).toHaveLength(1);
    expect(completed[0]!.data).toMatchObject({ total: 2, issued: 0, errors: 2 });

    // it was pg-boss that failed the attempts (expiry), and each dead-letter copy was worked to completion
    const result = (await t.service.ctx.db.execute(
      sql`select name, state, output from pgboss.job where name like 'invoice.issue%' order by name`,
    )) as unknown as { rows: { name: string; state: string; output: unknown }[] };
    const jobs = result.rows.map((r) => ({ name: r.name, state: r.state, output: r.output }));
    expect(jobs.filter((j) => j.name === 'invoice.issue')).toEqual([
      { name: 'invoice.issue', state: 'failed', output: { value: { message: 'job timed out' } } },
      { name: 'invoice.issue', state: 'failed', output: { value: { message: 'job timed out' } } },
    ]);
    expect(jobs.filter((j) => j.name === deadLetterQueueOf('invoice.issue')).map((j) => j.state)).toEqual([
      'completed',
      'completed',
    ]);
  }, 120_000);
});

/**
 * The same on PostgreSQL with worker processes: the worker that holds the last attempt is killed (kill -9), so
 * nothing of ours sees the attempt end; pg-boss expires it and another worker process ends the invoice from the
 * dead-letter queue.
 */
describe.skipIf(!process.env.DATABASE_URL)('invoice.issue whose worker is killed (kill -9) on its last attempt', () => {
  const root = new URL('../../', import.meta.url).pathname;
  const children = new Set<ChildProcess>();
  let t: TestService;

  function spawnWorker(extra: Record<string, string> = {}): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role=worker'], {
      cwd: root,
      env: { ...process.env, ...t.env, NFSE_ROLE: 'worker', LOG_LEVEL: 'warn', ...extra },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.add(child);
    child.on('exit', () => children.delete(child));
    return child;
  }

  async function activeIssueJobs(): Promise<number> {
    const result = (await t.service.ctx.db.execute(
      sql`select count(*)::int as n from pgboss.job where name = 'invoice.issue' and state = 'active'`,
    )) as unknown as { rows: { n: number }[] };
    return result.rows[0]!.n;
  }

  beforeAll(async () => {
    // the API process runs no workers; one attempt only, expiring 3 s after it started
    t = await startTestService({ NFSE_ROLE: 'api', NFSE_TEST_JOB_RETRY_LIMIT: '0', NFSE_TEST_JOB_EXPIRE_SECONDS: '3' });
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await t?.close();
  });

  it('ends the invoice in error INTERNAL_PROCESSING_FAILED with one nfse.error', async () => {
    const p = await onboardProject(t, { rateLimitPerMinute: 600 });
    // a worker that takes the job and holds it (its handler hangs), heartbeating while it lives
    const holder = spawnWorker({ NFSE_TEST_FAULTS: 'invoice.issue:hang' });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: body() });
    expect(res.status, res.text).toBe(202);
    const id = res.body.invoiceId;
    const deadline = Date.now() + 60_000;
    while ((await activeIssueJobs()) === 0) {
      if (Date.now() > deadline) throw new Error('the worker never took the job');
      await new Promise((r) => setTimeout(r, 200));
    }
    holder.kill('SIGKILL');
    // a healthy worker process: it would issue the invoice if the job were retried, but the attempt was the last
    spawnWorker();
    const status = await waitForStatus(
      t,
      p.apiKey,
      id,
      (s) => s.status !== 'queued' && s.status !== 'processing',
      90_000,
    );
    expect(status.status).toBe('error');
    expect(status.errorCode).toBe('INTERNAL_PROCESSING_FAILED');
    const errors = await outboxEvents(t, { invoiceId: id, type: 'nfse.error' });
    expect(errors).toHaveLength(1);
    const result = (await t.service.ctx.db.execute(
      sql`select state, output from pgboss.job where name = 'invoice.issue'`,
    )) as unknown as { rows: { state: string; output: unknown }[] };
    expect(result.rows).toEqual([{ state: 'failed', output: { value: { message: 'job timed out' } } }]);
  }, 150_000);
});
