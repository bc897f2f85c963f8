import type { AppContext } from '../context.ts';
import { attemptClaimedDelivery, claimDueDeliveries } from './deliveries.ts';
import { onDeliveriesCreated } from '../events/outbox.ts';

/** How often a worker looks for due attempts (the schedule itself is `next_attempt_at` in the database). */
export const POLL_INTERVAL_MS = 500;

export interface DeliveryPoller {
  /** polls now (new deliveries were just written by this process) */
  wake(): void;
  /** stops polling and waits for the attempts in flight to be recorded */
  stop(): Promise<void>;
}

/**
 * The retry side of webhook delivery on a worker process: claims the deliveries whose next attempt is due
 * by `ctx.now()` (several workers share the table through `FOR UPDATE SKIP LOCKED` and the claim lease)
 * and runs at most `concurrency` attempts at a time. Only the polling cadence is a timer here; what is due
 * is read from the database each time, so a stopped or killed process loses nothing.
 */
export function startDeliveryPoller(
  ctx: AppContext,
  options: { concurrency: number; intervalMs?: number },
): DeliveryPoller {
  const intervalMs = options.intervalMs ?? POLL_INTERVAL_MS;
  const inFlight = new Set<Promise<void>>();
  let running = true;
  /** the last claim filled every free slot: more may be due */
  let backlog = false;
  let woken = false;
  let interrupt: (() => void) | null = null;

  const wake = () => {
    woken = true;
    interrupt?.();
  };
  const sleep = async () => {
    if (!woken) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        interrupt = resolve;
        timer = setTimeout(resolve, intervalMs);
      });
      clearTimeout(timer);
      interrupt = null;
    }
    woken = false;
  };

  const loop = async () => {
    while (running) {
      try {
        const free = options.concurrency - inFlight.size;
        const claimed = await claimDueDeliveries(ctx, free);
        backlog = free > 0 && claimed.length === free;
        for (const claim of claimed) {
          const run: Promise<void> = attemptClaimedDelivery(ctx, claim)
            .then(() => undefined)
            .catch((err) => ctx.logger.warn({ err, deliveryId: claim.delivery.id }, 'webhook attempt failed to run'))
            .finally(() => {
              inFlight.delete(run);
              // with a backlog, claim again once half the slots are free (batches, not one query per attempt)
              if (backlog && inFlight.size <= options.concurrency / 2) wake();
            });
          inFlight.add(run);
        }
      } catch (err) {
        if (running) ctx.logger.warn({ err }, 'webhook poller could not claim due deliveries');
      }
      if (running) await sleep();
    }
  };
  const done = loop();
  // deliveries this process committed (events/outbox.ts) are attempted at once, not at the next poll
  const unsubscribe = onDeliveriesCreated(wake);

  return {
    wake,
    async stop() {
      unsubscribe();
      running = false;
      wake();
      await done;
      await Promise.allSettled([...inFlight]);
    },
  };
}
