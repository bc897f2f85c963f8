import type { AppContext } from '../context.ts';
import { failDomainVerification } from '../domains/verification.ts';
import { markDocumentsFailed } from '../documents/invoice-documents.ts';
import { finishCancellationFailed } from '../invoices/cancellation.ts';
import { finishError } from '../invoices/completion.ts';
import { type ExhaustedStep, JOB_POLICIES, type JobName, type JobPayloads } from '../jobs/catalogue.ts';
import type { ExhaustedHandler, JobHandler } from '../jobs/queue.ts';

/** The subject of a job, for the on-exhausted steps that end one. */
function invoiceIdOf(data: JobPayloads[JobName]): string | null {
  return 'invoiceId' in data ? data.invoiceId : null;
}

/**
 * Carries out the catalogue's on-exhausted step of a job (`JOB_POLICIES[name].onExhausted`). The message names
 * what failed without the internals of the error (those go to the log).
 */
export function exhaustedStep<N extends JobName>(ctx: AppContext, name: N): ExhaustedHandler<N> {
  const step: ExhaustedStep = JOB_POLICIES[name].onExhausted;
  return async (data, reason) => {
    const attempts = ctx.queue.policy(name).retryLimit + 1;
    ctx.logger.error({ job: name, data, reason, step: step.action }, 'job ran out of attempts');
    const invoiceId = invoiceIdOf(data);
    switch (step.action) {
      case 'fail-invoice':
        if (!invoiceId) return;
        await finishError(ctx, invoiceId, {
          errorCode: step.code,
          errorMessage: `The invoice could not be processed: an internal failure persisted over ${attempts} attempts`,
          errors: [],
        });
        return;
      case 'fail-cancellation':
        if (!invoiceId) return;
        await finishCancellationFailed(ctx, invoiceId, {
          errorCode: step.code,
          errorMessage: `The cancellation could not be processed: an internal failure persisted over ${attempts} attempts; it may be requested again`,
        });
        return;
      case 'fail-documents':
        if (!invoiceId) return;
        await markDocumentsFailed(ctx, invoiceId, step.code);
        return;
      case 'fail-domain-verification':
        if ('storageBaseUrl' in data) await failDomainVerification(ctx, data, step.code);
        return;
      case 'none':
        return;
    }
  };
}

/**
 * Tests only (`NFSE_TEST_FAULTS`): the handler of a listed job throws before doing anything, or (`name:hang`)
 * never settles, so each attempt expires like one whose worker hung or was killed.
 */
function withFaults<N extends JobName>(ctx: AppContext, name: N, handler: JobHandler<N>): JobHandler<N> {
  if (ctx.config.testHangs.includes(name)) return () => new Promise<void>(() => undefined);
  if (!ctx.config.testFaults.includes(name)) return handler;
  return async () => {
    throw new Error(`injected fault in ${name} (NFSE_TEST_FAULTS)`);
  };
}

/**
 * Registers a job's handler (with the test fault hook) and the worker of its dead-letter queue, which runs the
 * catalogue's on-exhausted step however the job ran out of attempts.
 */
export async function work<N extends JobName>(ctx: AppContext, name: N, concurrency: number, handler: JobHandler<N>) {
  await ctx.queue.workExhausted(name, exhaustedStep(ctx, name));
  await ctx.queue.work(name, concurrency, withFaults(ctx, name, handler));
}
