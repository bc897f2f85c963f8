import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batches, invoices, organizations } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/** POST /emitir/batch with an Idempotency-Key: same key + same body → the first 202 replayed, nothing queued twice. */

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t, { rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t?.close();
});

async function counts() {
  const db = t.service.ctx.db;
  const [inv] = await db.select({ n: count() }).from(invoices).where(eq(invoices.projectId, p.projectId));
  const [bat] = await db.select({ n: count() }).from(batches).where(eq(batches.projectId, p.projectId));
  const [org] = await db
    .select({ used: organizations.creditsUsed })
    .from(organizations)
    .where(eq(organizations.id, p.orgId));
  return { invoices: inv!.n, batches: bat!.n, credits: org!.used };
}

const items = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => invoiceBody({ referencia: `${tag}-${i}` }));

describe('POST /emitir/batch with Idempotency-Key', () => {
  it('replays the first 202 for the same key and body, without queuing or charging again', async () => {
    const before = await counts();
    const body = { items: items(3, 'idem-a') };
    const headers = { 'idempotency-key': 'file-abc:chunk-0' };
    const first = await t.request('POST', '/emitir/batch', { key: p.apiKey, body, headers });
    expect(first.status, first.text).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.body.items).toHaveLength(3);

    // the same body with its keys in another order is the same request
    const reordered = { items: body.items.map((item) => Object.fromEntries(Object.entries(item).reverse())) };
    const again = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: reordered, headers });
    expect(again.status, again.text).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);

    const after = await counts();
    expect(after.invoices - before.invoices).toBe(3);
    expect(after.batches - before.batches).toBe(1);
    expect(after.credits - before.credits).toBe(3);

    const status = await t.request('GET', `/invoices/batch/${first.body.batchId}/status`, { key: p.apiKey });
    expect(status.status).toBe(200);
    expect(status.body.total).toBe(3);
  });

  it('answers 409 IDEMPOTENCY_KEY_REUSED for the same key with another body, and queues nothing', async () => {
    const headers = { 'idempotency-key': 'file-abc:chunk-1' };
    const first = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items: items(2, 'b') }, headers });
    expect(first.status, first.text).toBe(202);
    const before = await counts();
    const other = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items: items(2, 'c') }, headers });
    expect(other.status, other.text).toBe(409);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(other.body.errors).toEqual([
      { field: 'headers.idempotency-key', message: 'was used with a different body' },
    ]);
    expect(await counts()).toEqual(before);
  });

  it('keeps keys of POST /emitir and POST /emitir/batch apart: reusing one across routes is 409', async () => {
    const headers = { 'idempotency-key': 'shared-key-1' };
    const single = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody(), headers });
    expect(single.status, single.text).toBe(202);
    const batch = await t.request('POST', '/emitir/batch', {
      key: p.apiKey,
      body: { items: [invoiceBody()] },
      headers,
    });
    expect(batch.status, batch.text).toBe(409);
    expect(batch.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('accepts concurrent retries of one key once', async () => {
    const before = await counts();
    const body = { items: items(5, 'concurrent') };
    const headers = { 'idempotency-key': 'concurrent-key' };
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => t.request('POST', '/emitir/batch', { key: p.apiKey, body, headers })),
    );
    for (const a of answers) expect(a.status, a.text).toBe(202);
    expect(new Set(answers.map((a) => a.body.batchId)).size).toBe(1);
    const after = await counts();
    expect(after.invoices - before.invoices).toBe(5);
    expect(after.batches - before.batches).toBe(1);
  });

  it('documents the header in the OpenAPI document', async () => {
    const doc = await t.request('GET', '/openapi.json');
    const op = doc.body.paths['/api/v1/emitir/batch']?.post ?? doc.body.paths['/emitir/batch']?.post;
    expect(op.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'idempotency-key' })]),
    );
    expect(op.responses['409']).toBeDefined();
  });
});
