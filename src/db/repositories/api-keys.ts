import { and, count, desc, eq } from 'drizzle-orm';
import { hashKey, keyPrefix, newProjectKey } from '../../access/keys.ts';
import type { Db, DbOrTx } from '../client.ts';
import { apiKeys, organizations, plans, projects } from '../schema.ts';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/**
 * The ceiling of a key's rateLimitPerMinute in an organization: the operator's value for it when set, else the
 * plan's ceiling, both capped by the service-wide setting (NFSE_MAX_KEY_RATE_LIMIT) unless the operator raised it.
 */
export async function keyRateCeiling(
  db: DbOrTx,
  orgId: string,
  serviceMax: number,
): Promise<{ ceiling: number; override: number | null; planCeiling: number | null }> {
  const [row] = await db
    .select({ override: organizations.keyRateLimitCeiling, plan: plans.keyRateLimitCeiling })
    .from(organizations)
    .innerJoin(plans, eq(plans.slug, organizations.planSlug))
    .where(eq(organizations.id, orgId))
    .limit(1);
  const override = row?.override ?? null;
  const planCeiling = row?.plan ?? null;
  const ceiling = override ?? Math.min(planCeiling ?? serviceMax, serviceMax);
  return { ceiling, override, planCeiling };
}

/**
 * Creates a project key; only its SHA-256 hash and a short prefix are stored, the key is returned once. At most
 * `maxActive` active keys per project: the project row is locked so concurrent creations count one by one.
 */
export async function createProjectApiKey(
  db: Db,
  input: { projectId: string; orgId: string; name: string; scopes: string[]; rateLimitPerMinute: number },
  maxActive: number,
): Promise<{ ok: true; row: ApiKeyRow; key: string } | { ok: false; reason: 'limit' }> {
  return db.transaction(async (tx) => {
    await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, input.projectId)).for('update');
    const [active] = await tx
      .select({ n: count() })
      .from(apiKeys)
      .where(and(eq(apiKeys.projectId, input.projectId), eq(apiKeys.active, true)));
    if ((active?.n ?? 0) >= maxActive) return { ok: false as const, reason: 'limit' as const };
    const key = newProjectKey();
    const [row] = await tx
      .insert(apiKeys)
      .values({ ...input, keyHash: hashKey(key), prefix: keyPrefix(key) })
      .returning();
    return { ok: true as const, row: row!, key };
  });
}

/** Every key of the project, revoked ones included, newest first. */
export async function listProjectApiKeys(db: DbOrTx, projectId: string): Promise<ApiKeyRow[]> {
  return db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.projectId, projectId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

/** Revokes an active key of the project (effective on the next request). False when there is none. */
export async function revokeProjectApiKey(db: DbOrTx, projectId: string, keyId: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ active: false, revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.projectId, projectId), eq(apiKeys.active, true)))
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}
