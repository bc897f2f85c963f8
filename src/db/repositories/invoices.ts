import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../client.ts';
import { invoices, organizations } from '../schema.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An invoice of this project, or null (another project's invoice is never returned). */
export async function findProjectInvoice(db: DbOrTx, projectId: string, invoiceId: string) {
  if (!UUID.test(invoiceId)) return null;
  const [row] = await db
    .select()
    .from(invoices)
    .where(and(eq(invoices.id, invoiceId), eq(invoices.projectId, projectId)))
    .limit(1);
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
