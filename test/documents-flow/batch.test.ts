import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices, organizations } from '../../src/db/schema.ts';
import { checkInvoiceRequest, type InvoiceRequest } from '../../src/domain/invoice-request.ts';
import { loadProjectRow, toFiscalProfile } from '../../src/db/repositories/project-profile.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';
import { noteBody, outboxEvents, TAKER, waitFor } from './support.ts';

/**
 * Batches (spec 2.9, 4.2, 4.3, 6, 8): 1 to 100 items validated like POST /emitir, issued independently, followed
 * by GET /invoices/batch/{batchId}/status, ended by exactly one batch.completed event.
 *
 * Some items name a taker the sandbox's simulated federal registry does not know: our request rules cannot see
 * that (only the government's CNPJ registry can), so the government refuses them (E0190) while the others issue.
 */

let t: TestService;
let p: OnboardedProject;

/** A valid CNPJ the sandbox's federal registry does not know. */
const UNREGISTERED_TAKER = '99888777000100';
/** An item our request rules accept and the government refuses (see the file comment). */
const REFUSED_BY_SEFIN = noteBody({ tomador: { ...TAKER, cnpj: UNREGISTERED_TAKER } });

beforeAll(async () => {
  t = await startTestService();
  t.service.sandbox!.setUnregisteredDocuments([UNREGISTERED_TAKER]);
  p = await onboardProject(t, { rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t?.close();
});

async function invoiceCount(projectId: string) {
  const [row] = await t.service.ctx.db.select({ n: count() }).from(invoices).where(eq(invoices.projectId, projectId));
  return row!.n;
}

async function creditsUsed(orgId: string) {
  const [row] = await t.service.ctx.db
    .select({ used: organizations.creditsUsed })
    .from(organizations)
    .where(eq(organizations.id, orgId));
  return row!.used;
}

async function waitForBatch(batchId: string, key = p.apiKey, timeoutMs = 120_000) {
  return waitFor(
    `batch ${batchId}`,
    async () => {
      const res = await t.request('GET', `/invoices/batch/${batchId}/status`, { key });
      expect(res.status, res.text).toBe(200);
      return res.body.status === 'processing' ? undefined : res.body;
    },
    timeoutMs,
  );
}

describe('POST /emitir/batch', () => {
  it('the refused item passes our request rules (only the government registry refuses it)', async () => {
    const project = toFiscalProfile((await loadProjectRow(t.service.ctx.db, p.projectId))!);
    const checked = checkInvoiceRequest(REFUSED_BY_SEFIN as InvoiceRequest, project);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(t.service.ctx.engines.get('national').checkRequest(project, checked.value)).toEqual([]);
  });

  it('refuses a description with no Latin letters or digits (it would print as nothing)', async () => {
    const res = await t.request('POST', '/emitir/batch', {
      key: p.apiKey,
      body: { items: [noteBody(), noteBody({ servico: { descricao: '😀😀', codigo: '010101' } })] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('items.1.servico.descricao');
  });

  it('issues 100 items in parallel: partial with exact counts, items in order, one batch.completed', async () => {
    const refusedAt = new Set([3, 17, 18, 42, 64, 99]);
    const items = Array.from({ length: 100 }, (_, i) =>
      refusedAt.has(i) ? { ...REFUSED_BY_SEFIN, referencia: `item-${i}` } : noteBody({ referencia: `item-${i}` }),
    );
    const before = await creditsUsed(p.orgId);
    const res = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items } });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({
      batchId: expect.any(String),
      queued: 100,
      status: 'processing',
      // one entry per item, in order, with its invoice and the adjustments made on its behalf (the project's
      // IBS/CBS defaults applied: test/national/fiscal-rules.test.ts checks the codes)
      items: [...Array(100).keys()].map((index) => ({
        index,
        invoiceId: expect.any(String),
        warnings: expect.any(Array),
      })),
    });
    const { batchId } = res.body;
    expect(await creditsUsed(p.orgId)).toBe(before + 100);

    const status = await waitForBatch(batchId);
    expect(status).toMatchObject({ batchId, status: 'partial', total: 100, processed: 100, issued: 94, errors: 6 });
    expect(status.items).toHaveLength(100);
    expect(status.items.map((i: { index: number }) => i.index)).toEqual([...Array(100).keys()]);
    for (const item of status.items) {
      expect(item.referencia).toBe(`item-${item.index}`);
      if (refusedAt.has(item.index)) {
        expect(item).toMatchObject({ status: 'error', errorCode: 'E0190' });
        expect(item.chNFSe).toBeUndefined();
      } else {
        expect(item.status).toBe('issued');
        expect(item.chNFSe).toMatch(/^\d{50}$/);
        expect(item.errorCode).toBeUndefined();
      }
    }
    expect(new Set(status.items.map((i: { invoiceId: string }) => i.invoiceId)).size).toBe(100);
    expect(status.items.map((i: { invoiceId: string }) => i.invoiceId)).toEqual(
      res.body.items.map((i: { invoiceId: string }) => i.invoiceId),
    );

    const completed = await outboxEvents(t, { batchId, type: 'batch.completed' });
    expect(completed).toHaveLength(1);
    expect(completed[0]!.data).toEqual({ batchId, total: 100, issued: 94, errors: 6 });
    expect(status.completedAt).not.toBeNull();

    // each item is an invoice of its own, with its status and (once cached) its PDF in the batch view
    const one = status.items[0];
    const single = await t.request('GET', `/invoices/${one.invoiceId}/status`, { key: p.apiKey });
    expect(single.body).toMatchObject({ status: 'issued', batchId, chNFSe: one.chNFSe });
    const cached = await waitFor(
      'the PDFs of the batch',
      async () => {
        const view = (await t.request('GET', `/invoices/batch/${batchId}/status`, { key: p.apiKey })).body;
        const issued = view.items.filter((i: { status: string }) => i.status === 'issued');
        return issued.every((i: { pdfUrl?: string | null }) => !!i.pdfUrl) ? view : undefined;
      },
      90_000,
    );
    expect(cached.items[0].pdfUrl).toMatch(/-danfse\.pdf$/);
    expect(cached.items[3].pdfUrl).toBeUndefined();
  }, 240_000);

  it('refuses 101 items, and any invalid item naming its index and field, queuing nothing', async () => {
    const before = { invoices: await invoiceCount(p.projectId), credits: await creditsUsed(p.orgId) };
    const tooMany = await t.request('POST', '/emitir/batch', {
      key: p.apiKey,
      body: { items: Array.from({ length: 101 }, () => noteBody()) },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.code).toBe('VALIDATION_FAILED');
    expect(tooMany.body.errors.map((e: { field: string }) => e.field)).toEqual(['items']);

    const empty = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items: [] } });
    expect(empty.status).toBe(400);
    expect((await t.request('POST', '/emitir/batch', { key: p.apiKey, body: {} })).status).toBe(400);

    // schema errors (item 7) and request-rule errors (item 42: bad taker CNPJ check digits)
    const items = Array.from({ length: 50 }, () => noteBody());
    items[7] = noteBody({ valores: { total: 'abc', aliquotaIss: 2 } });
    items[42] = noteBody({ tomador: { ...TAKER, cnpj: '11444777000162' } });
    const schemaBad = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items } });
    expect(schemaBad.status).toBe(400);
    expect(schemaBad.body.errors.map((e: { field: string }) => e.field)).toContain('items.7.valores.total');

    // schema errors stop at the schema; with item 7 fixed, the request rules name item 42 alone
    const ruleBad = await t.request('POST', '/emitir/batch', {
      key: p.apiKey,
      body: { items: items.map((item, i) => (i === 7 ? noteBody() : item)) },
    });
    expect(ruleBad.status).toBe(400);
    expect(ruleBad.body.code).toBe('VALIDATION_FAILED');
    expect(ruleBad.body.errors).toEqual([{ field: 'items.42.tomador.cnpj', message: expect.any(String) }]);
    expect(ruleBad.body.detail).toContain('items.42.tomador.cnpj');

    const twoBad = items.map((item, i) => (i === 7 ? noteBody({ competencia: '2099-01' }) : item));
    const both = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items: twoBad } });
    expect(both.status).toBe(400);
    const fields = both.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['items.7.competencia', 'items.42.tomador.cnpj']));
    expect(both.body.items.map((i: { index: number }) => i.index)).toEqual([7, 42]);

    expect(await invoiceCount(p.projectId)).toBe(before.invoices);
    expect(await creditsUsed(p.orgId)).toBe(before.credits);
  });

  it('answers 402 when a hard-limit plan cannot fit every item, and queues nothing', async () => {
    const free = await onboardProject(t, { plan: 'free', cnpj: '11222333000262', rateLimitPerMinute: 100_000 });
    await t.service.ctx.db.update(organizations).set({ creditsUsed: 45 }).where(eq(organizations.id, free.orgId));
    const refused = await t.request('POST', '/emitir/batch', {
      key: free.apiKey,
      body: { items: Array.from({ length: 6 }, () => noteBody()) },
    });
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('PAYMENT_REQUIRED_CREDITS_EXHAUSTED');
    expect(await invoiceCount(free.projectId)).toBe(0);
    expect(await creditsUsed(free.orgId)).toBe(45);

    const fits = await t.request('POST', '/emitir/batch', {
      key: free.apiKey,
      body: { items: Array.from({ length: 5 }, () => noteBody()) },
    });
    expect(fits.status).toBe(202);
    expect(await creditsUsed(free.orgId)).toBe(50);
    const done = await waitForBatch(fits.body.batchId, free.apiKey);
    expect(done).toMatchObject({ status: 'completed', total: 5, processed: 5, issued: 5, errors: 0 });
  });

  it('reports failed when every item fails, keeps batches per project and does not shadow /invoices/{id}/status', async () => {
    const res = await t.request('POST', '/emitir/batch', {
      key: p.apiKey,
      body: { items: [REFUSED_BY_SEFIN, REFUSED_BY_SEFIN] },
    });
    expect(res.status).toBe(202);
    const failed = await waitForBatch(res.body.batchId);
    expect(failed).toMatchObject({ status: 'failed', total: 2, processed: 2, issued: 0, errors: 2 });
    expect(await outboxEvents(t, { batchId: res.body.batchId, type: 'batch.completed' })).toHaveLength(1);

    const other = await onboardProject(t, { cnpj: '11222333000343', rateLimitPerMinute: 100_000 });
    const foreign = await t.request('GET', `/invoices/batch/${res.body.batchId}/status`, { key: other.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('BATCH_NOT_FOUND');
    const unknown = await t.request('GET', '/invoices/batch/00000000-0000-4000-8000-000000000000/status', {
      key: p.apiKey,
    });
    expect(unknown.status).toBe(404);
    expect((await t.request('GET', '/invoices/batch/xyz/status', { key: p.apiKey })).status).toBe(404);

    // an invoice id on the batch route is not a batch, and the invoice route still serves invoices
    const invoiceId = failed.items[0].invoiceId;
    expect((await t.request('GET', `/invoices/batch/${invoiceId}/status`, { key: p.apiKey })).status).toBe(404);
    const single = await waitForInvoice(t, p.apiKey, invoiceId);
    expect(single).toMatchObject({ invoiceId, status: 'error', errorCode: 'E0190', batchId: res.body.batchId });

    const noScope = await t.request('POST', `/org/projects/${p.projectId}/api-keys`, {
      key: p.orgToken,
      body: { name: 'query only', scopes: ['query'] },
    });
    const forbidden = await t.request('POST', '/emitir/batch', {
      key: noScope.body.key,
      body: { items: [noteBody()] },
    });
    expect(forbidden.status).toBe(403);
    expect((await t.request('POST', '/emitir/batch', { body: { items: [noteBody()] } })).status).toBe(401);
  });
});
