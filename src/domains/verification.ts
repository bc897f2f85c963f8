import { Resolver } from 'node:dns/promises';
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import type { DbOrTx } from '../db/client.ts';
import { organizations } from '../db/schema.ts';
import type { JobPayloads } from '../jobs/catalogue.ts';

/**
 * White-label domain verification. PATCH /org/settings stores the requested storageBaseUrl as
 * `pending_verification` and enqueues `domain.verify`; document URLs keep the current base (the last verified
 * domain, or the service's own) until the job has resolved the domain's CNAME to NFSE_CNAME_TARGET. A check that
 * finds no CNAME or another target keeps the domain pending (the reason is shown) and is scheduled again every
 * NFSE_DOMAIN_VERIFICATION_RETRY_SECONDS, up to MAX_DOMAIN_CHECKS checks; then the domain is `failed` with the
 * reason. A DNS server that cannot be reached is a thrown failure, retried by the job policy (on-exhausted:
 * `failed`).
 */
export const MAX_DOMAIN_CHECKS = 144;

export type CnameAnswer = { kind: 'match' } | { kind: 'mismatch'; reason: string };

/** The resolver of the checks: the configured DNS server (NFSE_DNS_SERVER) or the system's. */
function resolverFor(ctx: AppContext): Resolver {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (ctx.config.dnsServer) resolver.setServers([ctx.config.dnsServer]);
  return resolver;
}

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** Resolves the CNAME of `host`; a missing record is an answer, an unreachable or failing server throws. */
export async function checkCname(ctx: AppContext, host: string): Promise<CnameAnswer> {
  const target = normalize(ctx.config.cnameTarget);
  let names: string[];
  try {
    names = await resolverFor(ctx).resolveCname(host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') {
      return { kind: 'mismatch', reason: `${host} has no CNAME record; create one pointing to ${target}` };
    }
    throw new Error(`DNS query for the CNAME of ${host} failed (${code ?? 'error'})`);
  }
  if (names.map(normalize).includes(target)) return { kind: 'match' };
  return {
    kind: 'mismatch',
    reason: `the CNAME of ${host} points to ${names.map(normalize).join(', ')}, not to ${target}`,
  };
}

/** Enqueues the first check of a newly set domain (inside the transaction that set it). */
export async function scheduleDomainCheck(
  ctx: AppContext,
  tx: DbOrTx,
  data: JobPayloads['domain.verify'],
  delaySeconds = 0,
): Promise<void> {
  await ctx.queue.send('domain.verify', data, {
    tx,
    ...(delaySeconds > 0 ? { startAfter: new Date(Date.now() + delaySeconds * 1000) } : {}),
  });
}

/** Updates the verification state, only while the organization still asks for this domain. */
async function record(
  ctx: AppContext,
  data: JobPayloads['domain.verify'],
  set: Partial<typeof organizations.$inferInsert>,
): Promise<boolean> {
  const rows = await ctx.db
    .update(organizations)
    .set({ ...set, storageBaseUrlCheckedAt: ctx.now() })
    .where(and(eq(organizations.id, data.orgId), eq(organizations.storageBaseUrl, data.storageBaseUrl)))
    .returning({ id: organizations.id });
  return rows.length > 0;
}

/** The `domain.verify` job: one check; reschedules itself while the domain is pending. */
export async function runDomainVerification(ctx: AppContext, data: JobPayloads['domain.verify']): Promise<void> {
  const [org] = await ctx.db.select().from(organizations).where(eq(organizations.id, data.orgId)).limit(1);
  if (!org || org.storageBaseUrl !== data.storageBaseUrl || org.storageBaseUrlStatus !== 'pending_verification') {
    return; // changed or removed since: a newer job (or none) owns it
  }
  const host = new URL(data.storageBaseUrl).hostname;
  const answer = await checkCname(ctx, host);
  if (answer.kind === 'match') {
    await record(ctx, data, {
      storageBaseUrlStatus: 'active',
      storageBaseUrlActive: data.storageBaseUrl,
      storageBaseUrlReason: null,
    });
    ctx.logger.info({ orgId: data.orgId }, 'white-label domain verified');
    return;
  }
  const check = data.check + 1;
  if (check >= MAX_DOMAIN_CHECKS) {
    await record(ctx, data, {
      storageBaseUrlStatus: 'failed',
      storageBaseUrlReason: `${answer.reason} (gave up after ${check} checks)`,
    });
    return;
  }
  await ctx.db.transaction(async (tx) => {
    await tx
      .update(organizations)
      .set({ storageBaseUrlReason: answer.reason, storageBaseUrlCheckedAt: ctx.now() })
      .where(and(eq(organizations.id, data.orgId), eq(organizations.storageBaseUrl, data.storageBaseUrl)));
    await scheduleDomainCheck(ctx, tx, { ...data, check }, ctx.config.domainVerificationRetrySeconds);
  });
}

/** The on-exhausted step of `domain.verify`: the DNS could not be queried through the retries. */
export async function failDomainVerification(
  ctx: AppContext,
  data: JobPayloads['domain.verify'],
  code: string,
): Promise<void> {
  await record(ctx, data, {
    storageBaseUrlStatus: 'failed',
    storageBaseUrlReason: `${code}: the DNS could not be queried for the domain's CNAME; set the domain again to retry`,
  });
}
