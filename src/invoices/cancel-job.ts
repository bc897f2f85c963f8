import type { AppContext } from '../context.ts';
import { type CancellationRecord, hasGovernmentCode, type IssuedReference, type Outcome } from '../engines/types.ts';
import type { JobContext } from '../jobs/queue.ts';
import { finishCancellationRejected, finishCancelled } from './cancellation.ts';
import { loadJobSubject, retryOrGiveUp } from './job-subject.ts';

/**
 * The `invoice.cancel` job: sends the cancellation of an issued invoice through its engine and records the outcome.
 * - ok: cancelled (finishCancelled);
 * - rejected: the invoice stays issued with the government's code (finishCancellationRejected); a refusal that may
 *   mean "already cancelled" (the engine's `alreadyCancelledCodes`, national E0840) is first checked against the
 *   government: when the cancellation exists, the note is cancelled, whoever sent it;
 * - transient: retried under the policy;
 * - unknown (the request may have been processed): asked right away with the cancellation query, and on every
 *   retry the query comes first, so a cancellation is never sent twice. When the retries run out, the cancellation
 *   is recorded as refused with GOVERNMENT_UNAVAILABLE (asking again is safe: the query runs first).
 */
export async function runCancelJob(ctx: AppContext, invoiceId: string, job: JobContext): Promise<void> {
  const refuse = (errorCode: string, errorMessage: string) =>
    finishCancellationRejected(ctx, invoiceId, { errorCode, errorMessage });
  const subject = await loadJobSubject(ctx, invoiceId, {
    wanted: (invoice) => invoice.status === 'issued' && invoice.cancellationStatus === 'requested',
    refuse,
  });
  if (!subject) return;
  const { invoice, project, engine, connection } = subject;
  if (!invoice.accessKey && !invoice.numeroNfse) {
    await refuse('INVOICE_WITHOUT_KEY', 'The invoice has no key or number to cancel');
    return;
  }
  const note: IssuedReference = {
    chave: invoice.accessKey,
    numero: invoice.numeroNfse,
    verificationCode: invoice.verificationCode,
    ambiente: connection.ambiente,
    inscricaoMunicipal: project.inscricaoMunicipal,
  };

  // a previous attempt may have reached the government: ask before sending again
  if (job.retryCount > 0) {
    const found = await engine.reconcileCancellation(note, connection);
    if (found.kind === 'ok' && found.value) return finishCancelled(ctx, invoiceId, found.value);
    if (found.kind !== 'ok') return giveUpOrRetry(ctx, invoiceId, job, found);
  }

  let outcome: Outcome<CancellationRecord> = await engine.cancel(
    {
      ...note,
      providerCnpj: project.cnpj,
      codigoMunicipio: project.codigoMunicipio,
      inscricaoMunicipal: project.inscricaoMunicipal,
    },
    invoice.cancelMotivo,
    connection,
  );
  const alreadyCancelled = hasGovernmentCode(outcome, engine.alreadyCancelledCodes);
  if (outcome.kind === 'unknown' || alreadyCancelled) {
    const found = await engine.reconcileCancellation(note, connection);
    if (found.kind === 'ok' && found.value) outcome = { kind: 'ok', value: found.value };
    else if (alreadyCancelled && !engine.queriesCancellation) {
      // nothing to ask: the refusal itself says the note is cancelled (a previous attempt whose answer was lost)
      outcome = { kind: 'ok', value: { cancelledAt: ctx.now(), xml: '' } };
    }
  }
  switch (outcome.kind) {
    case 'ok':
      return finishCancelled(ctx, invoiceId, outcome.value);
    case 'rejected':
      await finishCancellationRejected(ctx, invoiceId, outcome);
      return;
    default:
      return giveUpOrRetry(ctx, invoiceId, job, outcome);
  }
}

function giveUpOrRetry(
  ctx: AppContext,
  invoiceId: string,
  job: JobContext,
  outcome: Exclude<Outcome<never>, { kind: 'ok' }>,
) {
  return retryOrGiveUp(ctx, job, outcome, { invoiceId, stage: 'cancellation' }, (reason, attempts) =>
    finishCancellationRejected(ctx, invoiceId, {
      errorCode: 'GOVERNMENT_UNAVAILABLE',
      errorMessage: `The government service did not answer the cancellation after ${attempts} attempts: ${reason}`,
    }),
  );
}
