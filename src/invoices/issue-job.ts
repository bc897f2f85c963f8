import { and, eq, sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { loadProjectRow, toFiscalProfile } from '../db/repositories/project-profile.ts';
import { invoices, numbering } from '../db/schema.ts';
import { checkInvoiceRequest, type InvoiceRequest } from '../domain/invoice-request.ts';
import type { Outcome } from '../engines/types.ts';
import type { JobContext } from '../jobs/queue.ts';
import { finishError, finishIssued } from './completion.ts';

/** Thrown at the job boundary only: asks the queue to retry the job under its policy. */
export class RetryLater extends Error {}

/** Margin subtracted from the clock for dhEmi: the government refuses a dhEmi after its own clock (E0008). */
const CLOCK_MARGIN_MS = 60_000;

/**
 * The `invoice.issue` job. Every side effect is a recorded step, so a retried or recovered job (after a
 * crash or kill -9) continues where the last one stopped:
 *   1. number: the DPS number is taken from the project's numbering once and kept (a rejected DPS keeps it);
 *   2. prepare: the signed DPS is stored before sending, so every retry sends the same declaration;
 *   3. reconcile: when a previous attempt may have reached the government (`transmission = sending`), ask
 *      it first (GET /dps/{id}) and only resend when it has nothing; never issue twice;
 *   4. send and record the outcome.
 */
export async function runIssueJob(ctx: AppContext, invoiceId: string, job: JobContext): Promise<void> {
  let [invoice] = await ctx.db.select().from(invoices).where(eq(invoices.id, invoiceId)).limit(1);
  if (!invoice || !['queued', 'processing'].includes(invoice.status)) return;

  const projectRow = await loadProjectRow(ctx.db, invoice.projectId);
  if (!projectRow) {
    await finishError(ctx, invoiceId, {
      errorCode: 'PROJECT_NOT_FOUND',
      errorMessage: 'The project no longer exists',
      errors: [],
    });
    return;
  }
  const project = toFiscalProfile(projectRow);
  const engine = ctx.engines.get(invoice.engine);

  // 1. number
  if (invoice.nDps === null) {
    invoice = await ctx.db.transaction(async (tx) => {
      const [current] = await tx.select().from(invoices).where(eq(invoices.id, invoiceId)).for('update').limit(1);
      if (!current || current.nDps !== null) return current!;
      const [next] = await tx
        .insert(numbering)
        .values({ projectId: project.id, kind: 'nfse', lastNumber: 1 })
        .onConflictDoUpdate({
          target: [numbering.projectId, numbering.kind],
          set: { lastNumber: sql`${numbering.lastNumber} + 1` },
        })
        .returning({ lastNumber: numbering.lastNumber });
      const [updated] = await tx
        .update(invoices)
        .set({ status: 'processing', serie: project.serieNfse, nDps: next!.lastNumber, updatedAt: new Date() })
        .where(eq(invoices.id, invoiceId))
        .returning();
      return updated!;
    });
  } else if (invoice.status === 'queued') {
    await ctx.db.update(invoices).set({ status: 'processing' }).where(eq(invoices.id, invoiceId));
  }

  const loaded = await ctx.certificates.forProject(project.id, ctx.now());
  if (!loaded.ok) {
    await finishError(ctx, invoiceId, { errorCode: loaded.code, errorMessage: loaded.message, errors: [] });
    return;
  }
  const connection = {
    certificate: loaded.certificate,
    ambiente: invoice.ambiente === 1 ? (1 as const) : (2 as const),
  };

  // 2. prepare (build → sign → validate), stored before anything is sent
  if (!invoice.dpsXml || !invoice.dpsId) {
    const checked = checkInvoiceRequest(invoice.request as InvoiceRequest, project);
    if (!checked.ok) {
      await finishError(ctx, invoiceId, {
        errorCode: checked.code,
        errorMessage: checked.errors.map((e) => `${e.field}: ${e.message}`).join('; '),
        errors: checked.errors.map((e) => ({ Codigo: checked.code, Descricao: e.message, Complemento: e.field })),
      });
      return;
    }
    const prepared = engine.prepare({
      project,
      invoice: checked.value,
      serie: invoice.serie ?? project.serieNfse,
      number: invoice.nDps!,
      issuedAt: new Date(ctx.now().getTime() - CLOCK_MARGIN_MS),
      certificate: loaded.certificate,
    });
    if (prepared.kind !== 'ok') {
      if (prepared.kind === 'rejected') {
        await finishError(ctx, invoiceId, prepared);
        return;
      }
      throw new RetryLater(prepared.reason);
    }
    const [saved] = await ctx.db
      .update(invoices)
      .set({ dpsXml: prepared.value.xml, dpsId: prepared.value.id, transmission: 'prepared', updatedAt: new Date() })
      .where(and(eq(invoices.id, invoiceId), sql`${invoices.dpsXml} is null`))
      .returning();
    if (saved) invoice = saved;
    else [invoice] = await ctx.db.select().from(invoices).where(eq(invoices.id, invoiceId)).limit(1);
    if (!invoice) return;
  }
  const document = { id: invoice.dpsId!, xml: invoice.dpsXml! };

  // 3. reconcile an attempt that may have reached the government
  if (invoice.transmission === 'sending') {
    const found = await engine.reconcile(document, connection);
    if (found.kind === 'ok' && found.value) {
      await finishIssued(ctx, invoiceId, found.value);
      return;
    }
    if (found.kind !== 'ok') return giveUpOrRetry(ctx, invoiceId, job, found, 'reconciliation');
  }

  // 4. send
  await ctx.db
    .update(invoices)
    .set({ transmission: 'sending', attempts: sql`${invoices.attempts} + 1`, updatedAt: new Date() })
    .where(eq(invoices.id, invoiceId));
  let outcome = await engine.issue(document, connection);
  if (outcome.kind === 'unknown') {
    // the answer was lost: ask right away; if the government has nothing yet, the next attempt asks again
    const found = await engine.reconcile(document, connection);
    if (found.kind === 'ok' && found.value) outcome = { kind: 'ok', value: found.value };
  }
  switch (outcome.kind) {
    case 'ok':
      await finishIssued(ctx, invoiceId, outcome.value);
      return;
    case 'rejected':
      await ctx.db.update(invoices).set({ transmission: 'done' }).where(eq(invoices.id, invoiceId));
      await finishError(ctx, invoiceId, outcome);
      return;
    default:
      return giveUpOrRetry(ctx, invoiceId, job, outcome, 'transmission');
  }
}

async function giveUpOrRetry(
  ctx: AppContext,
  invoiceId: string,
  job: JobContext,
  outcome: Exclude<Outcome<unknown>, { kind: 'ok' }>,
  stage: string,
): Promise<void> {
  const reason = outcome.kind === 'rejected' ? `${outcome.errorCode} ${outcome.errorMessage}` : outcome.reason;
  if (job.isLastAttempt) {
    await finishError(ctx, invoiceId, {
      errorCode: 'GOVERNMENT_UNAVAILABLE',
      errorMessage: `The government service did not answer after ${job.retryCount + 1} attempts (${stage}): ${reason}`,
      errors: [],
    });
    return;
  }
  ctx.logger.warn({ invoiceId, stage, reason, attempt: job.retryCount + 1 }, 'invoice issue will be retried');
  throw new RetryLater(reason);
}
