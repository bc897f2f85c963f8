import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import type { Tx } from '../db/client.ts';
import { batches, invoices } from '../db/schema.ts';
import type { GovernmentError, IssuedDocument } from '../engines/types.ts';
import { recordEvent, wakeDeliveries } from '../events/outbox.ts';
import { rememberBreakdownText } from './municipal-parameters.ts';

/** What the completions read back from the invoice they end (not the whole row: its XML documents are large). */
const ENDED = {
  id: invoices.id,
  projectId: invoices.projectId,
  batchId: invoices.batchId,
  referencia: invoices.referencia,
};

/**
 * Ends a batch item's life: when the last item of its batch ends, the batch completes and exactly one
 * `batch.completed` event is written. The batch row is locked first so concurrent completions serialize.
 */
async function completeBatchIfDone(ctx: AppContext, tx: Tx, invoice: { batchId: string | null }) {
  if (!invoice.batchId) return;
  const [batch] = await tx.select().from(batches).where(eq(batches.id, invoice.batchId)).for('update').limit(1);
  if (!batch || batch.completedAt) return;
  const [counts] = await tx
    .select({
      open: sql<number>`count(*) filter (where ${invoices.status} in ('queued','processing'))`.mapWith(Number),
      issued: sql<number>`count(*) filter (where ${invoices.status} in ('issued','cancelled'))`.mapWith(Number),
      errors: sql<number>`count(*) filter (where ${invoices.status} = 'error')`.mapWith(Number),
    })
    .from(invoices)
    .where(eq(invoices.batchId, batch.id));
  if (!counts || counts.open > 0) return;
  const done = await tx
    .update(batches)
    .set({ completedAt: new Date() })
    .where(and(eq(batches.id, batch.id), isNull(batches.completedAt)))
    .returning({ id: batches.id });
  if (done.length === 0) return;
  await recordEvent(
    tx,
    {
      projectId: batch.projectId,
      type: 'batch.completed',
      batchId: batch.id,
      data: { batchId: batch.id, total: batch.total, issued: counts.issued, errors: counts.errors },
    },
    ctx.now(),
  );
}

/**
 * issued: store the government's document, tell the customer, cache the documents. `documents`: `job` enqueues the
 * documents job in the same transaction; `caller` leaves them to the caller, whose own job stays uncompleted until
 * they are stored (the issue job: see `IssueJobEnd`).
 */
export async function finishIssued(
  ctx: AppContext,
  invoiceId: string,
  issued: IssuedDocument,
  documents: 'job' | 'caller' = 'job',
): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(invoices)
      .set({
        status: 'issued',
        transmission: 'done',
        accessKey: issued.chave,
        numeroNfse: issued.numero,
        verificationCode: issued.verificationCode ?? null,
        ...(issued.protocol ? { protocol: issued.protocol } : {}),
        emittedAt: issued.emittedAt,
        nfseXml: issued.xml,
        errorCode: null,
        errorMessage: null,
        errors: null,
        updatedAt: new Date(),
      })
      .where(and(eq(invoices.id, invoiceId), inArray(invoices.status, ['queued', 'processing'])))
      .returning(ENDED);
    if (!row) return;
    await recordEvent(
      tx,
      {
        projectId: row.projectId,
        type: 'nfse.issued',
        invoiceId: row.id,
        data: {
          invoiceId: row.id,
          chNFSe: issued.chave,
          nNFSe: issued.numero,
          ...(issued.verificationCode ? { codigoVerificacao: issued.verificationCode } : {}),
          referencia: row.referencia,
        },
      },
      ctx.now(),
    );
    if (documents === 'job') await ctx.queue.send('invoice.documents', { invoiceId: row.id, kind: 'emission' }, { tx });
    await completeBatchIfDone(ctx, tx, row);
  });
  // the municipality's text of the breakdown (xTribMun), which the ADN API does not publish (GET /codigos)
  await rememberBreakdownText(ctx, issued.ambiente, issued.xml);
  if (documents === 'job') ctx.queue.wake('invoice.documents');
  wakeDeliveries();
}

/** error: a permanent rejection (or retries exhausted); the government's codes are kept. */
export async function finishError(
  ctx: AppContext,
  invoiceId: string,
  error: { errorCode: string; errorMessage: string; errors: GovernmentError[] },
): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(invoices)
      .set({
        status: 'error',
        errorCode: error.errorCode,
        errorMessage: error.errorMessage,
        errors: error.errors,
        updatedAt: new Date(),
      })
      .where(and(eq(invoices.id, invoiceId), inArray(invoices.status, ['queued', 'processing'])))
      .returning(ENDED);
    if (!row) return;
    await recordEvent(
      tx,
      {
        projectId: row.projectId,
        type: 'nfse.error',
        invoiceId: row.id,
        data: {
          invoiceId: row.id,
          errorCode: error.errorCode,
          errorMessage: error.errorMessage,
          referencia: row.referencia,
        },
      },
      ctx.now(),
    );
    await completeBatchIfDone(ctx, tx, row);
  });
  wakeDeliveries();
}
