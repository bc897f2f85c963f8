import { and, desc, eq, gte, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.ts';
import { invoices } from '../schema.ts';

/** The invoices of a project, newest first, filtered by status, creation date and taker (name or tax id). */
export async function listProjectInvoices(
  db: DbOrTx,
  filter: {
    orgId: string;
    projectId: string;
    status?: string;
    /** created at or after */
    from?: Date;
    /** created before */
    to?: Date;
    /** part of the taker's name, or its CNPJ/CPF digits */
    taker?: string;
    limit: number;
  },
) {
  const conditions = [eq(invoices.orgId, filter.orgId), eq(invoices.projectId, filter.projectId)];
  if (filter.status) conditions.push(eq(invoices.status, filter.status));
  if (filter.from) conditions.push(gte(invoices.createdAt, filter.from));
  if (filter.to) conditions.push(lt(invoices.createdAt, filter.to));
  if (filter.taker) {
    const digits = filter.taker.replace(/\D/g, '');
    const name = `%${filter.taker.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(
      digits.length >= 3
        ? sql`(coalesce(${invoices.request}->'tomador'->>'cnpj', ${invoices.request}->'tomador'->>'cpf', '') like ${`%${digits}%`} or ${invoices.request}->'tomador'->>'nome' ilike ${name})`
        : sql`${invoices.request}->'tomador'->>'nome' ilike ${name}`,
    );
  }
  return db
    .select({
      id: invoices.id,
      status: invoices.status,
      referencia: invoices.referencia,
      batchId: invoices.batchId,
      numeroNfse: invoices.numeroNfse,
      engine: invoices.engine,
      createdAt: invoices.createdAt,
      emittedAt: invoices.emittedAt,
      takerName: sql<string | null>`${invoices.request}->'tomador'->>'nome'`,
      takerDocument: sql<
        string | null
      >`coalesce(${invoices.request}->'tomador'->>'cnpj', ${invoices.request}->'tomador'->>'cpf')`,
      total: sql<number | null>`(${invoices.request}->'valores'->>'total')::numeric::float8`,
      errorCode: invoices.errorCode,
    })
    .from(invoices)
    .where(and(...conditions))
    .orderBy(desc(invoices.createdAt), desc(invoices.id))
    .limit(filter.limit);
}

/** The project's latest note with its NFS-e XML (issued or cancelled): what a DANFSe preview renders. */
export async function latestNoteWithXml(db: DbOrTx, orgId: string, projectId: string) {
  const [row] = await db
    .select({ id: invoices.id, nfseXml: invoices.nfseXml })
    .from(invoices)
    .where(
      and(
        eq(invoices.orgId, orgId),
        eq(invoices.projectId, projectId),
        sql`${invoices.nfseXml} is not null`,
        sql`${invoices.status} in ('issued', 'cancelled')`,
      ),
    )
    .orderBy(desc(invoices.createdAt), desc(invoices.id))
    .limit(1);
  return row?.nfseXml ? { id: row.id, nfseXml: row.nfseXml } : null;
}
