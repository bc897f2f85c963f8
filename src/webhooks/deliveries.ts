import { randomUUID } from 'node:crypto';
import { and, asc, count, desc, eq, inArray, lte, type SQL, sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../db/schema.ts';
import type { HostResolver } from './address-guard.ts';
import { type EndpointRow, endpointSecrets } from './endpoints.ts';
import { type AttemptOutcome, sendWebhookAttempt } from './sender.ts';
import { signatureHeaders } from './signing.ts';
import { envelope, fanOut } from '../events/outbox.ts';

/**
 * Webhook deliveries: one per (event, endpoint), with the exact body sent on every attempt, and one row
 * per attempt. The schedule lives in the database (`next_attempt_at`), read against `ctx.now()`:
 *
 * - fan-out (`events.dispatch` job): the deliveries of an outbox event are inserted in one transaction with
 *   their first attempt due at once (and the worker's poller is woken);
 * - the poller (poller.ts) claims due deliveries with `FOR UPDATE SKIP LOCKED`, moving `next_attempt_at` a
 *   lease ahead: concurrent workers never run the same attempt twice, and an attempt lost with its process
 *   (kill -9) is due again when the lease ends; a manual retry is claimed the same way by a
 *   `webhook.deliver` job;
 * - recording the outcome (one statement: the delivery moves on and the attempt row is written) sets the
 *   next due time (spec 6.3: 1, 5, 30 and 120 minutes after the first attempt) or ends the delivery
 *   (`succeeded`, or `failed` after the 5th failure).
 *
 * Nothing is kept in memory: a restarted process finds every pending delivery in the table.
 */

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

/** Spec 6.3: attempt n is due this long after the first attempt (1st immediately … 5th after 2 hours). */
export const ATTEMPT_OFFSETS_MS = [0, 60_000, 5 * 60_000, 30 * 60_000, 120 * 60_000] as const;
export const MAX_ATTEMPTS = ATTEMPT_OFFSETS_MS.length;
/** A claimed attempt not recorded within this time (its process died) is due again. */
export const ATTEMPT_LEASE_MS = 60_000;

export const TEST_EVENT = 'webhook.test';

/**
 * When attempt `done + 1` is due, counted from the delivery's creation (when its first attempt was due):
 * on the spec's schedule, or, when that moment has already passed (the service was down), the schedule's
 * gap after now, so an outage does not burn the remaining attempts at once.
 */
export function nextAttemptAt(firstAttemptAt: Date, done: number, now: Date): Date {
  const n = Math.min(Math.max(done, 1), MAX_ATTEMPTS - 1);
  const offset = ATTEMPT_OFFSETS_MS[n]!;
  const due = firstAttemptAt.getTime() + offset;
  if (due > now.getTime()) return new Date(due);
  return new Date(now.getTime() + offset - ATTEMPT_OFFSETS_MS[n - 1]!);
}

/**
 * Fans an outbox event out to the active endpoints of its project subscribed to its type: the `events.dispatch`
 * job of events written before `recordEvent` fanned out in the event's own transaction (a database upgraded with
 * such jobs pending). Idempotent: a dispatched event is skipped and (event, endpoint) is unique, so a retried job
 * delivers nothing twice.
 */
export async function fanOutEvent(ctx: AppContext, eventId: string): Promise<number> {
  return ctx.db.transaction(async (tx) => {
    const [event] = await tx.select().from(events).where(eq(events.id, eventId)).for('update').limit(1);
    if (!event || event.dispatchedAt) return 0;
    const now = ctx.now();
    const created = await fanOut(tx, event, now);
    await tx.update(events).set({ dispatchedAt: now }).where(eq(events.id, event.id));
    return created;
  });
}

/** A claimed delivery and its endpoint (null when the row is gone). */
export interface ClaimedDelivery {
  delivery: DeliveryRow;
  endpoint: EndpointRow | null;
}

async function withEndpoints(ctx: AppContext, rows: DeliveryRow[]): Promise<ClaimedDelivery[]> {
  if (rows.length === 0) return [];
  const ids = [...new Set(rows.map((r) => r.endpointId))];
  const endpoints = await ctx.db.select().from(webhookEndpoints).where(inArray(webhookEndpoints.id, ids));
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  return rows.map((delivery) => ({ delivery, endpoint: byId.get(delivery.endpointId) ?? null }));
}

/**
 * The claim's mark of an attempt in flight: kept when already set, since a mark still there at a claim is an attempt
 * that never recorded its outcome (its process died); `recordInterrupted` writes it into the history.
 */
function claimStart(now: Date) {
  return sql`coalesce(${webhookDeliveries.attemptStartedAt}, ${now.toISOString()}::timestamptz)`;
}

/** Whether a claimed delivery carries the mark of an earlier attempt that never recorded its outcome. */
function wasInterrupted(claimed: DeliveryRow): boolean {
  return (
    claimed.attemptStartedAt !== null &&
    claimed.nextAttemptAt !== null &&
    claimed.attemptStartedAt.getTime() < claimed.nextAttemptAt.getTime() - ATTEMPT_LEASE_MS
  );
}

/**
 * Writes an interrupted attempt (a worker died during it: the receiver may or may not have got it) into the
 * delivery's history as a failed attempt, counted against its limit; returns the delivery as it now stands (null
 * when someone else moved it on first).
 */
async function recordInterrupted(ctx: AppContext, claimed: DeliveryRow): Promise<DeliveryRow | null> {
  const done = claimed.attemptCount + 1;
  const now = ctx.now();
  const exhausted = done >= claimed.attemptLimit;
  const error = 'interrupted: the worker stopped during the attempt; its outcome is unknown';
  return ctx.db.transaction(async (tx) => {
    const [moved] = await tx
      .update(webhookDeliveries)
      .set({
        attemptCount: done,
        lastStatusCode: null,
        lastError: error,
        attemptStartedAt: exhausted ? null : now,
        ...(exhausted ? { status: 'failed', nextAttemptAt: null, completedAt: now } : {}),
      })
      .where(
        and(
          eq(webhookDeliveries.id, claimed.id),
          eq(webhookDeliveries.status, 'pending'),
          eq(webhookDeliveries.attemptCount, claimed.attemptCount),
        ),
      )
      .returning();
    if (!moved) return null;
    await tx.insert(webhookAttempts).values({
      deliveryId: claimed.id,
      attemptNumber: done,
      attemptedAt: claimed.attemptStartedAt!,
      statusCode: null,
      durationMs: 0, // unknown: the process died before measuring it
      error,
      responseSnippet: null,
    });
    return moved;
  });
}

/** Claims one delivery if its attempt is due now (see the lease above); null otherwise. */
export async function claimDelivery(ctx: AppContext, deliveryId: string): Promise<ClaimedDelivery | null> {
  const now = ctx.now();
  const rows = await ctx.db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: new Date(now.getTime() + ATTEMPT_LEASE_MS), attemptStartedAt: claimStart(now) })
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        eq(webhookDeliveries.status, 'pending'),
        lte(webhookDeliveries.nextAttemptAt, now),
      ),
    )
    .returning();
  return (await withEndpoints(ctx, rows))[0] ?? null;
}

/** Claims up to `limit` due deliveries, oldest due first, skipping the ones another worker is claiming. */
export async function claimDueDeliveries(ctx: AppContext, limit: number): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const now = ctx.now();
  const rows = await ctx.db.transaction(async (tx) => {
    const due = await tx
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.nextAttemptAt, now)))
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(limit)
      .for('update', { skipLocked: true });
    if (due.length === 0) return [];
    return tx
      .update(webhookDeliveries)
      .set({ nextAttemptAt: new Date(now.getTime() + ATTEMPT_LEASE_MS), attemptStartedAt: claimStart(now) })
      .where(
        inArray(
          webhookDeliveries.id,
          due.map((d) => d.id),
        ),
      )
      .returning();
  });
  return withEndpoints(ctx, rows);
}

/** The headers of one attempt: the spec's X-Svc-* and the Standard Webhooks ones. */
export function deliveryHeaders(
  delivery: { id: string; eventType: string; body: string },
  secrets: { current: string | null; previous: string | null },
  attemptedAt: Date,
): Record<string, string> {
  const timestamp = Math.floor(attemptedAt.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'nfse-service-webhooks/1',
    'x-svc-event': delivery.eventType,
    'x-svc-delivery': delivery.id,
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestamp),
    ...signatureHeaders(secrets, delivery.id, timestamp, delivery.body),
  };
}

/** Ends a delivery without an attempt (its endpoint is gone or disabled). */
async function abandon(ctx: AppContext, claimed: DeliveryRow, reason: string): Promise<void> {
  await ctx.db
    .update(webhookDeliveries)
    .set({ status: 'failed', nextAttemptAt: null, attemptStartedAt: null, lastError: reason, completedAt: ctx.now() })
    .where(
      and(
        eq(webhookDeliveries.id, claimed.id),
        eq(webhookDeliveries.status, 'pending'),
        eq(webhookDeliveries.attemptCount, claimed.attemptCount),
      ),
    );
}

/**
 * Records an attempt and moves the delivery on, in one statement (the attempt row is written only if the
 * delivery row moved), guarded by the attempt count the claim saw: an attempt whose lease ran out and was
 * run again by someone else is not recorded twice.
 */
async function recordAttempt(
  ctx: AppContext,
  claimed: DeliveryRow,
  attemptedAt: Date,
  outcome: AttemptOutcome,
): Promise<boolean> {
  const done = claimed.attemptCount + 1;
  const now = ctx.now();
  const status = outcome.ok ? 'succeeded' : done >= claimed.attemptLimit ? 'failed' : 'pending';
  const next = status === 'pending' ? nextAttemptAt(claimed.createdAt, done, now).toISOString() : null;
  const completed = status === 'pending' ? null : now.toISOString();
  const result = await ctx.db.execute(sql`
    with moved as (
      update webhook_deliveries
         set attempt_count = ${done}, status = ${status}, next_attempt_at = ${next}::timestamptz,
             attempt_started_at = null,
             last_status_code = ${outcome.statusCode}::integer, last_error = ${outcome.error}::text,
             completed_at = ${completed}::timestamptz
       where id = ${claimed.id} and status = 'pending' and attempt_count = ${claimed.attemptCount}
      returning id
    )
    insert into webhook_attempts
           (delivery_id, attempt_number, attempted_at, status_code, duration_ms, error, response_snippet)
    select id, ${done}, ${attemptedAt.toISOString()}::timestamptz, ${outcome.statusCode}::integer,
           ${outcome.durationMs}, ${outcome.error}::text, ${outcome.responseSnippet}::text
      from moved
    returning delivery_id`);
  return (result as unknown as { rows: unknown[] }).rows.length === 1;
}

export interface AttemptOptions {
  /** DNS stand-in (tests) */
  resolve?: HostResolver;
}

/** Runs the attempt of a claimed delivery and records it; the outcome is null when no attempt was made. */
export async function attemptClaimedDelivery(
  ctx: AppContext,
  claimed: ClaimedDelivery,
  options: AttemptOptions = {},
): Promise<AttemptOutcome | null> {
  const { endpoint } = claimed;
  let delivery = claimed.delivery;
  if (wasInterrupted(delivery)) {
    const moved = await recordInterrupted(ctx, delivery);
    if (moved?.status !== 'pending') return null;
    delivery = moved;
  }
  if (!endpoint || endpoint.deletedAt) {
    await abandon(ctx, delivery, 'the endpoint was deleted');
    return null;
  }
  if (!endpoint.active && delivery.eventType !== TEST_EVENT) {
    await abandon(ctx, delivery, 'the endpoint is disabled');
    return null;
  }
  const attemptedAt = ctx.now();
  const outcome = await sendWebhookAttempt({
    url: endpoint.url,
    headers: deliveryHeaders(delivery, endpointSecrets(ctx, endpoint, attemptedAt), attemptedAt),
    body: delivery.body,
    allowInsecure: ctx.config.webhooksAllowInsecure,
    resolve: options.resolve,
  });
  if (!(await recordAttempt(ctx, delivery, attemptedAt, outcome))) {
    ctx.logger.warn({ deliveryId: delivery.id }, 'webhook attempt outlived its lease; not recorded');
  }
  return outcome;
}

/** The `webhook.deliver` job (manual retries): the attempt of one delivery, if it is due and unclaimed. */
export async function runDeliveryJob(ctx: AppContext, deliveryId: string): Promise<void> {
  const claimed = await claimDelivery(ctx, deliveryId);
  if (claimed) await attemptClaimedDelivery(ctx, claimed);
}

/**
 * The test delivery of POST /webhooks/endpoints/{id}/test: a signed `webhook.test` event, attempted once
 * right away (recorded in the history like any delivery) and answered with the attempt's outcome.
 */
export async function sendTestDelivery(
  ctx: AppContext,
  endpoint: EndpointRow,
  options: AttemptOptions = {},
): Promise<{ delivery: DeliveryRow; outcome: AttemptOutcome | null }> {
  const now = ctx.now();
  const id = randomUUID();
  const [claimed] = await ctx.db
    .insert(webhookDeliveries)
    .values({
      id,
      endpointId: endpoint.id,
      projectId: endpoint.projectId,
      eventId: null,
      eventType: TEST_EVENT,
      body: envelope(TEST_EVENT, id, now, {
        endpointId: endpoint.id,
        message: 'Test delivery from the NFS-e service',
      }),
      status: 'pending',
      attemptLimit: 1,
      // claimed by this request from the start (the lease covers a crash mid-attempt)
      nextAttemptAt: new Date(now.getTime() + ATTEMPT_LEASE_MS),
      attemptStartedAt: now,
      createdAt: now,
    })
    .returning();
  const outcome = await attemptClaimedDelivery(ctx, { delivery: claimed!, endpoint }, options);
  const [delivery] = await ctx.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return { delivery: delivery!, outcome };
}

export type RetryResult =
  | { ok: true; value: DeliveryRow }
  | { ok: false; error: 'not_found' | 'pending' | 'endpoint_deleted' };

/**
 * Manual redelivery of a finished (succeeded or failed) delivery: one more attempt now, same delivery id
 * and body; a failure ends it `failed` again (no new automatic schedule).
 */
export async function retryDelivery(ctx: AppContext, projectId: string, id: string): Promise<RetryResult> {
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .select({ delivery: webhookDeliveries, endpointDeletedAt: webhookEndpoints.deletedAt })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.projectId, projectId)))
      .for('update')
      .limit(1);
    if (!row) return { ok: false, error: 'not_found' } as const;
    if (row.delivery.status === 'pending') return { ok: false, error: 'pending' } as const;
    if (row.endpointDeletedAt) return { ok: false, error: 'endpoint_deleted' } as const;
    const [updated] = await tx
      .update(webhookDeliveries)
      .set({
        status: 'pending',
        attemptLimit: row.delivery.attemptCount + 1,
        nextAttemptAt: ctx.now(),
        completedAt: null,
      })
      .where(eq(webhookDeliveries.id, id))
      .returning();
    await ctx.queue.send('webhook.deliver', { deliveryId: id }, { tx });
    return { ok: true, value: updated! } as const;
  });
}

export interface DeliveryFilters {
  endpointId?: string;
  event?: string;
  status?: string;
}

/** The project's deliveries, newest first, with their attempts (oldest first). */
export async function listDeliveries(
  ctx: AppContext,
  projectId: string,
  filters: DeliveryFilters,
  page: { page: number; limit: number },
): Promise<{ rows: { delivery: DeliveryRow; attempts: AttemptRow[] }[]; total: number }> {
  const conditions: SQL[] = [eq(webhookDeliveries.projectId, projectId)];
  if (filters.endpointId) conditions.push(eq(webhookDeliveries.endpointId, filters.endpointId));
  if (filters.event) conditions.push(eq(webhookDeliveries.eventType, filters.event));
  if (filters.status) conditions.push(eq(webhookDeliveries.status, filters.status));
  const where = and(...conditions);
  const rows = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(where)
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(page.limit)
    .offset((page.page - 1) * page.limit);
  const [total] = await ctx.db.select({ n: count() }).from(webhookDeliveries).where(where);
  const attempts = await attemptsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return {
    rows: rows.map((delivery) => ({ delivery, attempts: attempts.get(delivery.id) ?? [] })),
    total: total?.n ?? 0,
  };
}

export async function findDelivery(
  ctx: AppContext,
  projectId: string,
  id: string,
): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] } | null> {
  const [delivery] = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.projectId, projectId)))
    .limit(1);
  if (!delivery) return null;
  return { delivery, attempts: (await attemptsOf(ctx, [id])).get(id) ?? [] };
}

async function attemptsOf(ctx: AppContext, ids: string[]): Promise<Map<string, AttemptRow[]>> {
  const out = new Map<string, AttemptRow[]>();
  if (ids.length === 0) return out;
  const rows = await ctx.db
    .select()
    .from(webhookAttempts)
    .where(inArray(webhookAttempts.deliveryId, ids))
    .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.attemptNumber));
  for (const row of rows) {
    const list = out.get(row.deliveryId) ?? [];
    list.push(row);
    out.set(row.deliveryId, list);
  }
  return out;
}
