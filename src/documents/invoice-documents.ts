import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { AppContext } from '../context.ts';
import { type loadProjectRow, loadProjectRowShared } from '../db/repositories/project-profile.ts';
import { invoiceStorageBaseUrl, loadInvoiceRow, loadInvoiceWithProject } from '../db/repositories/invoices.ts';
import { invoices } from '../db/schema.ts';
import { type EventData, insertEventFrom, recordEvent, subscribedExists, wakeDeliveries } from '../events/outbox.ts';
import { documentUrl } from '../invoices/views.ts';
import type { JobPayloads } from '../jobs/catalogue.ts';
import type { JobContext } from '../jobs/queue.ts';
import { newDocumentKey, PDF_CONTENT_TYPE, XML_CONTENT_TYPE } from '../storage/types.ts';
import type { DanfseTemplate, RenderDanfseResult } from './danfse/render.ts';
import { pdfSourceOf } from './pdf-source.ts';

type InvoiceRow = typeof invoices.$inferSelect;
type ProjectRow = NonNullable<Awaited<ReturnType<typeof loadProjectRow>>>;

const TEMPLATES: readonly DanfseTemplate[] = ['padrao', 'retrato_logo', 'paisagem_logo'];
/** File name of the DANFSe of a cancelled note: its key says which version a stored PDF is. */
const CANCELLED_PDF_SUFFIX = '-danfse-cancelada.pdf';

const isIssued = (row: InvoiceRow) => row.status === 'issued' || row.status === 'cancelled';

/** Whether the stored PDF is the right one for the invoice's state (the cancelled note needs the watermark). */
export function hasCurrentPdf(row: InvoiceRow): boolean {
  if (!row.pdfKey) return false;
  return row.status !== 'cancelled' || row.pdfKey.endsWith(CANCELLED_PDF_SUFFIX);
}

/**
 * The DANFSe of an issued (or cancelled: watermarked) invoice, rendered from its NFS-e XML with the project's
 * template and logo. A refusal of the renderer (malformed XML, missing data) is a value.
 */
export async function renderInvoicePdf(
  ctx: AppContext,
  row: InvoiceRow,
  /** the invoice's project row when the caller has it already (the documents job) */
  loaded?: ProjectRow | null,
): Promise<RenderDanfseResult> {
  if (!row.nfseXml) return { ok: false, code: 'DANFSE_MISSING_DATA', message: 'The invoice has no NFS-e XML' };
  const project =
    loaded === undefined ? await loadProjectRowShared(ctx.db, ctx.database.changes, row.projectId) : loaded;
  const template = TEMPLATES.find((t) => t === project?.danfeTemplate) ?? 'padrao';
  let logo: { data: Buffer; mimeType: string } | null = null;
  if (template !== 'padrao' && project?.logoKey) {
    const file = await ctx.storage.get(project.logoKey);
    if (file) logo = { data: file.body, mimeType: project.logoMimeType ?? file.contentType };
  }
  // pdfkit (about 150 ms to load) is loaded with the first PDF, not at start.
  const { renderDanfse } = await import('./danfse/render.ts');
  return renderDanfse({
    nfseXml: row.nfseXml,
    template,
    logo,
    cancelled: row.status === 'cancelled' ? { at: row.cancelledAt ?? new Date() } : null,
  });
}

async function load(ctx: AppContext, invoiceId: string): Promise<InvoiceRow | null> {
  return loadInvoiceRow(ctx.db, invoiceId);
}

/**
 * What a step's write reads back: the columns another job may change while this one runs (a cancellation, another
 * documents job) and those its event names, plus the base of the organization's document URLs (a round trip of its
 * own before). The rest of the row does not change once a note is issued: the step keeps it from the row it read.
 */
const WRITTEN_COLUMNS = {
  id: invoices.id,
  projectId: invoices.projectId,
  orgId: invoices.orgId,
  status: invoices.status,
  cancelledAt: invoices.cancelledAt,
  cancelXml: invoices.cancelXml,
  cancelXmlKey: invoices.cancelXmlKey,
  xmlKey: invoices.xmlKey,
  pdfKey: invoices.pdfKey,
  documentsStatus: invoices.documentsStatus,
  documentsCached: invoices.documentsCached,
  documentsErrorCode: invoices.documentsErrorCode,
  updatedAt: invoices.updatedAt,
};
type Written = Pick<InvoiceRow, keyof typeof WRITTEN_COLUMNS> & { storageBaseUrl: string | null };

/**
 * The steps' writes are SQL text with their values as parameters, and `RETURNING` this list, written once: Drizzle's
 * update builder rebuilt each statement at every call, column by column (inside a transaction nothing is prepared),
 * and that was the largest share of Drizzle in an issued note's CPU (about 130 µs per write, against 5).
 */
const RETURNING_WRITTEN = sql.raw(
  new PgDialect().sqlToQuery(
    sql`${sql.join(
      Object.values(WRITTEN_COLUMNS).map((column) => sql.identifier(column.name)),
      sql`, `,
    )}, ${invoiceStorageBaseUrl} as "storage_base_url"`,
  ).sql,
);

/** A returned row as the step reads it: each column through its schema's mapping (dates, booleans), as Drizzle would. */
function writtenOf(result: unknown): Written | null {
  const [raw] = (result as { rows: Record<string, unknown>[] }).rows;
  if (!raw) return null;
  const row: Record<string, unknown> = { storageBaseUrl: raw.storage_base_url ?? null };
  for (const [field, column] of Object.entries(WRITTEN_COLUMNS)) {
    const value = raw[column.name];
    row[field] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as Written;
}

/** The row after a step's write: what the write read back (`WRITTEN`) over what the step read. */
function afterWrite(row: InvoiceRow, written: Partial<InvoiceRow>): InvoiceRow {
  return { ...row, ...written };
}

/**
 * What a step did: nothing left to do; changed the invoice (with the row as its write left it, when the write
 * returned it, so the next step needs no reload); or lost a race with another job (the row is read again).
 */
type Step =
  | { kind: 'done' }
  | { kind: 'changed'; row?: InvoiceRow; storageBaseUrl?: string | null }
  | { kind: 'lost-race' };

/**
 * What a step knows of the note's row beyond `InvoiceRow`: the base of its document URLs as last read (undefined when
 * not read), which its single-statement write checks is still the base; and whether the renderer refused the note's
 * PDF in this job (it is not tried again).
 */
interface Known {
  storageBaseUrl: string | null | undefined;
  pdfRefused?: boolean;
}

const DONE: Step = { kind: 'done' };
const LOST_RACE: Step = { kind: 'lost-race' };

/**
 * The `invoice.documents` job (kind `emission` after issuing, `cancellation` after a cancellation). It brings the
 * stored documents in line with the invoice, one recorded step at a time, so a retried or concurrent job only
 * does what is missing:
 *   1. the NFS-e XML (`<chave>-nfse.xml`) → `xmlKey`, documentsStatus `partial`, and `nfse.documents_ready`
 *      partial (pdfUrl null) in the same write; where the PDF is rendered here, it is rendered and stored first and
 *      written with the XML: both keys, documentsStatus `complete` and one `nfse.documents_ready` complete (spec 6:
 *      up to two). A PDF the renderer refuses, or whose rendering or storing throws, leaves the XML written alone
 *      (partial), as before: the throw is then the job's, retried for the PDF (step 3);
 *   2. for a cancelled note whose cancellation XML was not stored with the cancellation (invoices cancelled
 *      before `finishCancelled` stored it), the cancellation event XML → `cancelXmlKey`;
 *   3. the DANFSe PDF → `pdfKey`, documentsCached, documentsStatus `complete`, and — for the first PDF only —
 *      `nfse.documents_ready` complete; for a cancelled note the PDF is rendered again with the CANCELADA
 *      watermark under a new key, without a further event: `nfse.cancelled` carries `cancelXmlUrl` and the status
 *      shows the new `pdfUrl`.
 * Each event is written only on its transition in the database (a compare-and-set on the key column), so an
 * invoice gets at most two `nfse.documents_ready` (spec 6 and 8), cancelled or not. A renderer refusal is
 * permanent (logged, no further event); a thrown failure (storage, renderer crash) is retried by the job policy,
 * and once the retries run out no further event is sent (spec 6).
 */
export async function runDocumentsJob(
  ctx: AppContext,
  data: JobPayloads['invoice.documents'],
  _job: JobContext,
  /** the note as the issue job that just issued it holds it (`IssuedNote`): not read again */
  issued?: { invoice: InvoiceRow; projectRow: ProjectRow; storageBaseUrl: string | null },
): Promise<void> {
  // the project is read once, when a step first needs it
  let project: Promise<ProjectRow | null> | null = null;
  const projectOf = (projectId: string) => (project ??= loadProjectRowShared(ctx.db, ctx.database.changes, projectId));
  // the first read brings the project along (one statement)
  const first = issued
    ? { invoice: issued.invoice, project: issued.projectRow, storageBaseUrl: issued.storageBaseUrl }
    : await loadInvoiceWithProject(ctx.db, ctx.database.changes, data.invoiceId);
  if (first?.project) project = Promise.resolve(first.project);
  let known: InvoiceRow | null = first?.invoice ?? null;
  const base: Known = { storageBaseUrl: first?.storageBaseUrl };
  if (!known) return;
  for (let pass = 0; pass < 6; pass++) {
    const row = known ?? (await load(ctx, data.invoiceId));
    if (!row || !isIssued(row) || !row.nfseXml) return;
    const step = await nextStep(ctx, row, base, projectOf);
    if (step.kind === 'done') return;
    known = step.kind === 'changed' ? (step.row ?? null) : null;
    if (step.kind === 'changed' && step.storageBaseUrl !== undefined) base.storageBaseUrl = step.storageBaseUrl;
  }
  throw new Error(`documents of invoice ${data.invoiceId} kept changing under the job; retrying`);
}

async function nextStep(
  ctx: AppContext,
  row: InvoiceRow,
  known: Known,
  projectOf: (projectId: string) => Promise<ProjectRow | null>,
): Promise<Step> {
  if (!row.xmlKey) {
    // the first PDF goes with the XML (one write, one event) when it is ours to render
    const project = row.pdfKey === null && !known.pdfRefused ? await projectOf(row.projectId) : undefined;
    return storeNfseXml(ctx, row, known, project !== undefined && pdfIsOurs(ctx, row, project) ? project : undefined);
  }
  if (row.status === 'cancelled' && row.cancelXml && !row.cancelXmlKey) return storeCancelXml(ctx, row);
  if (!hasCurrentPdf(row) && !known.pdfRefused) {
    const project = await projectOf(row.projectId);
    if (pdfIsOurs(ctx, row, project)) return storePdf(ctx, row, known, project);
  }
  return DONE;
}

/** The PDF is ours to store only where it is rendered here (spec 4.4: portal engines link or proxy it). */
function pdfIsOurs(ctx: AppContext, row: InvoiceRow, project: ProjectRow | null): boolean {
  return !hasCurrentPdf(row) && pdfSourceOf(ctx.engines.get(row.engine), row, project).kind === 'local';
}

/** The readable part of a document's name: the national access key, else the municipal number, else the id. */
function documentName(row: InvoiceRow): string {
  return row.accessKey ?? (row.numeroNfse ? `nfse-${row.numeroNfse}` : row.id);
}

/**
 * Step 1: the NFS-e XML, with the first PDF when `pdfProject` is given (the project to render it for): each stored,
 * then one write of both. When the PDF cannot be had (refused: none; thrown: the error is rethrown once the XML is
 * written), the XML is written alone.
 */
async function storeNfseXml(
  ctx: AppContext,
  row: InvoiceRow,
  known: Known,
  pdfProject: ProjectRow | null | undefined,
): Promise<Step> {
  const key = newDocumentKey(row.projectId, `${documentName(row)}-nfse.xml`);
  await ctx.storage.put(key, Buffer.from(row.nfseXml!, 'utf8'), XML_CONTENT_TYPE);
  const xmlAlone = {
    keys: [key],
    written: { xmlKey: key },
    set: sql`xml_key = ${key}, documents_status = coalesce(nullif(documents_status, 'failed'), 'partial')`,
    where: sql`xml_key is null`,
    event: true,
  };
  if (pdfProject === undefined) return writeStep(ctx, row, known, xmlAlone);
  let pdfKey: string | null;
  try {
    pdfKey = await renderAndStorePdf(ctx, row, known, pdfProject);
  } catch (error) {
    await writeStep(ctx, row, known, xmlAlone);
    throw error;
  }
  if (pdfKey === null) return writeStep(ctx, row, known, xmlAlone);
  return writeStep(ctx, row, known, {
    keys: [key, pdfKey],
    written: { xmlKey: key, pdfKey },
    set: sql`xml_key = ${key}, pdf_key = ${pdfKey}, documents_cached = true, documents_status = 'complete'`,
    where: sql`xml_key is null and status = ${row.status} and pdf_key is null`,
    event: true,
  });
}

/** `nfse.documents_ready` of a note whose documents are as `after` holds them (partial while it has no PDF). */
function documentsReady(
  ctx: AppContext,
  after: Pick<InvoiceRow, 'id' | 'xmlKey' | 'pdfKey' | 'cancelXmlKey'>,
  base: string | null,
): EventData['nfse.documents_ready'] {
  return {
    invoiceId: after.id,
    xmlUrl: documentUrl(ctx, after.xmlKey, base),
    pdfUrl: documentUrl(ctx, after.pdfKey, base),
    cancelXmlUrl: documentUrl(ctx, after.cancelXmlKey, base),
    documentStatus: after.pdfKey ? 'complete' : 'partial',
    cachedAt: new Date().toISOString(),
  };
}

/**
 * A step's write of the documents it stored under `keys`: `set` (with `written`, the same columns as the row sees
 * them) where `where` still holds, and, with `event`, its `nfse.documents_ready` (spec 6: at most two). In one
 * statement where it can be (`writeWithEventAlone`), in a transaction otherwise; the stored documents are deleted when
 * another job stored them first.
 */
async function writeStep(
  ctx: AppContext,
  row: InvoiceRow,
  known: Known,
  step: { keys: string[]; written: Partial<InvoiceRow>; set: SQL; where: SQL; event: boolean },
): Promise<Step> {
  const alone = step.event ? await writeWithEventAlone(ctx, row, known, step) : 'transaction';
  const won =
    alone !== 'transaction'
      ? alone
      : await ctx.db.transaction(async (tx) => {
          const updated = writtenOf(
            await tx.execute(sql`
              update ${invoices} set ${step.set}, documents_error_code = null, updated_at = ${new Date()}
              where id = ${row.id} and ${step.where}
              returning ${RETURNING_WRITTEN}`),
          );
          if (!updated) return 'lost';
          if (step.event) {
            const data = documentsReady(ctx, updated, updated.storageBaseUrl);
            await recordEvent(
              tx,
              { projectId: updated.projectId, type: 'nfse.documents_ready', invoiceId: updated.id, data },
              ctx.now(),
            );
          }
          return updated;
        });
  wakeDeliveries();
  if (won === 'lost') {
    for (const key of step.keys) await ctx.storage.delete(key).catch(() => undefined);
    return LOST_RACE;
  }
  const { storageBaseUrl, ...written } = won;
  return { kind: 'changed', row: afterWrite(row, written), storageBaseUrl };
}

/** The base of an invoice's document URLs, as SQL text over `invoices` written once (it is in every step's statement). */
const BASE_OF_INVOICE = sql.raw(new PgDialect().sqlToQuery(invoiceStorageBaseUrl).sql);

/**
 * A step's write and its `nfse.documents_ready` in one statement, with no transaction around them (its BEGIN, the
 * event's insert and its COMMIT were three of the four round trips of a step, six of an issued note's). The event's
 * data names the document URLs, computed here from what the step read: the statement writes only if that is still so
 * (the URLs' base, the other document keys), and only where nothing else follows from the event: no active endpoint
 * of the project is subscribed to it (their deliveries are written with the event, by `recordEvent`). Answers the row
 * as written; `lost` when the step's own condition no longer holds (another job stored it); `transaction` when the
 * base is unknown or something above does not hold (nothing was written): the step's transaction then does it all.
 */
async function writeWithEventAlone(
  ctx: AppContext,
  row: InvoiceRow,
  known: Known,
  step: { written: Partial<InvoiceRow>; set: SQL; where: SQL },
): Promise<Written | 'lost' | 'transaction'> {
  const base = known.storageBaseUrl;
  if (base === undefined) return 'transaction';
  const result = await ctx.db.execute(sql`
    with target as (
      select ${BASE_OF_INVOICE} is not distinct from ${base}::text
        and xml_key is not distinct from ${row.xmlKey}::text and pdf_key is not distinct from ${row.pdfKey}::text
        and cancel_xml_key is not distinct from ${row.cancelXmlKey}::text
        and not ${subscribedExists(sql`${invoices}.project_id`, 'nfse.documents_ready')} as alone
      from ${invoices} where id = ${row.id}
    ), changed as (
      update ${invoices} set ${step.set}, documents_error_code = null, updated_at = ${new Date()}
      where id = ${row.id} and ${step.where} and (select alone from target)
      returning ${RETURNING_WRITTEN}
    ), event as (${insertEventFrom(sql`changed`, {
      type: 'nfse.documents_ready',
      projectId: sql`changed.project_id`,
      invoiceId: sql`changed.id`,
      data: sql`${JSON.stringify(documentsReady(ctx, { ...row, ...step.written }, base))}::jsonb`,
    })})
    select (select alone from target) as "alone", changed.* from (select 1) as one left join changed on true`);
  const raw = (result as unknown as { rows: { alone: boolean | null; id: string | null }[] }).rows[0];
  if (raw?.id) return writtenOf(result)!;
  return raw?.alone ? 'lost' : 'transaction';
}

async function storeCancelXml(ctx: AppContext, row: InvoiceRow): Promise<Step> {
  const key = newDocumentKey(row.projectId, `${documentName(row)}-cancelamento.xml`);
  await ctx.storage.put(key, Buffer.from(row.cancelXml!, 'utf8'), XML_CONTENT_TYPE);
  const [updated] = await ctx.db
    .update(invoices)
    .set({ cancelXmlKey: key, updatedAt: new Date() })
    .where(and(eq(invoices.id, row.id), isNull(invoices.cancelXmlKey)))
    .returning({ id: invoices.id });
  if (!updated) await ctx.storage.delete(key).catch(() => undefined);
  return updated ? { kind: 'changed' } : LOST_RACE;
}

/** The note's DANFSe rendered and stored: its key, or null when the renderer refuses it (logged, `pdfRefused`). */
async function renderAndStorePdf(
  ctx: AppContext,
  row: InvoiceRow,
  known: Known,
  project: ProjectRow | null,
): Promise<string | null> {
  const rendered = await renderInvoicePdf(ctx, row, project);
  if (!rendered.ok) {
    // permanent: the same XML will never render; the documents stay partial and no further event is sent
    ctx.logger.warn(
      { invoiceId: row.id, code: rendered.code, message: rendered.message },
      'DANFSe cannot be rendered for this invoice',
    );
    known.pdfRefused = true;
    return null;
  }
  const cancelled = row.status === 'cancelled';
  const key = newDocumentKey(row.projectId, `${documentName(row)}${cancelled ? CANCELLED_PDF_SUFFIX : '-danfse.pdf'}`);
  await ctx.storage.put(key, rendered.pdf, PDF_CONTENT_TYPE);
  return key;
}

/** Step 3: the DANFSe PDF, first or replaced (the watermarked one of a cancelled note). */
async function storePdf(ctx: AppContext, row: InvoiceRow, known: Known, project: ProjectRow | null): Promise<Step> {
  const key = await renderAndStorePdf(ctx, row, known, project);
  if (key === null) return DONE;
  const previous = row.pdfKey;
  return writeStep(ctx, row, known, {
    keys: [key],
    written: { pdfKey: key },
    set: sql`pdf_key = ${key}, documents_cached = true, documents_status = 'complete'`,
    // "is not distinct from": the PDF it replaces, or none (null)
    where: sql`status = ${row.status} and pdf_key is not distinct from ${previous}::text`,
    // a replaced PDF (the watermarked one of a cancelled note) is not a new documents_ready: at most two (spec 6)
    event: previous === null,
  });
}

/**
 * The documents job ran out of attempts (the catalogue's on-exhausted step): the invoice stays issued, its
 * documents state becomes `failed` with the code, visible in the status (GET /xml and /pdf still answer, rendered
 * on the fly). No event: spec 6 sends no further documents_ready once the retries run out. A later documents job
 * (e.g. after a cancellation) that succeeds moves it on again.
 */
export async function markDocumentsFailed(ctx: AppContext, invoiceId: string, errorCode: string): Promise<void> {
  const row = await load(ctx, invoiceId);
  if (!row || !isIssued(row)) return;
  const upToDate =
    row.xmlKey && (row.status !== 'cancelled' || !row.cancelXml || row.cancelXmlKey) && hasCurrentPdf(row);
  if (upToDate) return; // a concurrent job finished them
  await ctx.db
    .update(invoices)
    .set({ documentsStatus: 'failed', documentsErrorCode: errorCode, updatedAt: new Date() })
    .where(and(eq(invoices.id, invoiceId), eq(invoices.updatedAt, row.updatedAt)));
}
