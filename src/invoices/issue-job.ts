import { eq, sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { invoices, numbering } from '../db/schema.ts';
import { checkInvoiceRequest, type InvoiceRequest } from '../domain/invoice-request.ts';
import type { Failure, IssuedDocument, Outcome, PreparedDocument } from '../engines/types.ts';
import type { JobContext } from '../jobs/queue.ts';
import { finishError, finishIssued, issuedColumns } from './completion.ts';
import { type InvoiceRow, type JobSubject, loadJobSubject, RetryLater, retryOrGiveUp } from './job-subject.ts';

export { RetryLater };

/** Margin subtracted from the clock for the emission time: governments refuse one after their own clock. */
const CLOCK_MARGIN_MS = 60_000;

/**
 * The `invoice.issue` job. Every side effect is a recorded step, so a retried or recovered job (after a
 * crash or kill -9) continues where the last one stopped:
 *   1. number: the declaration number is taken from the project's numbering once and kept (a rejected one keeps it);
 *   2. prepare: the engine builds, signs and validates the declaration, stored before sending, so every retry
 *      sends the same bytes;
 *   3. reconcile: when a previous attempt may have reached the government (`transmission = sending`), ask it
 *      first and only resend when it has nothing; never issue twice;
 *   4. send and record the outcome; an asynchronous answer (`pending`) records its protocol at once and hands
 *      the invoice to `invoice.poll`: a declaration whose protocol is known is never sent again;
 *   5. issued: answers `documents`, and the caller stores them before the job completes (`IssueJobEnd`).
 */
export async function runIssueJob(ctx: AppContext, invoiceId: string, job: JobContext): Promise<IssueJobEnd> {
  const subject = await loadJobSubject(ctx, invoiceId, {
    wanted: (invoice) => ['queued', 'processing'].includes(invoice.status) || documentsLeftByIssueJob(invoice),
    refuse: (errorCode, errorMessage) => finishError(ctx, invoiceId, { errorCode, errorMessage, errors: [] }),
  });
  if (!subject) return 'done';
  // issued by an attempt that stopped before its documents were stored (a crash, an expiry): they are still ours
  if (subject.invoice.status === 'issued') return 'documents';
  const { engine, connection } = subject;

  // 1. number
  const invoice = await takeNumber(ctx, subject);
  if (invoice.transmission === 'pending' && invoice.protocol) {
    // the government holds it: only the poll may move it on (schedule one, in case the last one was lost)
    await schedulePoll(ctx, invoiceId, 1);
    return 'done';
  }

  // 2. prepare (build → sign → validate), stored before anything is sent
  const prepared = await prepare(ctx, { ...subject, invoice });
  if (!prepared) return 'done';
  const { document } = prepared;

  // 3. reconcile an attempt that may have reached the government
  if (invoice.transmission === 'sending') {
    const found = await engine.reconcile(document, connection);
    if (found.kind === 'ok' && found.value) {
      await finishIssued(ctx, invoiceId, found.value, 'caller');
      return 'documents';
    }
    if (found.kind !== 'ok') {
      await giveUpOrRetry(ctx, invoiceId, job, found, 'reconciliation');
      return 'done';
    }
  }

  // 4. send (a declaration stored just now was marked as being sent by the same statement)
  if (!prepared.markedSending) {
    await ctx.db
      .update(invoices)
      .set({ transmission: 'sending', attempts: sql`${invoices.attempts} + 1`, updatedAt: new Date() })
      .where(eq(invoices.id, invoiceId));
  }
  let outcome = await engine.issue(document, connection);
  if (outcome.kind === 'unknown') {
    // the answer was lost: ask right away; if the government has nothing yet, the next attempt asks again
    const found = await engine.reconcile(document, connection);
    if (found.kind === 'ok' && found.value) outcome = { kind: 'ok', value: found.value };
  }
  if (outcome.kind === 'ok') {
    const issued = outcome.value;
    // ended meanwhile (another attempt issued it): its documents are read as that attempt left them
    if (!(await finishIssued(ctx, invoiceId, issued, 'caller'))) return 'documents';
    return {
      invoice: {
        ...invoice,
        ...issuedColumns(issued),
        declarationXml: document.xml,
        declarationId: document.id,
      },
      ...subject.read,
    };
  }
  return recordOutcome(ctx, invoiceId, job, outcome, 'transmission', 'caller');
}

/**
 * What the issue job leaves to its caller. `documents`: the note is issued and its documents are not stored yet,
 * and no documents job was enqueued for them: the caller (the wiring: documents are a later layer) stores them at
 * once, before the job completes, so a crash in between makes the job's next attempt find the note issued and answer
 * `documents` again (`documentsLeftByIssueJob`). The documents job's hop (enqueue, fetch, read, complete) was a
 * large share of an issued note's statements.
 */
export type IssueJobEnd = 'documents' | 'done' | IssuedNote;

/**
 * `documents`, with the note as this attempt issued it (the row it read, numbered, with its declaration and what
 * `finishIssued` wrote), its project's row and the base of its document URLs as read with it: the documents need no
 * read of the row just written. The documents steps write under compare-and-set conditions, so a row changed since
 * (a cancellation) is read again, as after a lost race.
 */
export interface IssuedNote {
  invoice: InvoiceRow;
  projectRow: JobSubject['read']['projectRow'];
  storageBaseUrl: string | null;
}

/**
 * An issued note whose documents are not all stored (none, or the XML only) and have not failed for good: what an
 * issue job that stopped before its documents leaves (`IssueJobEnd`). Storing them again is harmless: each step
 * does only what is missing.
 */
export function documentsLeftByIssueJob(invoice: InvoiceRow): boolean {
  return invoice.status === 'issued' && invoice.documentsStatus !== 'complete' && invoice.documentsStatus !== 'failed';
}

/**
 * Records what the government answered to a submission or a poll; `documents` as in `finishIssued` (`caller`:
 * answers `documents` when the note was issued).
 */
export async function recordOutcome(
  ctx: AppContext,
  invoiceId: string,
  job: JobContext,
  outcome: Outcome<IssuedDocument>,
  stage: string,
  documents: 'job' | 'caller' = 'job',
): Promise<IssueJobEnd> {
  switch (outcome.kind) {
    case 'ok':
      await finishIssued(ctx, invoiceId, outcome.value, documents);
      return documents === 'caller' ? 'documents' : 'done';
    case 'rejected':
      await ctx.db.update(invoices).set({ transmission: 'done' }).where(eq(invoices.id, invoiceId));
      await finishError(ctx, invoiceId, outcome);
      return 'done';
    case 'pending':
      await ctx.db
        .update(invoices)
        .set({ transmission: 'pending', protocol: outcome.protocol, updatedAt: new Date() })
        .where(eq(invoices.id, invoiceId));
      await schedulePoll(ctx, invoiceId, 1, outcome.retryAfterMs);
      return 'done';
    default:
      await giveUpOrRetry(ctx, invoiceId, job, outcome, stage);
      return 'done';
  }
}

/**
 * When the polls of a protocol are asked: quickly at first (most lots are processed in seconds), then every
 * 15 minutes, for 24 hours in all (`POLL_DELAYS_SECONDS` then `POLL_EVERY_SECONDS` up to `POLL_MAX`).
 */
const POLL_DELAYS_SECONDS = [2, 4, 8, 15, 30, 60, 120, 300, 600];
const POLL_EVERY_SECONDS = 900;
export const POLL_MAX = POLL_DELAYS_SECONDS.length + Math.ceil((24 * 3600 - 1139) / POLL_EVERY_SECONDS);

export function pollDelaySeconds(poll: number): number {
  return POLL_DELAYS_SECONDS[poll - 1] ?? POLL_EVERY_SECONDS;
}

export async function schedulePoll(ctx: AppContext, invoiceId: string, poll: number, afterMs?: number): Promise<void> {
  const delayMs = Math.max(afterMs ?? 0, pollDelaySeconds(poll) * 1000);
  await ctx.queue.send('invoice.poll', { invoiceId, poll }, { startAfter: delayMs });
}

export async function takeNumber(ctx: AppContext, { invoice, project }: JobSubject): Promise<InvoiceRow> {
  if (invoice.declarationNumber !== null) {
    if (invoice.status === 'queued') {
      await ctx.db.update(invoices).set({ status: 'processing' }).where(eq(invoices.id, invoice.id));
    }
    return invoice;
  }
  // one statement (it was a transaction of five): lock the row while it has no number, take the project's next
  // number only then, and write it. An invoice another attempt numbered first matches nothing (the lock waits for
  // that attempt to commit, then sees its number) and takes no number; the row is then read as that attempt left it.
  const now = new Date();
  const result = await ctx.db.execute(sql`
    with target as (
      select id from ${invoices}
      where id = ${invoice.id} and declaration_number is null
      for update
    ), next as (
      insert into ${numbering} (project_id, kind, last_number)
      select ${project.id}, 'nfse', 1 from target
      on conflict (project_id, kind) do update set last_number = ${numbering}.last_number + 1
      returning last_number
    )
    update ${invoices} set status = 'processing', serie = ${project.serieNfse},
      declaration_number = next.last_number, updated_at = ${now}
    from next where ${invoices}.id = ${invoice.id}
    returning ${invoices}.declaration_number, ${invoices}.serie`);
  const [numbered] = (result as unknown as { rows: { declaration_number: string | number; serie: string | null }[] })
    .rows;
  if (numbered) {
    return {
      ...invoice,
      status: 'processing',
      serie: numbered.serie,
      declarationNumber: Number(numbered.declaration_number),
      updatedAt: now,
    };
  }
  const [current] = await ctx.db.select().from(invoices).where(eq(invoices.id, invoice.id)).limit(1);
  if (!current) throw new RetryLater('the invoice vanished while it was numbered');
  return current;
}

/**
 * The stored declaration, or a new one built, signed, validated and stored; null when the invoice ended.
 * `markedSending`: the statement that stored a new declaration also marked it as being sent (transmission
 * `sending`, one more attempt), as step 4 would: nothing happens between the two, and a crash before the send
 * only makes the next attempt ask the government first.
 */
async function prepare(
  ctx: AppContext,
  subject: JobSubject,
): Promise<{ document: PreparedDocument; markedSending: boolean } | null> {
  const { invoice, project, engine, connection } = subject;
  if (invoice.declarationXml && invoice.declarationId) {
    return { document: { id: invoice.declarationId, xml: invoice.declarationXml }, markedSending: false };
  }
  const checked = checkInvoiceRequest(invoice.request as InvoiceRequest, project);
  if (!checked.ok) {
    await finishError(ctx, invoice.id, {
      errorCode: checked.code,
      errorMessage: checked.errors.map((e) => `${e.field}: ${e.message}`).join('; '),
      errors: checked.errors.map((e) => ({ Codigo: checked.code, Descricao: e.message, Complemento: e.field })),
    });
    return null;
  }
  const prepared = engine.prepare({
    project,
    invoice: checked.value,
    serie: invoice.serie ?? project.serieNfse,
    number: invoice.declarationNumber!,
    issuedAt: new Date(ctx.now().getTime() - CLOCK_MARGIN_MS),
    certificate: connection.certificate,
  });
  if (prepared.kind !== 'ok') {
    if (prepared.kind === 'rejected') {
      await finishError(ctx, invoice.id, prepared);
      return null;
    }
    throw new RetryLater(prepared.kind === 'pending' ? 'pending while preparing' : prepared.reason);
  }
  // SQL text with parameters: the update builder rebuilt the statement at every call, column by column
  const saved = await ctx.db.execute(sql`
    update ${invoices} set declaration_xml = ${prepared.value.xml}, declaration_id = ${prepared.value.id},
      transmission = 'sending', attempts = attempts + 1, updated_at = ${new Date()}
    where id = ${invoice.id} and declaration_xml is null
    returning id`);
  if ((saved as unknown as { rows: unknown[] }).rows.length > 0)
    return { document: prepared.value, markedSending: true };
  // another worker stored one first: send that one
  const [current] = await ctx.db.select().from(invoices).where(eq(invoices.id, invoice.id)).limit(1);
  return current?.declarationXml && current.declarationId
    ? { document: { id: current.declarationId, xml: current.declarationXml }, markedSending: false }
    : null;
}

function giveUpOrRetry(ctx: AppContext, invoiceId: string, job: JobContext, outcome: Failure, stage: string) {
  return retryOrGiveUp(ctx, job, outcome, { invoiceId, stage }, (reason, attempts) =>
    finishError(ctx, invoiceId, {
      errorCode: 'GOVERNMENT_UNAVAILABLE',
      errorMessage: `The government service did not answer after ${attempts} attempts (${stage}): ${reason}`,
      errors: [],
    }),
  );
}
