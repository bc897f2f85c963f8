import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_SCOPES } from '../../src/access/scopes.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import {
  apiOperations,
  callRoute,
  createOrgToken,
  createTenant,
  expectProblem,
  fillPath,
  isProjectRoute,
  keyKindFor,
  ORG_ROUTES,
  projectBody,
  routeName,
  type Tenant,
  tokenWithout,
} from '../support/route-checks.ts';

/**
 * The common checks of the shared route harness, over every organization route (spec 4.1, 5, 7):
 * 401 without a key, with an unknown key and with a revoked token; 403 for a project key or the operator key
 * (wrong kind) and for a token lacking the route's scope (5.4); 404 for another organization's project id
 * and for malformed ids, never data.
 */

let t: TestService;
let a: Tenant;
let b: Tenant;
let revokedToken: string;
const withoutScope = new Map<string, string>();
const onlyScope = new Map<string, string>();

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: '100000' });
  a = await createTenant(t);
  b = await createTenant(t);
  const revoked = await createOrgToken(t, a.orgId, [...ORG_SCOPES]);
  const res = await t.request('DELETE', `/admin/organizations/${a.orgId}/tokens/${revoked.id}`, { key: t.adminKey });
  expect(res.status).toBe(200);
  revokedToken = revoked.token;
  for (const scope of ORG_SCOPES) {
    withoutScope.set(scope, await tokenWithout(t, a.orgId, scope));
    onlyScope.set(scope, (await createOrgToken(t, a.orgId, [scope])).token);
  }
});
afterAll(async () => {
  await t?.close();
});

async function snapshotOfA() {
  const project = await t.request('GET', `/org/projects/${a.projectId}`, { key: a.token });
  const keys = await t.request('GET', `/org/projects/${a.projectId}/api-keys`, { key: a.token });
  const numbering = await t.request('GET', `/org/projects/${a.projectId}/numeracao`, { key: a.token });
  const settings = await t.request('GET', '/org/settings', { key: a.token });
  const list = await t.request('GET', '/org/projects?active=false', { key: a.token });
  const { updatedAt: _u, ...stableProject } = project.body;
  return {
    project: stableProject,
    keys: keys.body,
    numbering: numbering.body,
    settings: settings.body,
    list: list.body,
  };
}

describe.each(ORG_ROUTES.map((r) => [routeName(r), r] as const))('%s', (_name, route) => {
  const ids = () => ({ projectId: a.projectId });

  it('401 without a key', async () => {
    expectProblem(await callRoute(t, route, null, ids()), 401, 'UNAUTHENTICATED');
  });

  it('401 with an unknown key of each format', async () => {
    for (const key of [
      `svc_org_${'0'.repeat(40)}`,
      `svc_${'1'.repeat(40)}`,
      'svc_admin_not-the-key-000000',
      'Bearer x',
    ]) {
      expectProblem(await callRoute(t, route, key, ids()), 401, 'UNAUTHENTICATED');
    }
  });

  it('401 with a revoked organization token', async () => {
    expectProblem(await callRoute(t, route, revokedToken, ids()), 401, 'UNAUTHENTICATED');
  });

  it('403 with a project key or the operator key (wrong kind)', async () => {
    expectProblem(await callRoute(t, route, a.projectKey, ids()), 403, 'WRONG_KEY_KIND');
    expectProblem(await callRoute(t, route, t.adminKey, ids()), 403, 'WRONG_KEY_KIND');
  });

  it(`403 for a token lacking ${route.scope}`, async () => {
    const res = await callRoute(t, route, withoutScope.get(route.scope)!, ids());
    expectProblem(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.body.detail).toContain(route.scope);
  });

  it(`passes authorization with a token holding only ${route.scope}`, async () => {
    // a throwaway project for the destructive routes
    let projectId = a.projectId;
    if (route.method === 'DELETE' && route.path === '/org/projects/{id}') {
      projectId = (await t.request('POST', '/org/projects', { key: a.token, body: projectBody() })).body.id;
    }
    const res = await callRoute(t, route, onlyScope.get(route.scope)!, { projectId });
    expect([401, 403, 429], `${res.status} ${res.text}`).not.toContain(res.status);
    expect(res.status).toBeLessThan(500);
  });

  if (isProjectRoute(route)) {
    it("404 for another organization's project id, identical to an unknown id", async () => {
      const foreign = await callRoute(t, route, b.token, ids());
      expectProblem(foreign, 404, 'PROJECT_NOT_FOUND');
      const unknown = await callRoute(t, route, b.token, { projectId: randomUUID() });
      expectProblem(unknown, 404, 'PROJECT_NOT_FOUND');
      expect(foreign.body.detail).toBe(unknown.body.detail);
      expect(foreign.text).not.toContain(a.cnpj);
    });

    it('404 for a malformed project id', async () => {
      for (const projectId of ['not-a-uuid', '1', `${a.projectId}x`, "' or 1=1 --"]) {
        const res = await callRoute(t, route, a.token, { projectId: encodeURIComponent(projectId) });
        expect(res.status, `${projectId}: ${res.text}`).toBe(404);
      }
    });
  }
});

describe('every API operation authenticates before it reads its input', () => {
  // hostile input of every kind: none of it may be looked at (no 400, no schema details) without a valid key
  const hostile = [
    {
      query: '?page=1e21&limit=abc&type=%00&extra=1',
      body: '{"unexpected": [1, {"deep": null}]',
      type: 'application/json',
    },
    { query: '', body: '{', type: 'application/json' },
    { query: '?page=-1', body: 'a=b', type: 'text/plain' },
    { query: '', body: '--x\r\ngarbage', type: 'multipart/form-data; boundary=x' },
  ];

  it('answers 401 without a key or with an unknown one, and 401/403 with a key of the wrong kind, on every operation', async () => {
    const { ops } = await apiOperations(t);
    expect(ops.length).toBeGreaterThan(30);
    let checked = 0;
    for (const { method, path, operation } of ops) {
      const kind = keyKindFor(path);
      if (kind === 'public') {
        expect(operation.security, `${method} ${path} is public`).toEqual([]);
        continue;
      }
      expect(operation.security, `${method} ${path} declares no public access`).not.toEqual([]);
      const wrongKind = kind === 'project' ? a.token : a.projectKey;
      for (const input of hostile) {
        const url = fillPath(path, () => 'not-a-uuid') + input.query;
        const withBody = method !== 'GET' && method !== 'DELETE';
        for (const key of [null, `svc_${'9'.repeat(40)}`, `svc_org_${'9'.repeat(40)}`, wrongKind]) {
          const res = await t.request(method, url, {
            key,
            ...(withBody ? { rawBody: input.body, headers: { 'content-type': input.type } } : {}),
          });
          const what = `${method} ${url} key=${key?.slice(0, 8)} body=${withBody ? input.body.slice(0, 20) : '-'}`;
          if (key === wrongKind) {
            expect([401, 403], `${what}: ${res.text}`).toContain(res.status);
            expect(['WRONG_KEY_KIND', 'UNAUTHENTICATED'], what).toContain(res.body.code);
          } else {
            expectProblem(res, 401, 'UNAUTHENTICATED');
          }
          expect(res.body.errors, `${what} reveals nothing of the schema`).toEqual([]);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(400);
  });
});

describe('isolation', () => {
  it('leaves tenant A untouched after every foreign, unauthorized and wrong-scope call', async () => {
    const before = await snapshotOfA();
    for (const route of ORG_ROUTES.filter(isProjectRoute)) {
      await callRoute(t, route, b.token, { projectId: a.projectId });
      await callRoute(t, route, withoutScope.get(route.scope)!, { projectId: a.projectId });
      await callRoute(t, route, revokedToken, { projectId: a.projectId });
      await callRoute(t, route, a.projectKey, { projectId: a.projectId });
    }
    // B's key-revocation route with A's key id
    const keyId = before.keys.data[0].id;
    expectProblem(
      await t.request('DELETE', `/org/projects/${a.projectId}/api-keys/${keyId}`, { key: b.token }),
      404,
      'PROJECT_NOT_FOUND',
    );
    expectProblem(
      await t.request('DELETE', `/org/projects/${b.projectId}/api-keys/${keyId}`, { key: b.token }),
      404,
      'NOT_FOUND',
    );
    const after = await snapshotOfA();
    expect(after).toEqual(before);
    expect(after.project.active).toBe(true);
    // A's project key still works on project routes
    expectProblem(
      await t.request('GET', `/invoices/${randomUUID()}/status`, { key: a.projectKey }),
      404,
      'INVOICE_NOT_FOUND',
    );
  });

  it("never lists or shows another organization's data", async () => {
    const list = await t.request('GET', '/org/projects?active=false&limit=100', { key: b.token });
    expect(list.body.data.map((p: { id: string }) => p.id)).not.toContain(a.projectId);
    expect(list.text).not.toContain(a.cnpj);
    const settings = await t.request('GET', '/org/settings', { key: b.token });
    expect(settings.text).not.toContain(a.orgId);
  });
});

describe('OpenAPI document', () => {
  it('documents every organization route with a summary, a description, the key scheme and response schemas', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const paths = res.body.paths as Record<string, Record<string, Record<string, unknown>>>;
    for (const route of ORG_ROUTES) {
      const path = `/api/v1${route.path}`;
      const op = paths[path]?.[route.method.toLowerCase()] as {
        summary?: string;
        description?: string;
        tags?: string[];
        responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
      };
      expect(op, `${route.method} ${path}`).toBeDefined();
      expect(op.summary).toBeTruthy();
      expect(op.description).toContain(route.scope);
      expect(op.tags).toContain('organization');
      const success = Object.keys(op.responses).find((s) => s.startsWith('2'))!;
      expect(success, `${routeName(route)} success response`).toBeDefined();
      expect((op.responses[success] as { description?: string }).description).not.toBe('Default Response');
      if (success !== '204') expect(op.responses[success]!.content?.['application/json']?.schema).toBeDefined();
      for (const status of ['401', '403', '429'])
        expect(op.responses[status], `${routeName(route)} ${status}`).toBeDefined();
      if (isProjectRoute(route)) expect(op.responses['404']).toBeDefined();
      if (route.body) expect(op.responses['400'] ?? op.responses['413']).toBeDefined();
    }
    const cert = paths['/api/v1/org/projects/{id}/certificate']!.post as {
      requestBody: { content: Record<string, { schema: { $ref: string } }> };
    };
    // the body is a named component of the document (`$ref`)
    const body = res.body.components.schemas[
      cert.requestBody.content['multipart/form-data']!.schema.$ref.replace('#/components/schemas/', '')
    ] as { properties: Record<string, unknown> };
    expect(Object.keys(body.properties).sort()).toEqual(['file', 'password']);
  });
});
