import type { AppContext } from '../context.ts';
import { runDomainVerification } from '../domains/verification.ts';
import { runDocumentsJob } from '../documents/invoice-documents.ts';
import { runCancelJob } from '../invoices/cancel-job.ts';
import { pruneIdempotencyKeys } from '../invoices/intake.ts';
import { runIssueJob } from '../invoices/issue-job.ts';
import { registerWebhookWorkers } from '../webhooks/workers.ts';
import { work } from './exhausted.ts';

/** Registers the handler of every job of the catalogue on this process; returns the stop of its pollers. */
export async function registerWorkers(ctx: AppContext): Promise<() => Promise<void>> {
  const n = ctx.config.workerConcurrency;
  await work(ctx, 'invoice.issue', n, (data, job) => runIssueJob(ctx, data.invoiceId, job));
  await work(ctx, 'invoice.cancel', n, (data, job) => runCancelJob(ctx, data.invoiceId, job));
  // rendering a PDF is CPU work (~25-60 ms): a few at a time, so issuing (the status customers wait for)
  // keeps the CPU; documents follow a little later
  const documents = Math.max(1, Math.min(4, Math.ceil(n / 16)));
  await work(ctx, 'invoice.documents', documents, (data, job) => runDocumentsJob(ctx, data, job));
  await work(ctx, 'domain.verify', 2, (data) => runDomainVerification(ctx, data));
  const stopWebhooks = await registerWebhookWorkers(ctx);
  const stopHousekeeping = startHousekeeping(ctx);
  return async () => {
    stopHousekeeping();
    await stopWebhooks();
  };
}

const HOUSEKEEPING_EVERY_MS = 10 * 60_000;

/**
 * Drops what has outlived its purpose: idempotency keys past their retention and rate-limit windows
 * long closed. Idempotent deletes, so several worker processes may run it.
 */
export async function runHousekeeping(ctx: AppContext): Promise<void> {
  await pruneIdempotencyKeys(ctx);
  await ctx.rateLimiter.prune();
}

function startHousekeeping(ctx: AppContext): () => void {
  const timer = setInterval(() => {
    runHousekeeping(ctx).catch((err) => ctx.logger.warn({ err }, 'housekeeping failed'));
  }, HOUSEKEEPING_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
