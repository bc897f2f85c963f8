import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { onboardProject } from '../support/onboarding.ts';

/** Spec 4.8.3: a project may carry an endpoint override for its municipal engine (absolute precedence). */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

describe('project endpoint override', () => {
  it('is set, shown, validated as an absolute http(s) URL and removed with null', async () => {
    const p = await onboardProject(t);
    const path = `/org/projects/${p.projectId}`;
    const url = 'https://nfse.example.gov.br/ws/v2';
    const set = await t.request('PATCH', path, { key: p.orgToken, body: { endpointOverride: url } });
    expect(set.status, set.text).toBe(200);
    expect((await t.request('GET', path, { key: p.orgToken })).body.endpointOverride).toBe(url);
    for (const bad of ['ftp://x/y', 'nfse.example.gov.br', 'https://', 'https://a b/', 42]) {
      const res = await t.request('PATCH', path, { key: p.orgToken, body: { endpointOverride: bad } });
      expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).toBe(400);
      expect(JSON.stringify(res.body.errors)).toContain('endpointOverride');
    }
    const removed = await t.request('PATCH', path, { key: p.orgToken, body: { endpointOverride: null } });
    expect(removed.status).toBe(200);
    expect((await t.request('GET', path, { key: p.orgToken })).body.endpointOverride).toBeNull();
  });
});
