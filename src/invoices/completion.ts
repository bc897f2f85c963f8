import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import type { Tx } from '../db/client.ts';
import { batches, invoices } from '../db/schema.ts';
import type { GovernmentError, IssuedDocument } from '../engines/types.ts';
import { insertEventFrom, recordEvent, subscribedExists, wakeDeliveries } from '../events/outbox.ts';
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
 * they are stored (the issue job: see `IssueJobEnd`). Answers whether this call issued the note (false: it had
 * ended already).
 */
export async function finishIssued(
  ctx: AppContext,
  invoiceId: string,
  issued: IssuedDocument,
  documents: 'job' | 'caller' = 'job',
): Promise<boolean> {
  const alone = documents === 'caller' ? await finishIssuedAlone(ctx, invoiceId, issued) : 'transaction';
  const changed =
    alone === 'transaction' ? await finishIssuedInTransaction(ctx, invoiceId, issued, documents) : alone === 'changed';
  // the municipality's text of the breakdown (xTribMun), which the ADN API does not publish (GET /codigos)
  await rememberBreakdownText(ctx, issued.ambiente, issued.xml);
  if (documents === 'job') ctx.queue.wake('invoice.documents');
  wakeDeliveries();
  return changed;
}

/** The columns an issued note's row takes, as `finishIssued` writes them. */
export function issuedColumns(issued: IssuedDocument) {
  return {
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
  } as const;
}

/** The data of `nfse.issued` but its `referencia`, which is the row's. */
function issuedEventData(invoiceId: string, issued: IssuedDocument) {
  return {
    invoiceId,
    chNFSe: issued.chave,
    nNFSe: issued.numero,
    ...(issued.verificationCode ? { codigoVerificacao: issued.verificationCode } : {}),
  };
}

/**
 * The issue job's own completion (`documents: 'caller'`) in one statement: the row's change and its `nfse.issued`
 * event, with no transaction around them (its BEGIN, the event's insert and its COMMIT were three of the dozen round
 * trips of an issued note). It applies where nothing else follows from the change: no active endpoint of the project
 * is subscribed to `nfse.issued` (its deliveries are written with the event: `recordEvent`) and the note is no
 * batch's (the batch's completion locks the batch row). The answer: `changed`; `ended` (the note is no longer queued
 * or processing: nothing to do, as in the transaction); `transaction` (one of the two applies: nothing was written).
 */
async function finishIssuedAlone(
  ctx: AppContext,
  invoiceId: string,
  issued: IssuedDocument,
): Promise<'changed' | 'ended' | 'transaction'> {
  const set = issuedColumns(issued);
  const result = await ctx.db.execute(sql`
    with target as (
      select status in ('queued', 'processing') as open,
        batch_id is null and not ${subscribedExists(sql`${invoices}.project_id`, 'nfse.issued')} as alone
      from ${invoices} where id = ${invoiceId}
    ), changed as (
      update ${invoices} set status = ${set.status}, transmission = ${set.transmission},
        access_key = ${set.accessKey}, numero_nfse = ${set.numeroNfse}, verification_code = ${set.verificationCode},
        protocol = coalesce(${issued.protocol || null}, ${invoices}.protocol), emitted_at = ${set.emittedAt},
        nfse_xml = ${set.nfseXml}, error_code = null, error_message = null, errors = null, updated_at = ${set.updatedAt}
      where id = ${invoiceId} and status in ('queued', 'processing') and (select alone from target)
      returning id, project_id, referencia
    ), event as (${insertEventFrom(sql`changed`, {
      type: 'nfse.issued',
      projectId: sql`changed.project_id`,
      invoiceId: sql`changed.id`,
      data: sql`${JSON.stringify(issuedEventData(invoiceId, issued))}::jsonb || jsonb_build_object('referencia', changed.referencia)`,
    })})
    select (select count(*) from changed)::int as changed, target.open, target.alone from target`);
  const [row] = (result as unknown as { rows: { changed: number; open: boolean; alone: boolean }[] }).rows;
  if (!row?.open) return 'ended';
  if (row.changed > 0) return 'changed';
  // open but not changed: not alone (a subscribed endpoint, a batch), or ended between the read and the update
  return row.alone ? 'ended' : 'transaction';
}

/** `finishIssued` in a transaction: the change, the event and its deliveries, the documents job, the batch. */
async function finishIssuedInTransaction(
  ctx: AppContext,
  invoiceId: string,
  issued: IssuedDocument,
  documents: 'job' | 'caller',
): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(invoices)
      .set(issuedColumns(issued))
      .where(and(eq(invoices.id, invoiceId), inArray(invoices.status, ['queued', 'processing'])))
      .returning(ENDED);
    if (!row) return false;
    await recordEvent(
      tx,
      {
        projectId: row.projectId,
        type: 'nfse.issued',
        invoiceId: row.id,
        data: { ...issuedEventData(row.id, issued), referencia: row.referencia },
      },
      ctx.now(),
    );
    if (documents === 'job') await ctx.queue.send('invoice.documents', { invoiceId: row.id, kind: 'emission' }, { tx });
    await completeBatchIfDone(ctx, tx, row);
    return true;
  });
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
