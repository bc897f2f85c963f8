import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';

/**
 * Fixed one-minute windows counted in the database, so the limit holds across every API process.
 * To keep the hot path cheap a process leases a slice of the window's allowance at a time (one
 * UPDATE per lease instead of per request); unused leases only make the limit stricter, never looser.
 */
export class RateLimiter {
  private readonly local = new Map<string, { windowStart: number; granted: number; used: number }>();

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** Returns null when allowed, else the seconds until the window resets (for Retry-After). */
  async take(bucket: string, limitPerMinute: number): Promise<number | null> {
    const now = this.now();
    const windowStart = Math.floor(now / 60_000) * 60_000;
    const retryAfter = Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000));
    let state = this.local.get(bucket);
    if (!state || state.windowStart !== windowStart) {
      state = { windowStart, granted: 0, used: 0 };
      this.local.set(bucket, state);
      if (this.local.size > 10_000) this.evict(windowStart);
    }
    if (state.used < state.granted) {
      state.used++;
      return null;
    }
    const lease = Math.max(1, Math.floor(limitPerMinute / 20));
    const result = await this.db.execute(sql`
      insert into rate_limit_counters (bucket, window_start, count)
      values (${bucket}, ${new Date(windowStart).toISOString()}, ${lease})
      on conflict (bucket, window_start) do update set count = rate_limit_counters.count + ${lease}
      returning count`);
    const count = Number((result as unknown as { rows: { count: number }[] }).rows[0]!.count);
    const before = count - lease;
    const grantedNow = Math.max(0, Math.min(lease, limitPerMinute - before));
    state.granted += grantedNow;
    if (state.used < state.granted) {
      state.used++;
      return null;
    }
    return retryAfter;
  }

  private evict(currentWindow: number) {
    for (const [k, v] of this.local) if (v.windowStart !== currentWindow) this.local.delete(k);
  }

  /** Old windows are useless: drop them (called from a periodic job). */
  async prune(): Promise<void> {
    await this.db.execute(sql`delete from rate_limit_counters where window_start < now() - interval '5 minutes'`);
  }
}
