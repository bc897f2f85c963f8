import type { AppContext } from '../context.ts';
import { runDocumentsJob } from '../documents/invoice-documents.ts';
import { runCancelJob } from '../invoices/cancel-job.ts';
import { runIssueJob } from '../invoices/issue-job.ts';
import { registerWebhookWorkers } from '../webhooks/workers.ts';

/** Registers the handler of every job of the catalogue on this process; returns the stop of its pollers. */
export async function registerWorkers(ctx: AppContext): Promise<() => Promise<void>> {
  const n = ctx.config.workerConcurrency;
  await ctx.queue.work('invoice.issue', n, (data, job) => runIssueJob(ctx, data.invoiceId, job));
  await ctx.queue.work('invoice.cancel', n, (data, job) => runCancelJob(ctx, data.invoiceId, job));
  // rendering a PDF is CPU work (~25-60 ms): a few at a time, so issuing (the status customers wait for)
  // keeps the CPU; documents follow a little later
  const documents = Math.max(1, Math.min(4, Math.ceil(n / 16)));
  await ctx.queue.work('invoice.documents', documents, (data, job) => runDocumentsJob(ctx, data, job));
  return registerWebhookWorkers(ctx);
}
