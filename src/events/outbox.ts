import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.ts';
import { events, webhookDeliveries, webhookEndpoints } from '../db/schema.ts';

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

/** The envelope of spec 6, serialized once: every attempt of a delivery sends these exact bytes. */
export function envelope(event: string, deliveryId: string, timestamp: Date, data: unknown): string {
  return JSON.stringify({ event, deliveryId, timestamp: timestamp.toISOString(), data });
}

const deliveryListeners = new Set<() => void>();
/** deliveries were written since the last wake (by a transaction that may or may not have committed yet) */
let deliveriesWritten = false;

/** Called when deliveries were committed in this process (the webhook poller listens: first attempts at once). */
export function onDeliveriesCreated(listener: () => void): () => void {
  deliveryListeners.add(listener);
  return () => deliveryListeners.delete(listener);
}

/**
 * Tells this process's webhook poller that deliveries are due, if `recordEvent` wrote any: call it after the
 * transaction that recorded events has committed (a poller in another process finds them on its next poll, at most
 * its interval later). Cheap when nothing was written.
 */
export function wakeDeliveries(): void {
  if (!deliveriesWritten) return;
  deliveriesWritten = false;
  for (const listener of deliveryListeners) listener();
}

/**
 * Writes an event to the outbox inside the caller's transaction (the same one as the state change that causes
 * it) and fans it out there too: one delivery per active endpoint of the project subscribed to its type, its
 * first attempt due at once. No event without its change, no change without its deliveries, and no job in
 * between (the fan-out used to be an `events.dispatch` job per event: eight statements and a job's round trips
 * for what is one lookup when the project has no endpoint). Endpoints created later do not receive past events.
 * Returns the event's id and how many deliveries it made; call `wakeDeliveries()` after the commit.
 */
export async function recordEvent<T extends EventType>(
  tx: DbOrTx,
  event: { projectId: string; type: T; data: EventData[T]; invoiceId?: string | null; batchId?: string | null },
  /** the business clock (`ctx.now()`): the first attempt is due then */
  now: Date,
): Promise<{ id: string; deliveries: number }> {
  // one statement: the event, and the endpoints it goes to (their lookup was a round trip of its own, three per
  // issued note); the event's time is the database's (the transaction's start), in milliseconds like a Date
  const id = randomUUID();
  const result = await tx.execute(sql`
    with inserted as (
      insert into ${events} (id, project_id, type, data, invoice_id, batch_id, dispatched_at)
      values (${id}, ${event.projectId}, ${event.type}, ${JSON.stringify(event.data)}::jsonb,
        ${event.invoiceId ?? null}, ${event.batchId ?? null}, now())
      returning created_at
    )
    select floor(extract(epoch from inserted.created_at) * 1000)::float8 as created_ms,
      array_to_string(array(${subscribedEndpoints(event.projectId, event.type)}), ',') as endpoints
    from inserted`);
  const [row] = (result as unknown as { rows: { created_ms: number | string; endpoints: string }[] }).rows;
  const endpointIds = row!.endpoints ? row!.endpoints.split(',') : [];
  const createdAt = new Date(Number(row!.created_ms));
  const deliveries = await fanOut(tx, { ...event, id, createdAt }, now, endpointIds);
  return { id, deliveries };
}

/**
 * The statement part that writes an event whose row is known only inside the statement, for a change made without a
 * transaction (`with changed as (update … returning …)`): `from` names the statement's rows the event is written for
 * (none: no event), `projectId` and `invoiceId` are expressions over them, and `data` is the event's data as JSON, an
 * expression too (a value the change read can be merged in with `||`). The insert is the one `recordEvent` makes, the
 * event's time the database's. It writes no deliveries: use it only where `subscribedExists` was false in the same
 * statement's snapshot (the deliveries of a subscribed project are written with the event, by `recordEvent`).
 */
export function insertEventFrom(from: SQL, event: { type: EventType; projectId: SQL; invoiceId: SQL; data: SQL }): SQL {
  return sql`insert into ${events} (id, project_id, type, data, invoice_id, batch_id, dispatched_at)
    select ${randomUUID()}, ${event.projectId}, ${event.type}, ${event.data}, ${event.invoiceId}, null, now()
    from ${from}`;
}

/** Whether an active endpoint of the project (an expression) is subscribed to the event type, as a SQL boolean. */
export function subscribedExists(projectId: SQL, type: EventType): SQL {
  return sql`exists (select 1 from ${webhookEndpoints} where ${subscribed(projectId, type)})`;
}

/**
 * The active endpoints of a project (its id, or an expression) subscribed to an event type, as a condition on
 * `webhook_endpoints`: SQL text with parameters, since it is part of every event's statement (Drizzle's conditions
 * were rebuilt at every call, column by column).
 */
function subscribed(projectId: string | SQL, type: string) {
  return sql`${webhookEndpoints}.project_id = ${projectId} and ${webhookEndpoints}.active
    and ${webhookEndpoints}.deleted_at is null and ${webhookEndpoints}.events @> ${JSON.stringify([type])}::jsonb`;
}

/** Their ids, as a subquery. */
function subscribedEndpoints(projectId: string, type: string) {
  return sql`select ${webhookEndpoints.id} from ${webhookEndpoints} where ${subscribed(projectId, type)}`;
}

/**
 * One delivery per active endpoint of the event's project subscribed to its type, its first attempt due `now`
 * ((event, endpoint) is unique: a second fan-out of one event delivers nothing twice). Returns the deliveries made.
 */
export async function fanOut(
  tx: DbOrTx,
  event: { id: string; projectId: string; type: string; data: unknown; createdAt: Date },
  now: Date,
  /** the subscribed endpoints when the caller has read them (recordEvent), else they are read here */
  known?: string[],
): Promise<number> {
  const endpoints =
    known?.map((id) => ({ id })) ??
    (await tx
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(subscribed(event.projectId, event.type)));
  if (endpoints.length === 0) return 0;
  const created = await tx
    .insert(webhookDeliveries)
    .values(
      endpoints.map((endpoint) => {
        const id = randomUUID();
        return {
          id,
          endpointId: endpoint.id,
          projectId: event.projectId,
          eventId: event.id,
          eventType: event.type,
          body: envelope(event.type, id, event.createdAt, event.data),
          status: 'pending',
          nextAttemptAt: now,
          createdAt: now,
        };
      }),
    )
    .onConflictDoNothing()
    .returning({ id: webhookDeliveries.id });
  if (created.length > 0) deliveriesWritten = true;
  return created.length;
}
