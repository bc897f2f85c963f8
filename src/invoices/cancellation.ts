import { and, eq, inArray, isNull, or } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { invoices } from '../db/schema.ts';
import type { CancellationRecord } from '../engines/types.ts';
import { recordEvent } from '../events/outbox.ts';

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
          // a refused cancellation may be asked again; one in progress may not
          or(isNull(invoices.cancellationStatus), eq(invoices.cancellationStatus, 'rejected')),
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

/** The government registered the cancellation: state, event and the documents job in one transaction. */
export async function finishCancelled(ctx: AppContext, invoiceId: string, record: CancellationRecord): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(invoices)
      .set({
        status: 'cancelled',
        cancelledAt: record.cancelledAt,
        cancelXml: record.xml,
        cancellationStatus: 'done',
        cancelErrorCode: null,
        cancelErrorMessage: null,
        updatedAt: new Date(),
      })
      .where(and(eq(invoices.id, invoiceId), eq(invoices.status, 'issued')))
      .returning();
    if (!row) return;
    await recordEvent(tx, ctx.queue, {
      projectId: row.projectId,
      type: 'nfse.cancelled',
      invoiceId: row.id,
      data: { invoiceId: row.id, numeroNfse: row.numeroNfse, cancelledAt: record.cancelledAt.toISOString() },
    });
    await ctx.queue.send('invoice.documents', { invoiceId: row.id, kind: 'cancellation' }, { tx });
  });
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
