import type { DbOrTx } from '../db/client.ts';
import { events } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';

/** The events of spec section 6 and the data each carries. */
export interface EventData {
  'nfse.issued': {
    invoiceId: string;
    /** the national access key; null for a municipal note (known by nNFSe and its verification code) */
    chNFSe: string | null;
    nNFSe: string;
    codigoVerificacao?: string | null;
    referencia?: string | null;
  };
  'nfse.error': { invoiceId: string; errorCode: string; errorMessage: string; referencia?: string | null };
  /** `cancelXmlUrl`: the stored cancellation event XML (additive to spec 6; stored before the event is written). */
  'nfse.cancelled': { invoiceId: string; numeroNfse: string | null; cancelledAt: string; cancelXmlUrl: string | null };
  'nfse.documents_ready': {
    invoiceId: string;
    xmlUrl: string | null;
    pdfUrl: string | null;
    cancelXmlUrl: string | null;
    documentStatus: 'partial' | 'complete';
    cachedAt: string;
  };
  'batch.completed': { batchId: string; total: number; issued: number; errors: number };
}

export type EventType = keyof EventData;
export const EVENT_TYPES = [
  'nfse.issued',
  'nfse.error',
  'nfse.cancelled',
  'nfse.documents_ready',
  'batch.completed',
] as const satisfies readonly EventType[];

/**
 * Writes an event to the outbox inside the caller's transaction (the same one as the state change that
 * causes it) and enqueues its fan-out job in that transaction too: no event without its change, no
 * change without its event.
 */
export async function recordEvent<T extends EventType>(
  tx: DbOrTx,
  queue: JobQueue,
  event: { projectId: string; type: T; data: EventData[T]; invoiceId?: string | null; batchId?: string | null },
): Promise<string> {
  const [row] = await tx
    .insert(events)
    .values({
      projectId: event.projectId,
      type: event.type,
      data: event.data,
      invoiceId: event.invoiceId ?? null,
      batchId: event.batchId ?? null,
    })
    .returning({ id: events.id });
  await queue.send('events.dispatch', { eventId: row!.id }, { tx });
  return row!.id;
}
