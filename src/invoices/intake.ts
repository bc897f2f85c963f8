import { createHash, randomUUID } from 'node:crypto';
import { and, eq, lt, sql, TransactionRollbackError } from 'drizzle-orm';
import { invoiceStatusPath } from '../api-paths.ts';
import type { AppContext } from '../context.ts';
import type { Tx } from '../db/client.ts';
import { insertQueuedInvoices, type QueuedInvoice } from '../db/repositories/invoices.ts';
import { consumeCredits } from '../db/repositories/organizations.ts';
import { batches, idempotencyKeys } from '../db/schema.ts';
import type { Warning } from '../domain/warnings.ts';

/**
 * Accepting work (POST /emitir and /emitir/batch). An accepted invoice is durable before the 202: its
 * row, its credit and its job are committed in one transaction. Concurrent requests are committed
 * together (micro-batched: one transaction for everything that arrived in the same few milliseconds),
 * which keeps acceptance fast without giving up durability. A group whose transaction fails is retried member by
 * member, so a request the database refuses fails alone.
 */
export interface InvoiceDraft {
  id: string;
  request: Record<string, unknown>;
  referencia: string | null;
  batchIndex?: number;
  /** Adjustments made on the caller's behalf (domain/warnings.ts), stored on the row and shown in the status. */
  warnings: Warning[];
}

export interface Acceptance {
  orgId: string;
  projectId: string;
  engine: string;
  ambiente: 1 | 2;
  drafts: InvoiceDraft[];
  batch?: { id: string };
}

export type AcceptResult = { ok: true } | { ok: false; reason: 'credits' };

interface Pending {
  acceptance: Acceptance;
  resolve: (r: AcceptResult) => void;
  reject: (err: unknown) => void;
}

export const IDEMPOTENCY_TTL_HOURS = 48;

export function pollUrl(invoiceId: string): string {
  return invoiceStatusPath(invoiceId);
}

export function newInvoiceId(): string {
  return randomUUID();
}

/** A group's credits, taken last, were refused (a hard limit): its transaction is rolled back and taken again. */
class CreditsRefused extends Error {}

/**
 * Writes acceptances inside a transaction; returns per-acceptance results (credits may refuse one). Credits are one
 * UPDATE of the organization's row per organization for the whole group, and that row is what concurrent groups of
 * one organization wait for, from their UPDATE to their COMMIT. `credits: 'last'` takes them after the inserts, right
 * before the COMMIT, so the next group waits for one statement and the commit instead of the whole transaction; a
 * refusal then throws `CreditsRefused` (nothing is kept) and the group is written again with `credits: 'first'`,
 * which takes them before anything is written and, when the group's total is refused, member by member.
 */
async function writeAcceptances(
  ctx: AppContext,
  tx: Tx,
  items: Acceptance[],
  credits: 'first' | 'last',
): Promise<AcceptResult[]> {
  const results: AcceptResult[] = items.map(() => ({ ok: true }));
  const byOrg = new Map<string, number[]>();
  for (const [i, a] of items.entries()) {
    const list = byOrg.get(a.orgId);
    if (list) list.push(i);
    else byOrg.set(a.orgId, [i]);
  }
  // organizations in one fixed order: two groups in flight never lock the same rows in opposite orders (deadlock)
  const orgs = [...byOrg]
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
    .map(([orgId, indexes]) => ({ orgId, indexes, total: indexes.reduce((n, i) => n + items[i]!.drafts.length, 0) }));
  if (credits === 'first') {
    for (const { orgId, indexes, total } of orgs) {
      if (await consumeCredits(tx, orgId, total)) continue;
      for (const i of indexes) {
        if (!(await consumeCredits(tx, orgId, items[i]!.drafts.length))) results[i] = { ok: false, reason: 'credits' };
      }
    }
  }
  const rows: QueuedInvoice[] = [];
  const newBatches: (typeof batches.$inferInsert)[] = [];
  for (const [i, a] of items.entries()) {
    if (!results[i]!.ok) continue;
    if (a.batch) newBatches.push({ id: a.batch.id, projectId: a.projectId, total: a.drafts.length });
    for (const d of a.drafts) {
      rows.push({
        id: d.id,
        projectId: a.projectId,
        orgId: a.orgId,
        batchId: a.batch?.id ?? null,
        batchIndex: d.batchIndex ?? null,
        engine: a.engine,
        referencia: d.referencia,
        request: d.request,
        warnings: d.warnings,
        ambiente: a.ambiente,
      });
    }
  }
  if (newBatches.length > 0) await tx.insert(batches).values(newBatches);
  if (rows.length > 0) {
    await insertQueuedInvoices(tx, rows);
    await ctx.queue.insert(
      'invoice.issue',
      rows.map((r) => ({ invoiceId: r.id })),
      { tx },
    );
  }
  if (credits === 'last') {
    for (const { orgId, total } of orgs) if (!(await consumeCredits(tx, orgId, total))) throw new CreditsRefused();
  }
  return results;
}

/** PostgreSQL's deadlock_detected and serialization_failure: the same transaction may succeed when run again. */
function isTransientDatabaseError(err: unknown): boolean {
  const code =
    (err as { code?: string; cause?: { code?: string } })?.code ?? (err as { cause?: { code?: string } })?.cause?.code;
  return code === '40P01' || code === '40001';
}

export class InvoiceIntake {
  private pending: Pending[] = [];
  private flushing = 0;
  private flushScheduled = false;
  private static readonly MAX_GROUP = 500;
  /** group commit: while these many transactions are in flight, new arrivals wait and share the next one */
  private readonly maxInFlight: number;

  constructor(private readonly ctx: AppContext) {
    this.maxInFlight = ctx.database.kind === 'pglite' ? 1 : 2;
  }

  /** Durably accepts the drafts (committed together with whatever else arrived meanwhile). */
  accept(acceptance: Acceptance): Promise<AcceptResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ acceptance, resolve, reject });
      this.scheduleFlush();
    });
  }

  /**
   * The group starts after the requests read in the same turn of the event loop have joined it (setImmediate runs
   * once the loop has read every socket that was ready). On the embedded database this is what forms groups at all:
   * PGlite runs a transaction on this thread without yielding to the loop, so no request arrives while one is in
   * flight, and without the wait each request committed a transaction of its own.
   */
  private scheduleFlush() {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.maybeFlush();
    });
  }

  private maybeFlush() {
    while (this.flushing < this.maxInFlight && this.pending.length > 0) this.flush();
  }

  private flush() {
    const group = this.pending.splice(0, InvoiceIntake.MAX_GROUP);
    this.flushing++;
    this.commitGroup(group).finally(() => {
      this.flushing--;
      this.maybeFlush();
    });
  }

  /**
   * One transaction for the whole group. If it fails, nobody's work was committed, and the failure may belong
   * to a single member (a row the database refuses): each member is then retried in a transaction of its own,
   * so one bad acceptance can only fail itself, never the other requests (or tenants) that shared its group.
   */
  private async commitGroup(group: Pending[]): Promise<void> {
    try {
      const results = await this.write(group);
      for (const [i, p] of group.entries()) p.resolve(results[i]!);
      return;
    } catch (err) {
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
      // the error's code and message only: a driver's detail may quote the refused row (personal data)
      const { code, message } = err as { code?: string; message?: string };
      this.ctx.logger.warn(
        { error: { code, message }, members: group.length },
        'intake group commit failed; committing its members one by one',
      );
    }
    for (const member of group) {
      for (let attempt = 1; ; attempt++) {
        try {
          const [result] = await this.write([member]);
          member.resolve(result!);
          break;
        } catch (err) {
          // a deadlock or serialization failure is the database's, not the member's: try it again a few times
          if (attempt < 3 && isTransientDatabaseError(err)) continue;
          member.reject(err);
          break;
        }
      }
    }
  }

  private async write(group: Pending[]): Promise<AcceptResult[]> {
    const items = group.map((p) => p.acceptance);
    const results = await this.ctx.db
      .transaction((tx) => writeAcceptances(this.ctx, tx, items, 'last'))
      .catch((err: unknown) => {
        if (!(err instanceof CreditsRefused)) throw err;
        return this.ctx.db.transaction((tx) => writeAcceptances(this.ctx, tx, items, 'first'));
      });
    this.ctx.queue.wake('invoice.issue');
    return results;
  }

  /**
   * With an Idempotency-Key: the key, the invoice and its job commit together, so a replay always finds
   * either nothing or the complete first response.
   */
  async acceptIdempotent(
    acceptance: Acceptance,
    key: string,
    bodyHash: string,
    response: { status: number; body: unknown },
  ): Promise<
    | { kind: 'accepted' }
    | { kind: 'refused'; reason: 'credits' }
    | { kind: 'replay'; status: number; body: unknown }
    | { kind: 'mismatch' }
  > {
    return this.ctx.db
      .transaction(async (tx) => {
        const inserted = await tx
          .insert(idempotencyKeys)
          .values({
            projectId: acceptance.projectId,
            key,
            requestHash: bodyHash,
            statusCode: response.status,
            response: response.body as object,
          })
          .onConflictDoNothing()
          .returning({ key: idempotencyKeys.key });
        if (inserted.length === 0) {
          const [existing] = await tx
            .select()
            .from(idempotencyKeys)
            .where(and(eq(idempotencyKeys.projectId, acceptance.projectId), eq(idempotencyKeys.key, key)))
            .limit(1);
          if (!existing) throw new Error('idempotency row vanished');
          if (existing.requestHash !== bodyHash) return { kind: 'mismatch' as const };
          return { kind: 'replay' as const, status: existing.statusCode, body: existing.response };
        }
        const [result] = await writeAcceptances(this.ctx, tx, [acceptance], 'first');
        if (!result!.ok) {
          tx.rollback();
        }
        return { kind: 'accepted' as const };
      })
      .then((result) => {
        if (result.kind === 'accepted') this.ctx.queue.wake('invoice.issue');
        return result;
      })
      .catch((err: unknown) => {
        if (err instanceof TransactionRollbackError) return { kind: 'refused' as const, reason: 'credits' as const };
        throw err;
      });
  }
}

/** A stable hash of a JSON body (key order does not matter). */
export function hashBody(body: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value as object)
          .sort()
          .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
      );
    }
    return value;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(body)))
    .digest('hex');
}

/** Idempotency keys are kept at least 24 h; older ones are pruned by a periodic task. */
export async function pruneIdempotencyKeys(ctx: AppContext): Promise<void> {
  await ctx.db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.createdAt, sql`now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`));
}
