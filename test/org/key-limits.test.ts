import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_SLOT_MS, RateLimiter } from '../../src/http/rate-limit.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { createTenant, expectProblem } from '../support/route-checks.ts';

/**
 * Rate limits protect the service (issue 9, item 4): key rate ceilings (plan, NFSE_MAX_KEY_RATE_LIMIT, the
 * operator's per-organization value), the number of keys per project, the per-address limit of requests without a
 * valid key, and a sliding window that never lets twice the limit through at a minute boundary.
 */

const SERVICE_MAX = 500;
const MAX_KEYS = 4;
const ANONYMOUS = 6;
let t: TestService;

beforeAll(async () => {
  t = await startTestService({
    NFSE_MAX_KEY_RATE_LIMIT: String(SERVICE_MAX),
    NFSE_MAX_KEYS_PER_PROJECT: String(MAX_KEYS),
  });
});
afterAll(async () => t?.close());

function createKey(token: string, projectId: string, body: Record<string, unknown>) {
  return t.request('POST', `/org/projects/${projectId}/api-keys`, { key: token, body: { name: 'k', ...body } });
}

describe('requests without a valid key are limited per client address', () => {
  let t: TestService; // a service of its own: the per-address budget is shared by the whole file's requests
  beforeAll(async () => {
    t = await startTestService({ NFSE_ANONYMOUS_RATE_LIMIT: String(ANONYMOUS) });
  });
  afterAll(async () => t?.close());

  it(`answers 401 up to ${ANONYMOUS} a minute, then 429 with Retry-After; valid keys are unaffected`, async () => {
    const tenant = await createTenant(t, 'pro');
    const bad = { key: `svc_${'0'.repeat(40)}` };
    const statuses: number[] = [];
    for (let i = 0; i < ANONYMOUS + 3; i++) {
      statuses.push((await t.request('GET', '/webhooks/endpoints', i % 2 ? bad : {})).status);
    }
    expect(statuses.slice(0, ANONYMOUS)).toEqual(Array(ANONYMOUS).fill(401));
    const limited = await t.request('GET', '/org/settings', { key: 'svc_org_not-a-token' });
    expectProblem(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(statuses.slice(ANONYMOUS)).toEqual([429, 429, 429]);
    expect((await t.request('GET', '/webhooks/endpoints', { key: tenant.projectKey })).status).toBe(200);
    expect((await t.request('GET', '/org/settings', { key: tenant.token })).status).toBe(200);
  });
});

describe('key rate ceilings', () => {
  it('caps a value above the ceiling (201, effective value, RATE_LIMIT_CAPPED) and keeps one below it', async () => {
    const tenant = await createTenant(t, 'pro'); // pro plan: 1200, the service setting (500) is lower
    const capped = await createKey(tenant.token, tenant.projectId, { rateLimitPerMinute: 100_000 });
    expect(capped.status, capped.text).toBe(201);
    expect(capped.body.rateLimitPerMinute).toBe(SERVICE_MAX);
    expect(capped.body.warnings).toEqual([
      { code: 'RATE_LIMIT_CAPPED', field: 'rateLimitPerMinute', message: expect.stringContaining(`${SERVICE_MAX}`) },
    ]);
    const listed = await t.request('GET', `/org/projects/${tenant.projectId}/api-keys`, { key: tenant.token });
    const row = listed.body.data.find((k: { id: string }) => k.id === capped.body.id);
    expect(row.rateLimitPerMinute).toBe(SERVICE_MAX);

    const within = await createKey(tenant.token, tenant.projectId, { rateLimitPerMinute: 120 });
    expect(within.status).toBe(201);
    expect(within.body.rateLimitPerMinute).toBe(120);
    expect(within.body.warnings).toEqual([]);
  });

  it("uses the plan's ceiling when it is lower than the setting", async () => {
    const tenant = await createTenant(t, 'free'); // free plan: 60
    const res = await createKey(tenant.token, tenant.projectId, { rateLimitPerMinute: 61 });
    expect(res.status).toBe(201);
    expect(res.body.rateLimitPerMinute).toBe(60);
    expect(res.body.warnings[0].code).toBe('RATE_LIMIT_CAPPED');
  });

  it("lets the operator raise one organization's ceiling, and go back to the default", async () => {
    const tenant = await createTenant(t, 'pro');
    const other = await createTenant(t, 'pro');
    const raised = await t.request('PUT', `/admin/organizations/${tenant.orgId}/limits`, {
      key: t.adminKey,
      body: { keyRateLimitCeiling: 50_000 },
    });
    expect(raised.status, raised.text).toBe(200);
    expect(raised.body).toEqual({
      id: tenant.orgId,
      keyRateLimitCeiling: 50_000,
      effectiveKeyRateLimitCeiling: 50_000,
    });
    const fast = await createKey(tenant.token, tenant.projectId, { rateLimitPerMinute: 50_000 });
    expect(fast.body.rateLimitPerMinute).toBe(50_000);
    expect(fast.body.warnings).toEqual([]);
    // only that organization
    expect(
      (await createKey(other.token, other.projectId, { rateLimitPerMinute: 50_000 })).body.rateLimitPerMinute,
    ).toBe(SERVICE_MAX);

    const reset = await t.request('PUT', `/admin/organizations/${tenant.orgId}/limits`, {
      key: t.adminKey,
      body: { keyRateLimitCeiling: null },
    });
    expect(reset.body).toEqual({
      id: tenant.orgId,
      keyRateLimitCeiling: null,
      effectiveKeyRateLimitCeiling: SERVICE_MAX,
    });
    expect(
      (await createKey(tenant.token, tenant.projectId, { rateLimitPerMinute: 50_000 })).body.rateLimitPerMinute,
    ).toBe(SERVICE_MAX);
  });

  it('refuses bad operator input and organization tokens on the operator route', async () => {
    const tenant = await createTenant(t, 'pro');
    const path = `/admin/organizations/${tenant.orgId}/limits`;
    expect((await t.request('PUT', path, { key: t.adminKey, body: { keyRateLimitCeiling: 0 } })).status).toBe(400);
    expect((await t.request('PUT', path, { key: t.adminKey, body: { keyRateLimitCeiling: 'x' } })).status).toBe(400);
    expectProblem(
      await t.request('PUT', '/admin/organizations/00000000-0000-4000-8000-000000000000/limits', {
        key: t.adminKey,
        body: { keyRateLimitCeiling: 10 },
      }),
      404,
      'NOT_FOUND',
    );
    const asOrg = await t.request('PUT', path, { key: tenant.token, body: { keyRateLimitCeiling: 10 } });
    expect([401, 403]).toContain(asOrg.status);
  });
});

describe('keys per project', () => {
  it(`holds at most ${MAX_KEYS} active keys (409 API_KEY_LIMIT_REACHED); revoking one frees a place`, async () => {
    const tenant = await createTenant(t, 'pro'); // already holds one key
    const ids: string[] = [];
    for (let i = 1; i < MAX_KEYS; i++) {
      const res = await createKey(tenant.token, tenant.projectId, {});
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.id);
    }
    expectProblem(await createKey(tenant.token, tenant.projectId, {}), 409, 'API_KEY_LIMIT_REACHED');
    const revoked = await t.request('DELETE', `/org/projects/${tenant.projectId}/api-keys/${ids[0]}`, {
      key: tenant.token,
    });
    expect(revoked.status, revoked.text).toBeLessThan(300);
    expect((await createKey(tenant.token, tenant.projectId, {})).status).toBe(201);
  });

  it('counts concurrent creations one by one', async () => {
    const tenant = await createTenant(t, 'pro');
    const results = await Promise.all(
      Array.from({ length: MAX_KEYS + 3 }, () => createKey(tenant.token, tenant.projectId, {})),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_KEYS - 1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
  });
});

describe('the sliding window', () => {
  it('never admits twice the limit around a minute boundary, and admits again once the window slides', async () => {
    let clock = Date.UTC(2030, 0, 1, 12, 0, 59, 500); // half a second before a minute boundary
    const limiter = new RateLimiter(t.service.ctx.db, () => clock);
    const take = async (n: number) => {
      let allowed = 0;
      for (let i = 0; i < n; i++) if ((await limiter.take('test:boundary', 10)) === null) allowed++;
      return allowed;
    };
    expect(await take(15)).toBe(10);
    clock += 1_000; // 12:01:00.500, a new minute: a fixed window would admit 10 more here
    expect(await take(10)).toBe(0);
    clock += 30_000;
    expect(await take(10)).toBe(0);
    clock += 30_000; // 12:02:00.500: the burst of 12:00:59.5 is more than 60 s old
    expect(await take(15)).toBe(10);

    // a second process (its own limiter) shares the counters: the limit holds across both
    const other = new RateLimiter(t.service.ctx.db, () => clock);
    expect(await other.take('test:boundary', 10)).not.toBeNull();
    const retryAfter = await other.take('test:boundary', 10);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(RATE_SLOT_MS / 1000);
  });

  it('lets a client at a steady rate just under its limit through', async () => {
    let clock = Date.UTC(2030, 0, 1, 13, 0, 0, 0);
    const limiter = new RateLimiter(t.service.ctx.db, () => clock);
    let refused = 0;
    for (let i = 0; i < 180; i++) {
      if ((await limiter.take('test:steady', 60)) !== null) refused++;
      clock += 1_050; // 57 a minute
    }
    expect(refused).toBe(0);
  });
});
