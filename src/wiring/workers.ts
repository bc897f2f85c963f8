import type { AppContext } from '../context.ts';
import { endExpiredSessions } from '../db/repositories/dashboard-sessions.ts';
import { runDomainVerification } from '../domains/verification.ts';
import { runDocumentsJob } from '../documents/invoice-documents.ts';
import { runCancelJob } from '../invoices/cancel-job.ts';
import { pruneIdempotencyKeys } from '../invoices/intake.ts';
import { type IssuedNote, runIssueJob } from '../invoices/issue-job.ts';
import { runPollJob } from '../invoices/poll-job.ts';
import { fanOutEvent, runDeliveryJob } from '../webhooks/deliveries.ts';
import { startDeliveryPoller } from '../webhooks/poller.ts';
import { work } from './exhausted.ts';

/**
 * The worker role, wired at the top: binds the handler of every job of the catalogue (`jobs/catalogue.ts`) and its
 * on-exhausted step (`./exhausted.ts`) on this process, starts the webhook delivery poller, the housekeeping timer
 * and, on the embedded database, its vacuum; returns their stop. The queue layer (`jobs/`) knows the catalogue only,
 * never the handlers.
 */
export async function registerWorkers(ctx: AppContext): Promise<() => Promise<void>> {
  const n = ctx.config.workerConcurrency;
  await work(ctx, 'invoice.issue', n, async (data, job) => {
    const end = await runIssueJob(ctx, data.invoiceId, job);
    if (end !== 'done') await storeDocumentsNow(ctx, data.invoiceId, end === 'documents' ? undefined : end);
  });
  await work(ctx, 'invoice.poll', n, (data, job) => runPollJob(ctx, data.invoiceId, data.poll, job));
  await work(ctx, 'invoice.cancel', n, (data, job) => runCancelJob(ctx, data.invoiceId, job));
  // the documents of a note the issue job issued are stored by that job (storeDocumentsNow); this queue takes the
  // rest (notes issued by a poll, cancelled notes, a failed first attempt): PDF rendering is CPU work, a few at a time
  const documents = Math.max(1, Math.min(4, Math.ceil(n / 16)));
  await work(ctx, 'invoice.documents', documents, (data, job) => runDocumentsJob(ctx, data, job));
  await work(ctx, 'domain.verify', 2, (data) => runDomainVerification(ctx, data));
  const stopWebhooks = await registerWebhookWorkers(ctx);
  const stopHousekeeping = startHousekeeping(ctx);
  const stopVacuum = startEmbeddedVacuum(ctx);
  return async () => {
    stopHousekeeping();
    await stopVacuum();
    await stopWebhooks();
  };
}

/**
 * The webhook side of a worker process: the fan-out of outbox events (`events.dispatch`, which wakes the
 * poller), the poller that makes every due attempt (first attempts and scheduled retries), and manual
 * retries (`webhook.deliver`). Returns the stop function (waits for the attempts in flight).
 */
async function registerWebhookWorkers(ctx: AppContext): Promise<() => Promise<void>> {
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

/**
 * The documents of a note the issue job just issued, stored by the issue job's attempt itself (`IssueJobEnd`): the
 * steps of the documents job, run at once. A step that throws (storage down) hands the note to the documents job,
 * with its retries and its on-exhausted step; so do the test hooks that make that job fail or hang.
 */
async function storeDocumentsNow(ctx: AppContext, invoiceId: string, issued?: IssuedNote): Promise<void> {
  const data = { invoiceId, kind: 'emission' } as const;
  const hooked = [...ctx.config.testFaults, ...ctx.config.testHangs].includes('invoice.documents');
  if (!hooked) {
    try {
      await runDocumentsJob(ctx, data, { id: 'inline', retryCount: 0, isLastAttempt: false }, issued);
      return;
    } catch (err) {
      ctx.logger.warn({ invoiceId, err }, 'documents not stored with the issue: handed to the documents job');
    }
  }
  await ctx.queue.send('invoice.documents', data);
  ctx.queue.wake('invoice.documents');
}

const HOUSEKEEPING_EVERY_MS = 10 * 60_000;

/**
 * Drops what has outlived its purpose: idempotency keys past their retention, rate-limit windows long closed,
 * and dashboard sessions past their expiry (their minted credentials revoked). Idempotent, so several worker
 * processes may run it.
 */
export async function runHousekeeping(ctx: AppContext): Promise<void> {
  await pruneIdempotencyKeys(ctx);
  await ctx.rateLimiter.prune();
  await endExpiredSessions(ctx.db, ctx.now());
}

function startHousekeeping(ctx: AppContext): () => void {
  const timer = setInterval(() => {
    runHousekeeping(ctx).catch((err) => ctx.logger.warn({ err }, 'housekeeping failed'));
  }, HOUSEKEEPING_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

const VACUUM_EVERY_MS = 10_000;

/**
 * The embedded database's vacuum (`db/embedded-vacuum.ts`: PGlite has no autovacuum), every VACUUM_EVERY_MS as
 * background work; each run vacuums only the tables past their rule (in bench/intake.ts pg-boss's job table took 3-5 ms
 * of the service's thread, the invoices 16-22 ms). Nothing on PostgreSQL. The stop waits for a run in progress (the
 * database closes after it).
 */
function startEmbeddedVacuum(ctx: AppContext): () => Promise<void> {
  const vacuum = ctx.database.vacuum;
  if (!vacuum) return async () => {};
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(() => {
      running = vacuum()
        .then((tables) => {
          if (tables.length > 0) ctx.logger.debug({ tables }, 'embedded database vacuumed');
        })
        .catch((err) => ctx.logger.warn({ err }, 'embedded database vacuum failed'))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, VACUUM_EVERY_MS);
    timer.unref();
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
