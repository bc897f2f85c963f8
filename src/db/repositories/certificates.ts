import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../client.ts';
import { certificates, projects } from '../schema.ts';

export type CertificateRow = typeof certificates.$inferSelect;
export type NewCertificateRow = Omit<typeof certificates.$inferInsert, 'id' | 'active' | 'createdAt'>;

/**
 * Atomically replaces the project's active certificate: the project row is locked (so concurrent uploads
 * queue up), the previous certificate is deactivated (kept for the record) and the new one inserted.
 */
export async function replaceActiveCertificate(db: DbOrTx, values: NewCertificateRow): Promise<CertificateRow> {
  return db.transaction(async (tx) => {
    await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, values.projectId)).for('update');
    await tx
      .update(certificates)
      .set({ active: false })
      .where(and(eq(certificates.projectId, values.projectId), eq(certificates.active, true)));
    const [row] = await tx
      .insert(certificates)
      .values({ ...values, active: true })
      .returning();
    return row!;
  });
}

export async function findActiveCertificate(db: DbOrTx, projectId: string): Promise<CertificateRow | null> {
  const [row] = await db
    .select()
    .from(certificates)
    .where(and(eq(certificates.projectId, projectId), eq(certificates.active, true)))
    .limit(1);
  return row ?? null;
}
