import { sql } from 'drizzle-orm';
import type { RateLimits } from '../context.ts';
import type { Db } from '../db/client.ts';

/** Width of one counter slot; a limit is checked over the current slot and the 30 before it (60-62 s). */
export const RATE_SLOT_MS = 2_000;
const SLOTS_BEHIND = 60_000 / RATE_SLOT_MS;

/** The oldest counted slot leaves the window at the next slot boundary: the earliest time worth retrying. */
function retryAfterOf(slot: number, now: number): number {
  return Math.max(1, Math.ceil((slot + RATE_SLOT_MS - now) / 1000));
}

/**
 * Sliding-window limits counted in the database, so a limit holds across every API process. Requests are counted
 * in 2-second slots; a request is admitted only while the current slot plus the 30 before it (60-62 s) hold
 * fewer than the limit, so no 60-second interval ever admits more than the limit (a fixed one-minute window lets
 * twice the limit through around its boundary), while a client sending evenly at its limit still gets ~97% through. To keep the hot path cheap a process leases a slice of the
 * allowance at a time (one statement per lease, not per request); unused leases only make the limit stricter.
 */
export class RateLimiter implements RateLimits {
  private readonly local = new Map<
    string,
    { slot: number; granted: number; used: number; refused: boolean; leasing: Promise<void> | null }
  >();

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** Returns null when allowed, else the seconds until a request may be admitted again (for Retry-After). */
  async take(bucket: string, limitPerMinute: number): Promise<number | null> {
    const now = this.now();
    const slot = Math.floor(now / RATE_SLOT_MS) * RATE_SLOT_MS;
    let state = this.local.get(bucket);
    if (!state || state.slot !== slot) {
      state = { slot, granted: 0, used: 0, refused: false, leasing: null };
      this.local.set(bucket, state);
      if (this.local.size > 10_000) this.evict(slot);
    }
    if (state.used < state.granted) {
      state.used++;
      return null;
    }
    if (state.refused) return retryAfterOf(slot, now); // nothing frees allowance within a slot
    // one lease in flight per bucket: concurrent requests wait for it instead of each reserving a lease of their own
    // (a burst of N would otherwise reserve N leases at once, and the unused ones are lost at the slot's end)
    if (state.leasing) {
      await state.leasing;
      return this.take(bucket, limitPerMinute);
    }
    const leasing = this.lease(bucket, limitPerMinute, state, slot);
    state.leasing = leasing;
    try {
      await leasing;
    } finally {
      state.leasing = null;
    }
    if (state.used < state.granted) {
      state.used++;
      return null;
    }
    state.refused = true;
    return retryAfterOf(slot, now);
  }

  /** Reserves one lease of the current slot's allowance in the database (what is granted goes to `state`). */
  private async lease(bucket: string, limitPerMinute: number, state: { granted: number }, slot: number): Promise<void> {
    const lease = Math.max(1, Math.floor(limitPerMinute / 60));
    const slotStart = new Date(slot).toISOString();
    const since = new Date(slot - SLOTS_BEHIND * RATE_SLOT_MS).toISOString();
    // one statement: the previous slots' total, and the current slot's counter raised by a lease only while the
    // window has allowance left (a refused request counts nothing, so a client that waits gets through again)
    const result = await this.db.execute(sql`
      with prev as (
        select coalesce(sum(count), 0)::int as n from rate_limit_counters
        where bucket = ${bucket} and window_start >= ${since} and window_start < ${slotStart}
      )
      insert into rate_limit_counters (bucket, window_start, count)
      select ${bucket}, ${slotStart}, ${lease} from prev where prev.n < ${limitPerMinute}
      on conflict (bucket, window_start) do update set count = rate_limit_counters.count + ${lease}
        where rate_limit_counters.count + (select n from prev) < ${limitPerMinute}
      returning count, (select n from prev) as previous`);
    const row = (result as unknown as { rows: { count: number | string; previous: number | string }[] }).rows[0];
    const grantedNow = row
      ? Math.max(0, Math.min(lease, limitPerMinute - Number(row.previous) - (Number(row.count) - lease)))
      : 0;
    state.granted += grantedNow;
  }

  private evict(currentSlot: number) {
    for (const [k, v] of this.local) if (v.slot !== currentSlot) this.local.delete(k);
  }

  /** Old slots are useless: drop them (called from a periodic job). */
  async prune(): Promise<void> {
    await this.db.execute(sql`delete from rate_limit_counters where window_start < now() - interval '5 minutes'`);
  }
}
