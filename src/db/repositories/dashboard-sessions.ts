import { and, eq, isNull, lte, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../client.ts';
import { apiKeys, dashboardSessions, orgMembers, organizations, orgTokens } from '../schema.ts';

/** Dashboard sessions of members (src/db/schema.ts `dashboardSessions`). */

export type DashboardSessionRow = typeof dashboardSessions.$inferSelect;

/** The member holding this e-mail (compared lowercase), with its organization's name; null when none. */
export async function findMemberByEmail(db: DbOrTx, email: string) {
  const [row] = await db
    .select({ member: orgMembers, orgName: organizations.name })
    .from(orgMembers)
    .innerJoin(organizations, eq(organizations.id, orgMembers.orgId))
    .where(eq(orgMembers.email, email.toLowerCase()))
    .limit(1);
  return row ?? null;
}

export async function insertSession(
  db: DbOrTx,
  values: {
    orgId: string;
    memberId: string;
    secretHash: string;
    orgTokenId: string;
    orgTokenSealed: string;
    expiresAt: Date;
  },
): Promise<DashboardSessionRow> {
  const [row] = await db.insert(dashboardSessions).values(values).returning();
  return row!;
}

/** A session that has not ended, with its member's e-mail and organization's name; null for any other id. */
export async function findOpenSession(db: DbOrTx, id: string) {
  const [row] = await db
    .select({ session: dashboardSessions, email: orgMembers.email, orgName: organizations.name })
    .from(dashboardSessions)
    .innerJoin(orgMembers, eq(orgMembers.id, dashboardSessions.memberId))
    .innerJoin(organizations, eq(organizations.id, dashboardSessions.orgId))
    .where(and(eq(dashboardSessions.id, id), isNull(dashboardSessions.endedAt)))
    .limit(1);
  return row ?? null;
}

/**
 * Records the session's project key for `projectId` unless one is already recorded (two requests minting at
 * once: the first wins). True when this key was recorded.
 */
export async function recordProjectKey(
  db: DbOrTx,
  sessionId: string,
  projectId: string,
  entry: { keyId: string; sealed: string },
): Promise<boolean> {
  const rows = await db
    .update(dashboardSessions)
    .set({
      projectKeys: sql`${dashboardSessions.projectKeys} || jsonb_build_object(${projectId}::text, ${JSON.stringify(entry)}::jsonb)`,
    })
    .where(and(eq(dashboardSessions.id, sessionId), sql`not (${dashboardSessions.projectKeys} ? ${projectId}::text)`))
    .returning({ id: dashboardSessions.id });
  return rows.length > 0;
}

/** Forgets the session's project key of `projectId` (it was revoked by someone). */
export async function forgetProjectKey(db: DbOrTx, sessionId: string, projectId: string): Promise<void> {
  await db
    .update(dashboardSessions)
    .set({ projectKeys: sql`${dashboardSessions.projectKeys} - ${projectId}::text` })
    .where(eq(dashboardSessions.id, sessionId));
}

/**
 * Ends a session (sign-out or expiry) and revokes the credentials minted for it, in one transaction. False when it
 * had already ended.
 */
export async function endSession(db: DbOrTx, id: string, now: Date): Promise<boolean> {
  const [ended] = await db
    .update(dashboardSessions)
    .set({ endedAt: now })
    .where(and(eq(dashboardSessions.id, id), isNull(dashboardSessions.endedAt)))
    .returning();
  if (!ended) return false;
  await db
    .update(orgTokens)
    .set({ active: false, revokedAt: now })
    .where(and(eq(orgTokens.id, ended.orgTokenId), eq(orgTokens.active, true)));
  for (const { keyId } of Object.values(ended.projectKeys)) {
    await db
      .update(apiKeys)
      .set({ active: false, revokedAt: now })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.active, true)));
  }
  return true;
}

/**
 * Ends the sessions past their expiry that nobody came back to (the worker's housekeeping), revoking their
 * credentials: a session's token never outlives it. Returns how many were ended.
 */
export async function endExpiredSessions(db: Db, now: Date): Promise<number> {
  const expired = await db
    .select({ id: dashboardSessions.id })
    .from(dashboardSessions)
    .where(and(isNull(dashboardSessions.endedAt), lte(dashboardSessions.expiresAt, now)))
    .limit(500);
  let ended = 0;
  for (const { id } of expired) if (await db.transaction((tx) => endSession(tx, id, now))) ended++;
  return ended;
}
