import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { onboardProject } from '../support/onboarding.ts';

/** GET /admin/organizations (the operator CLI's `org list`). */

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('GET /admin/organizations', () => {
  it('lists every organization with its plan, credits and counts, for the operator key only', async () => {
    const p = await onboardProject(t);
    const other = await t.createOrganization('free', 'Outra Org');
    const res = await t.request('GET', '/admin/organizations', { key: t.adminKey });
    expect(res.status, res.text).toBe(200);
    const byId = new Map(res.body.data.map((o: { id: string }) => [o.id, o]));
    expect(byId.get(p.orgId)).toMatchObject({ plan: 'pro', projects: 1, activeTokens: 1, creditsUsed: 0 });
    expect(byId.get(other.id)).toMatchObject({ name: 'Outra Org', plan: 'free', projects: 0, activeTokens: 1 });
    expect(res.body.data.map((o: { id: string }) => o.id)).toEqual([p.orgId, other.id]);

    expect((await t.request('GET', '/admin/organizations')).status).toBe(401);
    const asOrg = await t.request('GET', '/admin/organizations', { key: other.token });
    expect([401, 403]).toContain(asOrg.status);
  });
});
