import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.ts';
import { apiKeys, organizations, projects } from '../schema.ts';

export type ProjectRow = typeof projects.$inferSelect;
export type NewProjectRow = typeof projects.$inferInsert;
export type ProjectChanges = Partial<Omit<NewProjectRow, 'id' | 'orgId' | 'cnpj' | 'createdAt'>>;

/** A project of the organization (active only unless `includeInactive`); null for any other id. */
export async function findOrgProject(
  db: DbOrTx,
  orgId: string,
  id: string,
  options: { includeInactive?: boolean; forUpdate?: boolean } = {},
): Promise<ProjectRow | null> {
  const where = options.includeInactive
    ? and(eq(projects.id, id), eq(projects.orgId, orgId))
    : and(eq(projects.id, id), eq(projects.orgId, orgId), eq(projects.active, true));
  const query = db.select().from(projects).where(where).limit(1);
  const [row] = options.forUpdate ? await query.for('update') : await query;
  return row ?? null;
}

/** Serializes the plan checks of concurrent project creations of one organization. */
export async function lockOrganization(db: DbOrTx, orgId: string): Promise<void> {
  await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, orgId)).for('update');
}

/** Projects counted against the plan's project limit: the active ones. */
export async function countActiveProjects(db: DbOrTx, orgId: string): Promise<number> {
  const [row] = await db
    .select({ total: count() })
    .from(projects)
    .where(and(eq(projects.orgId, orgId), eq(projects.active, true)));
  return row?.total ?? 0;
}

export async function findActiveProjectByCnpj(db: DbOrTx, orgId: string, cnpj: string) {
  const [row] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.orgId, orgId), eq(projects.cnpj, cnpj), eq(projects.active, true)))
    .limit(1);
  return row ?? null;
}

export async function insertProject(db: DbOrTx, values: NewProjectRow): Promise<ProjectRow> {
  const [row] = await db.insert(projects).values(values).returning();
  return row!;
}

export interface ProjectListItem {
  id: string;
  name: string;
  cnpj: string;
  codigoMunicipio: string | null;
  active: boolean;
  hasCertificate: boolean;
  hasApiKey: boolean;
  createdAt: Date;
}

/** One page of the organization's projects, newest first; inactive ones only with `includeInactive`. */
export async function listOrgProjects(
  db: DbOrTx,
  orgId: string,
  options: { page: number; limit: number; includeInactive: boolean },
): Promise<{ items: ProjectListItem[]; total: number }> {
  const where = options.includeInactive
    ? eq(projects.orgId, orgId)
    : and(eq(projects.orgId, orgId), eq(projects.active, true));
  const rows = await db
    .select({
      id: projects.id,
      name: projects.name,
      cnpj: projects.cnpj,
      codigoMunicipio: projects.codigoMunicipio,
      active: projects.active,
      createdAt: projects.createdAt,
      // (a column interpolated in a select field renders unqualified, hence the literal "projects"."id")
      hasCertificate: sql<boolean>`exists (select 1 from certificates c where c.project_id = "projects"."id" and c.active)`,
      hasApiKey: sql<boolean>`exists (select 1 from api_keys k where k.project_id = "projects"."id" and k.active)`,
    })
    .from(projects)
    .where(where)
    .orderBy(desc(projects.createdAt), desc(projects.id))
    .limit(options.limit)
    .offset((options.page - 1) * options.limit);
  const [totalRow] = await db.select({ total: count() }).from(projects).where(where);
  return {
    items: rows.map((r) => ({ ...r, hasCertificate: Boolean(r.hasCertificate), hasApiKey: Boolean(r.hasApiKey) })),
    total: totalRow?.total ?? 0,
  };
}

/** Applies changes to an active project of the organization; null when there is none. */
export async function updateOrgProject(
  db: DbOrTx,
  orgId: string,
  id: string,
  changes: ProjectChanges,
): Promise<ProjectRow | null> {
  const [row] = await db
    .update(projects)
    .set({ ...changes, updatedAt: new Date() })
    .where(and(eq(projects.id, id), eq(projects.orgId, orgId), eq(projects.active, true)))
    .returning();
  return row ?? null;
}

/**
 * Deletes a project the way the spec defines it: inactive (irreversibly through the API), every API key
 * revoked in the same transaction; certificate, numbering, invoices and files are kept. The partial unique
 * index on (org, cnpj) only covers active projects, so the CNPJ can be registered again.
 * Returns false when the project is not an active project of the organization.
 */
export async function deactivateOrgProject(db: DbOrTx, orgId: string, id: string, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const rows = await tx
      .update(projects)
      .set({ active: false, deletedAt: now, updatedAt: now })
      .where(and(eq(projects.id, id), eq(projects.orgId, orgId), eq(projects.active, true)))
      .returning({ id: projects.id });
    if (rows.length === 0) return false;
    await tx
      .update(apiKeys)
      .set({ active: false, revokedAt: now })
      .where(and(eq(apiKeys.projectId, id), eq(apiKeys.active, true)));
    return true;
  });
}
