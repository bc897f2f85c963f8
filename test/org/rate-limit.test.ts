import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_SCOPES } from '../../src/access/scopes.ts';
import { RateLimiter } from '../../src/http/rate-limit.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import {
  callRoute,
  createOrgToken,
  createTenant,
  expectProblem,
  ORG_ROUTES,
  routeName,
  type Tenant,
} from '../support/route-checks.ts';

const LIMIT = 5;
let t: TestService;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: String(LIMIT) });
  tenant = await createTenant(t);
});
afterAll(async () => {
  await t?.close();
});

/** The counters use one-minute windows: start a burst well inside a window so it cannot straddle two. */
async function waitForFreshWindow() {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 200));
}

describe('organization token rate limit (spec 8: 429 with Retry-After)', () => {
  it('answers 429 with Retry-After past the limit, on every org route, per token', async () => {
    await waitForFreshWindow();
    const { token } = await createOrgToken(t, tenant.orgId, [...ORG_SCOPES]);
    const window = Math.floor(Date.now() / 60_000);
    for (let i = 0; i < LIMIT; i++) {
      expect((await t.request('GET', '/org/settings', { key: token })).status).toBe(200);
    }
    for (const route of ORG_ROUTES) {
      const res = await callRoute(t, route, token, { projectId: tenant.projectId });
      if (Math.floor(Date.now() / 60_000) !== window) return; // the window rolled over: nothing to conclude
      expectProblem(res, 429, 'RATE_LIMITED');
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter, routeName(route)).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }

    // another token of the same organization has its own budget
    const other = await createOrgToken(t, tenant.orgId, ['settings:read']);
    expect((await t.request('GET', '/org/settings', { key: other.token })).status).toBe(200);
  });

  it('counts unauthenticated requests against nobody: bad keys get 401, not 429', async () => {
    for (let i = 0; i < LIMIT * 2; i++) {
      expectProblem(
        await t.request('GET', '/org/settings', { key: `svc_org_${'f'.repeat(40)}` }),
        401,
        'UNAUTHENTICATED',
      );
    }
  });
});

describe('sliding-window limiter under a burst', () => {
  it('admits a concurrent burst below the limit in full, reserving only the leases it uses', async () => {
    const limiter = new RateLimiter(t.service.ctx.db);
    const bucket = `burst-${Date.now()}`;
    // a limit of 6,000 a minute leases 100 at a time; 500 requests at once need 5 leases, not 500
    const answers = await Promise.all(Array.from({ length: 500 }, () => limiter.take(bucket, 6_000)));
    expect(answers.filter((a) => a !== null)).toEqual([]);
    const result = (await t.service.ctx.db.execute(
      sql`select coalesce(sum(count), 0)::int as n from rate_limit_counters where bucket = ${bucket}`,
    )) as unknown as { rows: { n: number }[] };
    expect(Number(result.rows[0]!.n)).toBeLessThanOrEqual(600);
  });
});
