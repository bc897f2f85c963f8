import { and, eq, inArray, isNull, or } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { storageBaseUrlOf } from '../db/repositories/invoices.ts';
import { invoices } from '../db/schema.ts';
import type { CancellationRecord } from '../engines/types.ts';
import { recordEvent, wakeDeliveries } from '../events/outbox.ts';
import { newDocumentKey, XML_CONTENT_TYPE } from '../storage/types.ts';
import { documentUrl } from './views.ts';

type InvoiceRow = typeof invoices.$inferSelect;

/**
 * Cancellation (spec 3: issued → cancelled, asynchronous). The request marks the invoice
 * (`cancellationStatus = requested`) and enqueues `invoice.cancel` in one transaction; the job ends it with
 * `finishCancelled` (status cancelled + nfse.cancelled + the cancellation documents job, one transaction) or
 * `finishCancellationRejected` (the invoice stays issued; the refusal is kept on the invoice and shown in its
 * status under `cancellation`). The spec has no event for a refused cancellation, so none is written.
 */
export type CancellationRequestResult =
  | { ok: true; invoice: InvoiceRow }
  | { ok: false; reason: 'not-found' | 'not-issued' | 'already-cancelled' | 'in-progress'; status?: string };

export async function requestCancellation(
  ctx: AppContext,
  input: { projectId: string; invoiceId: string; motivo: string | null; now: Date },
): Promise<CancellationRequestResult> {
  const result = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(invoices)
      .set({
        cancellationStatus: 'requested',
        cancelMotivo: input.motivo,
        cancelRequestedAt: input.now,
        cancelErrorCode: null,
        cancelErrorMessage: null,
        updatedAt: input.now,
      })
      .where(
        and(
          eq(invoices.id, input.invoiceId),
          eq(invoices.projectId, input.projectId),
          eq(invoices.status, 'issued'),
          // a refused (or failed) cancellation may be asked again; one in progress may not
          or(isNull(invoices.cancellationStatus), inArray(invoices.cancellationStatus, ['rejected', 'failed'])),
        ),
      )
      .returning();
    if (row) {
      await ctx.queue.send('invoice.cancel', { invoiceId: row.id }, { tx });
      return { ok: true as const, invoice: row };
    }
    const [current] = await tx
      .select({ status: invoices.status, cancellationStatus: invoices.cancellationStatus })
      .from(invoices)
      .where(and(eq(invoices.id, input.invoiceId), eq(invoices.projectId, input.projectId)))
      .limit(1);
    if (!current) return { ok: false as const, reason: 'not-found' as const };
    if (current.status === 'cancelled') return { ok: false as const, reason: 'already-cancelled' as const };
    if (current.status === 'issued') return { ok: false as const, reason: 'in-progress' as const };
    return { ok: false as const, reason: 'not-issued' as const, status: current.status };
  });
  if (result.ok) ctx.queue.wake('invoice.cancel');
  return result;
}

/**
 * The government registered the cancellation. Its event XML is stored first (document storage), then state,
 * cancellation XML key, `nfse.cancelled` (carrying `cancelXmlUrl`) and the documents job (the watermarked PDF,
 * which writes no further `nfse.documents_ready`: spec 6 allows two per invoice) go in one transaction. When the
 * transaction does not apply (already cancelled by a concurrent job), the stored copy is deleted again; when the
 * storage put fails, the error is thrown and the job retried (the reconciliation query runs first).
 */
export async function finishCancelled(ctx: AppContext, invoiceId: string, record: CancellationRecord): Promise<void> {
  const [current] = await ctx.db
    .select({ projectId: invoices.projectId, accessKey: invoices.accessKey })
    .from(invoices)
    .where(eq(invoices.id, invoiceId))
    .limit(1);
  if (!current) return;
  // a cancellation known only from the government's "already cancelled" refusal has no document to keep
  const key = record.xml
    ? newDocumentKey(current.projectId, `${current.accessKey ?? invoiceId}-cancelamento.xml`)
    : null;
  if (key) await ctx.storage.put(key, Buffer.from(record.xml, 'utf8'), XML_CONTENT_TYPE);
  const applied = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(invoices)
      .set({
        status: 'cancelled',
        cancelledAt: record.cancelledAt,
        cancelXml: record.xml || null,
        cancelXmlKey: key,
        cancellationStatus: 'done',
        cancelErrorCode: null,
        cancelErrorMessage: null,
        updatedAt: new Date(),
      })
      .where(and(eq(invoices.id, invoiceId), eq(invoices.status, 'issued')))
      .returning();
    if (!row) return false;
    const base = await storageBaseUrlOf(tx, row.orgId);
    await recordEvent(
      tx,
      {
        projectId: row.projectId,
        type: 'nfse.cancelled',
        invoiceId: row.id,
        data: {
          invoiceId: row.id,
          numeroNfse: row.numeroNfse,
          cancelledAt: record.cancelledAt.toISOString(),
          cancelXmlUrl: documentUrl(ctx, key, base),
        },
      },
      ctx.now(),
    );
    await ctx.queue.send('invoice.documents', { invoiceId: row.id, kind: 'cancellation' }, { tx });
    return true;
  });
  wakeDeliveries();
  if (!applied && key) await ctx.storage.delete(key).catch(() => undefined);
}

/** The government refused (or never answered): the invoice stays issued and shows why. */
export async function finishCancellationRejected(
  ctx: AppContext,
  invoiceId: string,
  error: { errorCode: string; errorMessage: string },
): Promise<void> {
  await ctx.db
    .update(invoices)
    .set({
      cancellationStatus: 'rejected',
      cancelErrorCode: error.errorCode,
      cancelErrorMessage: error.errorMessage,
      updatedAt: new Date(),
    })
    .where(
      and(
        eq(invoices.id, invoiceId),
        eq(invoices.status, 'issued'),
        inArray(invoices.cancellationStatus, ['requested']),
      ),
    );
}

/**
 * The cancellation job ran out of attempts with an internal failure (the catalogue's on-exhausted step): the
 * invoice stays issued, `cancellation.status` becomes `failed` with the code (it may be asked again; the job
 * asks the government for the event before sending anything, so a retry never cancels twice).
 */
export async function finishCancellationFailed(
  ctx: AppContext,
  invoiceId: string,
  error: { errorCode: string; errorMessage: string },
): Promise<boolean> {
  const rows = await ctx.db
    .update(invoices)
    .set({
      cancellationStatus: 'failed',
      cancelErrorCode: error.errorCode,
      cancelErrorMessage: error.errorMessage,
      updatedAt: new Date(),
    })
    .where(and(eq(invoices.id, invoiceId), eq(invoices.status, 'issued'), eq(invoices.cancellationStatus, 'requested')))
    .returning({ id: invoices.id });
  return rows.length > 0;
}
