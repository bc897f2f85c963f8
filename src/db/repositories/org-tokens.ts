import { desc, eq } from 'drizzle-orm';
import type { DbOrTx } from '../client.ts';
import { orgTokens } from '../schema.ts';

/** Every organization token of the organization (revoked ones included), newest first; never the hash. */
export async function listOrgTokens(db: DbOrTx, orgId: string) {
  return db
    .select({
      id: orgTokens.id,
      name: orgTokens.name,
      prefix: orgTokens.prefix,
      scopes: orgTokens.scopes,
      active: orgTokens.active,
      createdAt: orgTokens.createdAt,
      lastUsedAt: orgTokens.lastUsedAt,
      revokedAt: orgTokens.revokedAt,
    })
    .from(orgTokens)
    .where(eq(orgTokens.orgId, orgId))
    .orderBy(desc(orgTokens.createdAt), desc(orgTokens.id));
}
