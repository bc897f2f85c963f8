import { and, desc, eq } from 'drizzle-orm';
import { hashKey, keyPrefix, newProjectKey } from '../../http/keys.ts';
import type { DbOrTx } from '../client.ts';
import { apiKeys } from '../schema.ts';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** Creates a project key; only its SHA-256 hash and a short prefix are stored, the key is returned once. */
export async function createProjectApiKey(
  db: DbOrTx,
  input: { projectId: string; orgId: string; name: string; scopes: string[]; rateLimitPerMinute: number },
): Promise<{ row: ApiKeyRow; key: string }> {
  const key = newProjectKey();
  const [row] = await db
    .insert(apiKeys)
    .values({ ...input, keyHash: hashKey(key), prefix: keyPrefix(key) })
    .returning();
  return { row: row!, key };
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
