import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { hashKey, keyPrefix, newOrgToken } from '../../access/keys.ts';
import { ORG_SCOPES } from '../../access/scopes.ts';
import type { DbOrTx } from '../client.ts';
import { organizations, orgTokens, plans } from '../schema.ts';

export function slugify(name: string): string {
  const base = name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return base || 'org';
}

export async function findPlan(db: DbOrTx, slug: string) {
  const [plan] = await db.select().from(plans).where(eq(plans.slug, slug)).limit(1);
  return plan ?? null;
}

export async function createOrganization(db: DbOrTx, input: { name: string; planSlug: string }) {
  const base = slugify(input.name);
  for (let attempt = 0; attempt < 5; attempt++) {
    const slug = attempt === 0 ? base : `${base}-${randomBytes(3).toString('hex')}`;
    const rows = await db
      .insert(organizations)
      .values({ name: input.name, slug, planSlug: input.planSlug })
      .onConflictDoNothing({ target: organizations.slug })
      .returning();
    if (rows[0]) return rows[0];
  }
  throw new Error('could not allocate an organization slug');
}

export async function createOrgToken(db: DbOrTx, orgId: string, name: string, scopes: string[] = [...ORG_SCOPES]) {
  const token = newOrgToken();
  const [row] = await db
    .insert(orgTokens)
    .values({ orgId, name, tokenHash: hashKey(token), prefix: keyPrefix(token), scopes })
    .returning();
  return { row: row!, token };
}

export async function revokeOrgToken(db: DbOrTx, orgId: string, tokenId: string) {
  const rows = await db
    .update(orgTokens)
    .set({ active: false, revokedAt: new Date() })
    .where(and(eq(orgTokens.id, tokenId), eq(orgTokens.orgId, orgId), eq(orgTokens.active, true)))
    .returning({ id: orgTokens.id });
  return rows.length > 0;
}

export async function findOrganization(db: DbOrTx, id: string) {
  const [org] = await db.select().from(organizations).where(eq(organizations.id, id)).limit(1);
  return org ?? null;
}

const PERIOD_MS = 30 * 24 * 3600 * 1000;

/**
 * Credits: a monthly period (30 days from `periodStart`), rolled forward lazily. Consumes `count` credits
 * unless the plan has a hard limit that would be passed. Returns false when refused (HTTP 402).
 */
export async function consumeCredits(db: DbOrTx, orgId: string, count: number): Promise<boolean> {
  const rows = await db.execute(sql`
    update organizations o set
      period_start = case when o.period_start + interval '30 days' <= now()
        then o.period_start + (floor(extract(epoch from (now() - o.period_start)) / 2592000) * interval '30 days')
        else o.period_start end,
      credits_used = case when o.period_start + interval '30 days' <= now() then ${count} else o.credits_used + ${count} end
    from plans p
    where o.id = ${orgId} and p.slug = o.plan_slug
      and (p.allow_overage
        or (case when o.period_start + interval '30 days' <= now() then 0 else o.credits_used end) + ${count} <= p.credits_limit)
    returning o.id`);
  return (rows as unknown as { rows: unknown[] }).rows.length > 0;
}

export async function subscriptionOf(db: DbOrTx, orgId: string, now = new Date()) {
  const [row] = await db
    .select({ org: organizations, plan: plans })
    .from(organizations)
    .innerJoin(plans, eq(plans.slug, organizations.planSlug))
    .where(eq(organizations.id, orgId))
    .limit(1);
  if (!row) return null;
  const { org, plan } = row;
  const expired = org.periodStart.getTime() + PERIOD_MS <= now.getTime();
  let periodStart = org.periodStart.getTime();
  while (periodStart + PERIOD_MS <= now.getTime()) periodStart += PERIOD_MS;
  const creditsUsed = expired ? 0 : org.creditsUsed;
  const periodEnd = periodStart + PERIOD_MS;
  return {
    org,
    plan,
    subscription: {
      planName: plan.name,
      planSlug: plan.slug,
      creditsUsed,
      creditsLimit: plan.creditsLimit,
      daysLeft: Math.max(0, Math.ceil((periodEnd - now.getTime()) / (24 * 3600 * 1000))),
      overageAllowed: plan.allowOverage,
      overageCredits: Math.max(0, creditsUsed - plan.creditsLimit),
      projectLimit: plan.projectLimit,
      periodStart: new Date(periodStart).toISOString(),
      periodEnd: new Date(periodEnd).toISOString(),
    },
  };
}
