import { and, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../client.ts';
import { prepared } from '../prepared.ts';
import { certificates, invoices, organizations, projects } from '../schema.ts';
import type { TableChanges } from '../table-changes.ts';
import { loadProjectRowShared } from './project-profile.ts';

type InvoiceRow = typeof invoices.$inferSelect;
type ProjectRow = typeof projects.$inferSelect;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An invoice of this project, or null (another project's invoice is never returned). */
export async function findProjectInvoice(db: DbOrTx, projectId: string, invoiceId: string) {
  if (!UUID.test(invoiceId)) return null;
  const [row] = await prepared(db, 'project_invoice', (d) =>
    d
      .select()
      .from(invoices)
      .where(and(eq(invoices.id, sql.placeholder('invoiceId')), eq(invoices.projectId, sql.placeholder('projectId'))))
      .limit(1)
      .prepare('project_invoice'),
  ).execute({ invoiceId, projectId });
  return row ?? null;
}

/**
 * The base of an invoice's document URLs, as a column of a statement on `invoices`: its organization's verified
 * white-label domain, or null (the default base).
 */
export const invoiceStorageBaseUrl = sql<
  string | null
>`(select ${organizations.storageBaseUrlActive} from ${organizations} where ${organizations.id} = ${invoices.orgId})`;

/**
 * The columns of an invoice's status (`invoiceStatusView`, spec 2.8): the row without the request, the XML documents
 * and the other large columns, which the status never shows. The status is what clients poll every few seconds, and
 * on the embedded database every column read is copied out of PGlite and parsed on the service's one thread.
 */
const STATUS_COLUMNS = {
  id: invoices.id,
  status: invoices.status,
  referencia: invoices.referencia,
  batchId: invoices.batchId,
  engine: invoices.engine,
  createdAt: invoices.createdAt,
  updatedAt: invoices.updatedAt,
  serie: invoices.serie,
  declarationNumber: invoices.declarationNumber,
  documentsCached: invoices.documentsCached,
  warnings: invoices.warnings,
  documentsStatus: invoices.documentsStatus,
  documentsErrorCode: invoices.documentsErrorCode,
  protocol: invoices.protocol,
  accessKey: invoices.accessKey,
  verificationCode: invoices.verificationCode,
  numeroNfse: invoices.numeroNfse,
  emittedAt: invoices.emittedAt,
  ambiente: invoices.ambiente,
  xmlKey: invoices.xmlKey,
  pdfKey: invoices.pdfKey,
  errorCode: invoices.errorCode,
  errorMessage: invoices.errorMessage,
  errors: invoices.errors,
  cancelledAt: invoices.cancelledAt,
  cancelXmlKey: invoices.cancelXmlKey,
  cancellationStatus: invoices.cancellationStatus,
  cancelRequestedAt: invoices.cancelRequestedAt,
  cancelMotivo: invoices.cancelMotivo,
  cancelErrorCode: invoices.cancelErrorCode,
  cancelErrorMessage: invoices.cancelErrorMessage,
};

/** What an invoice's status shows of its row. */
export type InvoiceStatusRow = Pick<InvoiceRow, keyof typeof STATUS_COLUMNS>;

/**
 * An invoice of this project as its status shows it, with the base of its organization's document URLs (one
 * statement; a full row and a second round trip before), or null (another project's invoice is never returned).
 */
export async function findProjectInvoiceStatus(
  db: DbOrTx,
  projectId: string,
  invoiceId: string,
): Promise<{ row: InvoiceStatusRow; storageBaseUrl: string | null } | null> {
  if (!UUID.test(invoiceId)) return null;
  const [found] = await prepared(db, 'project_invoice_status', (d) =>
    d
      .select({
        ...STATUS_COLUMNS,
        storageBaseUrl: invoiceStorageBaseUrl,
      })
      .from(invoices)
      .where(and(eq(invoices.id, sql.placeholder('invoiceId')), eq(invoices.projectId, sql.placeholder('projectId'))))
      .limit(1)
      .prepare('project_invoice_status'),
  ).execute({ invoiceId, projectId });
  if (!found) return null;
  const { storageBaseUrl, ...row } = found;
  return { row, storageBaseUrl };
}

/** What intake writes of a new invoice; every other column takes its default. */
export interface QueuedInvoice {
  id: string;
  projectId: string;
  orgId: string;
  batchId: string | null;
  batchIndex: number | null;
  engine: string;
  referencia: string | null;
  request: unknown;
  warnings: unknown[];
  ambiente: number;
}

/**
 * Inserts accepted invoices (status `queued`) in one statement. Written as SQL over the columns intake sets: drizzle's
 * insert builder walks every column of the table for every row (about 85 µs of the API's CPU per invoice, against 5
 * here), and intake runs it for every request. The rows travel as one array per column (`unnest`), so the text is the
 * same for any number of rows: PostgreSQL parses it once per connection, and on the embedded database it is one named
 * statement (db/pglite-statements.ts) instead of one text per group size.
 */
export async function insertQueuedInvoices(tx: DbOrTx, rows: QueuedInvoice[]): Promise<void> {
  for (let start = 0; start < rows.length; start += INSERT_ROWS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + INSERT_ROWS_PER_STATEMENT);
    const column = <T>(value: (row: QueuedInvoice) => T) => sql.param(chunk.map(value));
    await tx.execute(sql`insert into ${invoices} (id, project_id, org_id, batch_id, batch_index, status, engine,
        referencia, request, ambiente, warnings)
      select id, project_id, org_id, batch_id, batch_index, 'queued', engine, referencia, request, ambiente, warnings
      from unnest(${column((r) => r.id)}::uuid[], ${column((r) => r.projectId)}::uuid[],
        ${column((r) => r.orgId)}::uuid[], ${column((r) => r.batchId)}::uuid[], ${column((r) => r.batchIndex)}::int[],
        ${column((r) => r.engine)}::text[], ${column((r) => r.referencia)}::text[],
        ${column((r) => JSON.stringify(r.request))}::jsonb[], ${column((r) => r.ambiente)}::int[],
        ${column((r) => JSON.stringify(r.warnings))}::jsonb[])
        as r(id, project_id, org_id, batch_id, batch_index, engine, referencia, request, ambiente, warnings)`);
  }
}

/** Rows per statement: each column's array is one parameter, and this bounds the statement's size. */
const INSERT_ROWS_PER_STATEMENT = 5000;

/** An invoice by its id, or null (the jobs' read of their subject). */
export async function loadInvoiceRow(db: DbOrTx, invoiceId: string) {
  const [row] = await prepared(db, 'invoice_by_id', (d) =>
    d
      .select()
      .from(invoices)
      .where(eq(invoices.id, sql.placeholder('invoiceId')))
      .limit(1)
      .prepare('invoice_by_id'),
  ).execute({ invoiceId });
  return row ?? null;
}

/**
 * An invoice with the base of its document URLs (`invoiceStorageBaseUrl`), its project's row and, on PostgreSQL, the
 * id and expiry of the project's active certificate (null when there is none): what the invoice jobs read of their
 * subject (the documents steps name their URLs in their events).
 * - PostgreSQL: one statement (three round trips before).
 * - The embedded database: the invoice alone; its project and its certificate row are in memory until their tables
 *   change (`changes`, db/table-changes.ts), and a join would only give its single thread more to plan and read.
 *   `certificate` is left undefined: `CertificateStore.forProject` reads it from memory.
 */
export async function loadInvoiceWithProject(
  db: Db,
  changes: TableChanges | null,
  invoiceId: string,
): Promise<{
  invoice: InvoiceRow;
  storageBaseUrl: string | null;
  project: ProjectRow | null;
  certificate?: { id: string; validUntil: Date } | null;
} | null> {
  if (changes) {
    const [found] = await prepared(db, 'invoice_with_base', (d) =>
      d
        .select({ invoice: invoices, storageBaseUrl: invoiceStorageBaseUrl })
        .from(invoices)
        .where(eq(invoices.id, sql.placeholder('invoiceId')))
        .limit(1)
        .prepare('invoice_with_base'),
    ).execute({ invoiceId });
    return found ? { ...found, project: await loadProjectRowShared(db, changes, found.invoice.projectId) } : null;
  }
  const [row] = await prepared(db, 'invoice_with_project', (d) =>
    d
      .select({
        invoice: invoices,
        storageBaseUrl: invoiceStorageBaseUrl,
        project: projects,
        certificate: { id: certificates.id, validUntil: certificates.validUntil },
      })
      .from(invoices)
      .leftJoin(projects, eq(projects.id, invoices.projectId))
      .leftJoin(certificates, and(eq(certificates.projectId, invoices.projectId), eq(certificates.active, true)))
      .where(eq(invoices.id, sql.placeholder('invoiceId')))
      .limit(1)
      .prepare('invoice_with_project'),
  ).execute({ invoiceId });
  return row ?? null;
}

/** The base of an organization's document URLs: its verified white-label domain, or null (the default base). */
export async function storageBaseUrlOf(db: DbOrTx, orgId: string): Promise<string | null> {
  const [row] = await db
    .select({ url: organizations.storageBaseUrlActive })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .limit(1);
  return row?.url ?? null;
}
