import type { AppContext } from '../context.ts';
import { runIssueJob } from '../invoices/issue-job.ts';

/** Registers the handler of every job of the catalogue on this process. */
export async function registerWorkers(ctx: AppContext): Promise<void> {
  const n = ctx.config.workerConcurrency;
  await ctx.queue.work('invoice.issue', n, (data, job) => runIssueJob(ctx, data.invoiceId, job));
}
