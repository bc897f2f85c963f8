import type { DbOrTx } from '../client.ts';
import { orgMembers } from '../schema.ts';

/** Members of an organization (src/db/schema.ts `orgMembers`): people who sign in with e-mail and password. */

/** Inserts a member; null when the e-mail (compared lowercase) already belongs to a member. */
export async function createMember(db: DbOrTx, input: { orgId: string; email: string; passwordHash: string }) {
  const rows = await db
    .insert(orgMembers)
    .values({ orgId: input.orgId, email: input.email.toLowerCase(), passwordHash: input.passwordHash })
    .onConflictDoNothing({ target: orgMembers.email })
    .returning();
  return rows[0] ?? null;
}
