import { eq } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { loadProjectRow } from '../db/repositories/project-profile.ts';
import { invoices } from '../db/schema.ts';
import type { CancellationRecord, Outcome } from '../engines/types.ts';
import type { JobContext } from '../jobs/queue.ts';
import { validateXml } from '../xml/xsd.ts';
import { finishCancellationRejected, finishCancelled } from './cancellation.ts';
import { RetryLater } from './issue-job.ts';

/** Sefin: "another event that ends the note is already linked to it" (a second cancellation). */
const ALREADY_LINKED = 'E0840';

/**
 * The `invoice.cancel` job: sends the cancellation event (e101101) of an issued invoice and records the outcome.
 * - ok: cancelled (finishCancelled);
 * - rejected: the invoice stays issued with the government's code (finishCancellationRejected); an E0840 refusal
 *   (a cancelling event is already linked) is first checked against the government: when the e101101 event
 *   exists, the note is cancelled, whoever sent it;
 * - transient: retried under the policy;
 * - unknown (the request may have been processed): asked right away with the event query, and on every retry
 *   the query comes first, so an event is never sent twice. When the retries run out, the cancellation is
 *   recorded as refused with GOVERNMENT_UNAVAILABLE (asking again is safe: the query runs first).
 */
export async function runCancelJob(ctx: AppContext, invoiceId: string, job: JobContext): Promise<void> {
  const [invoice] = await ctx.db.select().from(invoices).where(eq(invoices.id, invoiceId)).limit(1);
  if (invoice?.status !== 'issued' || invoice.cancellationStatus !== 'requested') return;
  if (!invoice.chNfse) {
    await finishCancellationRejected(ctx, invoiceId, {
      errorCode: 'INVOICE_WITHOUT_KEY',
      errorMessage: 'The invoice has no access key to cancel',
    });
    return;
  }
  const project = await loadProjectRow(ctx.db, invoice.projectId);
  if (!project) {
    await finishCancellationRejected(ctx, invoiceId, {
      errorCode: 'PROJECT_NOT_FOUND',
      errorMessage: 'The project no longer exists',
    });
    return;
  }
  const engine = ctx.engines.get(invoice.engine);
  const loaded = await ctx.certificates.forProject(project.id, ctx.now());
  if (!loaded.ok) {
    await finishCancellationRejected(ctx, invoiceId, { errorCode: loaded.code, errorMessage: loaded.message });
    return;
  }
  const ambiente = invoice.ambiente === 1 ? (1 as const) : (2 as const);
  const connection = { certificate: loaded.certificate, ambiente };
  const note = { chave: invoice.chNfse, ambiente };

  // a previous attempt may have reached the government: ask before sending again
  if (job.retryCount > 0) {
    const found = await engine.reconcileCancellation(note, connection);
    if (found.kind === 'ok' && found.value) return done(ctx, invoiceId, found.value);
    if (found.kind !== 'ok') return giveUpOrRetry(ctx, invoiceId, job, found);
  }

  let outcome: Outcome<CancellationRecord> = await engine.cancel(
    { ...note, providerCnpj: project.cnpj },
    invoice.cancelMotivo,
    connection,
  );
  if (outcome.kind === 'unknown' || (outcome.kind === 'rejected' && hasCode(outcome, ALREADY_LINKED))) {
    const found = await engine.reconcileCancellation(note, connection);
    if (found.kind === 'ok' && found.value) outcome = { kind: 'ok', value: found.value };
  }
  switch (outcome.kind) {
    case 'ok':
      return done(ctx, invoiceId, outcome.value);
    case 'rejected':
      await finishCancellationRejected(ctx, invoiceId, outcome);
      return;
    default:
      return giveUpOrRetry(ctx, invoiceId, job, outcome);
  }
}

function hasCode(outcome: Extract<Outcome<unknown>, { kind: 'rejected' }>, code: string): boolean {
  return outcome.errorCode === code || outcome.errors.some((e) => e.Codigo === code);
}

async function done(ctx: AppContext, invoiceId: string, record: CancellationRecord): Promise<void> {
  const check = validateXml('evento', record.xml);
  if (!check.ok) {
    // the government's document is authoritative; keep it, but say so
    ctx.logger.warn({ invoiceId, errors: check.errors.slice(0, 3) }, 'cancellation event fails evento_v1.01.xsd');
  }
  await finishCancelled(ctx, invoiceId, record);
}

async function giveUpOrRetry(
  ctx: AppContext,
  invoiceId: string,
  job: JobContext,
  outcome: Exclude<Outcome<unknown>, { kind: 'ok' }>,
): Promise<void> {
  const reason = outcome.kind === 'rejected' ? `${outcome.errorCode} ${outcome.errorMessage}` : outcome.reason;
  if (job.isLastAttempt) {
    await finishCancellationRejected(ctx, invoiceId, {
      errorCode: 'GOVERNMENT_UNAVAILABLE',
      errorMessage: `The government service did not answer the cancellation after ${job.retryCount + 1} attempts: ${reason}`,
    });
    return;
  }
  ctx.logger.warn({ invoiceId, reason, attempt: job.retryCount + 1 }, 'invoice cancellation will be retried');
  throw new RetryLater(reason);
}
