import { and, asc, eq } from 'drizzle-orm';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { storageBaseUrlOf } from '../db/repositories/invoices.ts';
import { batches, invoices } from '../db/schema.ts';
import { documentUrl } from './views.ts';

export const BatchStatusSchema = Type.Object(
  {
    batchId: Type.String(),
    status: Type.Union(
      [Type.Literal('processing'), Type.Literal('completed'), Type.Literal('partial'), Type.Literal('failed')],
      {
        description:
          'processing: items still queued or processing; completed: all processed, no errors; partial: all ' +
          'processed, some errors; failed: all items failed',
      },
    ),
    total: Type.Integer(),
    processed: Type.Integer({ description: 'Items that reached issued, cancelled or error' }),
    issued: Type.Integer({ description: 'Items issued (a later cancellation still counts as issued)' }),
    errors: Type.Integer({ description: 'Items in error' }),
    createdAt: Type.String({ format: 'date-time' }),
    completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    items: Type.Array(
      Type.Object({
        invoiceId: Type.String(),
        index: Type.Integer({ description: 'Position of the item in the request, from 0' }),
        status: Type.String({ description: 'Invoice status (queued, processing, issued, error, cancelled)' }),
        referencia: Type.Union([Type.String(), Type.Null()]),
        pdfUrl: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'When issued and cached' })),
        chNFSe: Type.Optional(Type.String({ description: 'When issued' })),
        numeroNfse: Type.Optional(Type.String({ description: 'NFS-e number, when issued' })),
        errorCode: Type.Optional(Type.String({ description: 'When in error' })),
        errorMessage: Type.Optional(Type.String({ description: 'When in error: the message of errorCode' })),
      }),
      { description: 'The items in request order' },
    ),
  },
  { description: 'Batch status (spec 2.9)' },
);

/** The status of a batch of this project (spec 2.9), or null when it is unknown or another project's. */
export async function findBatchStatus(ctx: AppContext, projectId: string, orgId: string, batchId: string) {
  // one snapshot: the items and the batch's completion are read as of the same commit
  const snapshot = await ctx.db.transaction(
    async (tx) => {
      const [batch] = await tx
        .select()
        .from(batches)
        .where(and(eq(batches.id, batchId), eq(batches.projectId, projectId)))
        .limit(1);
      if (!batch) return null;
      const rows = await tx
        .select({
          id: invoices.id,
          batchIndex: invoices.batchIndex,
          status: invoices.status,
          referencia: invoices.referencia,
          accessKey: invoices.accessKey,
          numeroNfse: invoices.numeroNfse,
          errorMessage: invoices.errorMessage,
          pdfKey: invoices.pdfKey,
          errorCode: invoices.errorCode,
        })
        .from(invoices)
        .where(eq(invoices.batchId, batch.id))
        .orderBy(asc(invoices.batchIndex));
      return { batch, rows };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  if (!snapshot) return null;
  const { batch, rows } = snapshot;
  const base = await storageBaseUrlOf(ctx.db, orgId);
  let issued = 0;
  let errors = 0;
  const items = rows.map((row) => {
    const item: Record<string, unknown> = {
      invoiceId: row.id,
      index: row.batchIndex ?? 0,
      status: row.status,
      referencia: row.referencia,
    };
    if (row.status === 'issued' || row.status === 'cancelled') {
      issued++;
      item.chNFSe = row.accessKey ?? undefined;
      item.numeroNfse = row.numeroNfse ?? undefined;
      item.pdfUrl = documentUrl(ctx, row.pdfKey, base);
    } else if (row.status === 'error') {
      errors++;
      item.errorCode = row.errorCode ?? 'UNKNOWN';
      item.errorMessage = row.errorMessage ?? '';
    }
    return item;
  });
  const processed = issued + errors;
  const status =
    processed < batch.total ? 'processing' : errors === 0 ? 'completed' : issued === 0 ? 'failed' : 'partial';
  return {
    batchId: batch.id,
    status,
    total: batch.total,
    processed,
    issued,
    errors,
    createdAt: batch.createdAt.toISOString(),
    completedAt: batch.completedAt?.toISOString() ?? null,
    items,
  };
}
