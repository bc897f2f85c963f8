import type { AppContext } from '../context.ts';
import { work } from '../jobs/exhausted.ts';
import { fanOutEvent, runDeliveryJob } from './deliveries.ts';
import { startDeliveryPoller } from './poller.ts';

/**
 * The webhook side of a worker process: the fan-out of outbox events (`events.dispatch`, which wakes the
 * poller), the poller that makes every due attempt (first attempts and scheduled retries), and manual
 * retries (`webhook.deliver`). Returns the stop function (waits for the attempts in flight).
 */
export async function registerWebhookWorkers(ctx: AppContext): Promise<() => Promise<void>> {
  const n = ctx.config.workerConcurrency;
  // attempts run up to 2n at once: they mostly wait on the network
  const poller = startDeliveryPoller(ctx, { concurrency: 2 * n });
  try {
    await work(ctx, 'events.dispatch', n, async (data) => {
      if ((await fanOutEvent(ctx, data.eventId)) > 0) poller.wake();
    });
    await work(ctx, 'webhook.deliver', n, (data) => runDeliveryJob(ctx, data.deliveryId));
  } catch (err) {
    await poller.stop();
    throw err;
  }
  return () => poller.stop();
}
