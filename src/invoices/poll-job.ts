import type { AppContext } from '../context.ts';
import type { JobContext } from '../jobs/queue.ts';
import { finishError } from './completion.ts';
import { POLL_MAX, recordOutcome, schedulePoll } from './issue-job.ts';
import { loadJobSubject } from './job-subject.ts';

/**
 * The `invoice.poll` job: asks the government for the result of the protocol under which it holds an invoice
 * (asynchronous families). Issued or refused ends the invoice like a synchronous answer; still pending schedules
 * the next poll (issue-job.ts `pollDelaySeconds`); a failed query is retried under the job's policy. The
 * declaration is never sent again: after `POLL_MAX` polls (24 h) the invoice ends in `error` with
 * PROTOCOL_UNRESOLVED and keeps its protocol, shown in the status, so it can be followed at the provider.
 */
export async function runPollJob(ctx: AppContext, invoiceId: string, poll: number, job: JobContext): Promise<void> {
  const subject = await loadJobSubject(ctx, invoiceId, {
    wanted: (invoice) => invoice.status === 'processing' && invoice.transmission === 'pending' && !!invoice.protocol,
    refuse: (errorCode, errorMessage) => finishError(ctx, invoiceId, { errorCode, errorMessage, errors: [] }),
  });
  if (!subject) return;
  const { invoice, engine, connection } = subject;
  const protocol = invoice.protocol!;
  const document = { id: invoice.declarationId ?? '', xml: invoice.declarationXml ?? '' };
  const outcome = await engine.poll(protocol, document, connection);
  if (outcome.kind !== 'pending') {
    await recordOutcome(ctx, invoiceId, job, outcome, `poll ${poll}`);
    return;
  }
  if (poll >= POLL_MAX) {
    await finishError(ctx, invoiceId, {
      errorCode: 'PROTOCOL_UNRESOLVED',
      errorMessage: `The government still holds protocol ${protocol} unprocessed after ${poll} queries over 24 hours; the declaration was not sent again`,
      errors: [],
    });
    return;
  }
  await schedulePoll(ctx, invoiceId, poll + 1, outcome.retryAfterMs);
}
