import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.ts';
import { prepared } from '../prepared.ts';
import { invoices, organizations } from '../schema.ts';

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

/** The base of an organization's document URLs: its verified white-label domain, or null (the default base). */
export async function storageBaseUrlOf(db: DbOrTx, orgId: string): Promise<string | null> {
  const [row] = await db
    .select({ url: organizations.storageBaseUrlActive })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .limit(1);
  return row?.url ?? null;
}
