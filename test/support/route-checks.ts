import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { ORG_SCOPES, type OrgScope } from '../../src/access/scopes.ts';
import type { TestResponse, TestService } from './harness.ts';

/**
 * The shared route harness of the organization interface (spec 4.1): two tenants, and the common checks
 * every org route must pass (no key, unknown key, revoked token, project key, missing scope, another
 * organization's project id, malformed id). Route tests list their routes in `ORG_ROUTES`; the checks run
 * over all of them.
 */

/** A CNPJ with valid check digits from a 12-digit base (deterministic per `seed`). */
export function makeCnpj(seed: number): string {
  const base = String(10_000_000 + (seed % 89_999_999)).padStart(8, '0') + '0001';
  const digit = (digits: string, weights: number[]) => {
    const sum = [...digits].reduce((acc, d, i) => acc + Number(d) * weights[i]!, 0);
    const rest = sum % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  const d1 = digit(base, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  const d2 = digit(base + d1, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${base}${d1}${d2}`;
}

let cnpjSeed = Math.floor(Math.random() * 1_000_000);
/** A fresh valid CNPJ for each call. */
export function nextCnpj(): string {
  cnpjSeed += 7919;
  return makeCnpj(cnpjSeed);
}

export interface Tenant {
  orgId: string;
  /** an organization token with every scope */
  token: string;
  projectId: string;
  /** a project key (svc_…) of `projectId` */
  projectKey: string;
  cnpj: string;
}

/** A minimal valid project body. */
export function projectBody(overrides: Record<string, unknown> = {}) {
  return { name: 'Empresa Teste', cnpj: nextCnpj(), razaoSocial: 'EMPRESA TESTE LTDA', ...overrides };
}

export async function createTenant(t: TestService, plan = 'pro'): Promise<Tenant> {
  const org = await t.createOrganization(plan, `Org ${randomUUID().slice(0, 8)}`);
  const body = projectBody();
  const project = await t.request('POST', '/org/projects', { key: org.token, body });
  if (project.status !== 201) throw new Error(`create project: ${project.status} ${project.text}`);
  const key = await t.request('POST', `/org/projects/${project.body.id}/api-keys`, {
    key: org.token,
    body: { name: 'harness' },
  });
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${key.text}`);
  return { orgId: org.id, token: org.token, projectId: project.body.id, projectKey: key.body.key, cnpj: body.cnpj };
}

/** An organization token with the given scopes, via the operator API. */
export async function createOrgToken(
  t: TestService,
  orgId: string,
  scopes: string[],
): Promise<{ id: string; token: string }> {
  const res = await t.request('POST', `/admin/organizations/${orgId}/tokens`, {
    key: t.adminKey,
    body: { name: `token ${scopes.join(',')}`, scopes },
  });
  if (res.status !== 201) throw new Error(`create token: ${res.status} ${res.text}`);
  return { id: res.body.id, token: res.body.token };
}

export interface OrgRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** the path with `{id}` for the project id and `{keyId}` for an API key id */
  path: string;
  scope: OrgScope;
  /** JSON body, or `multipart` for the upload routes */
  body?: 'multipart' | (() => unknown);
}

/** Every route of spec 4.1, with the scope of spec 5.4. */
export const ORG_ROUTES: OrgRoute[] = [
  { method: 'POST', path: '/org/projects', scope: 'projects:write', body: () => projectBody() },
  { method: 'GET', path: '/org/projects', scope: 'projects:read' },
  { method: 'GET', path: '/org/projects/{id}', scope: 'projects:read' },
  { method: 'PATCH', path: '/org/projects/{id}', scope: 'projects:write', body: () => ({ name: 'Renamed' }) },
  { method: 'DELETE', path: '/org/projects/{id}', scope: 'projects:write' },
  { method: 'GET', path: '/org/projects/{id}/numeracao', scope: 'projects:read' },
  {
    method: 'PATCH',
    path: '/org/projects/{id}/numeracao',
    scope: 'projects:write',
    body: () => ({ ultimoNumeroNfse: 10 }),
  },
  { method: 'POST', path: '/org/projects/{id}/api-keys', scope: 'api_keys:manage', body: () => ({ name: 'k' }) },
  { method: 'GET', path: '/org/projects/{id}/api-keys', scope: 'api_keys:manage' },
  { method: 'DELETE', path: '/org/projects/{id}/api-keys/{keyId}', scope: 'api_keys:manage' },
  { method: 'POST', path: '/org/projects/{id}/certificate', scope: 'certificates:write', body: 'multipart' },
  { method: 'POST', path: '/org/projects/{id}/logo', scope: 'projects:write', body: 'multipart' },
  { method: 'DELETE', path: '/org/projects/{id}/logo', scope: 'projects:write' },
  { method: 'GET', path: '/org/settings', scope: 'settings:read' },
  {
    method: 'PATCH',
    path: '/org/settings',
    scope: 'settings:write',
    body: () => ({ storageBaseUrl: 'https://docs.cliente-exemplo.com.br' }),
  },
];

export const routeName = (r: OrgRoute) => `${r.method} ${r.path}`;
export const isProjectRoute = (r: OrgRoute) => r.path.includes('{id}');

const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

/** A small valid 1x1 PNG. */
export function tinyPng(): Buffer {
  return Buffer.from(PNG_1X1);
}

function multipartBody(route: OrgRoute): FormData {
  const form = new FormData();
  if (route.path.endsWith('/certificate')) {
    form.set('password', 'x');
    form.set('file', new Blob([new Uint8Array(Buffer.from('not a pfx'))]), 'a.pfx');
  } else {
    form.set('file', new Blob([new Uint8Array(tinyPng())], { type: 'image/png' }), 'logo.png');
  }
  return form;
}

/** Calls a route with the given key, project id and key id (a random UUID unless given). */
export function callRoute(
  t: TestService,
  route: OrgRoute,
  key: string | null,
  ids: { projectId: string; keyId?: string },
): Promise<TestResponse> {
  const path = route.path.replace('{id}', ids.projectId).replace('{keyId}', ids.keyId ?? randomUUID());
  if (route.body === 'multipart') return t.request(route.method, path, { key, rawBody: multipartBody(route) });
  return t.request(route.method, path, { key, body: route.body?.() });
}

export function expectProblem(res: TestResponse, status: number, code: string) {
  expect(res.status, `${res.status} ${res.text}`).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.body.code).toBe(code);
  expect(res.body.status).toBe(status);
  expect(typeof res.body.requestId).toBe('string');
  expect(res.headers.get('x-request-id')).toBe(res.body.requestId);
}

/** A token of the organization holding every scope but `scope`. */
export async function tokenWithout(t: TestService, orgId: string, scope: OrgScope): Promise<string> {
  return (
    await createOrgToken(
      t,
      orgId,
      ORG_SCOPES.filter((s) => s !== scope),
    )
  ).token;
}

/** One operation of the served OpenAPI document. */
export interface ApiOperation {
  method: string;
  /** OpenAPI path, e.g. /api/v1/invoices/{id}/status */
  path: string;
  operation: OpenApiOperation;
}

export interface OpenApiOperation {
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, unknown>;
  summary?: string;
}

/** Every operation of the served OpenAPI document (GET /api/v1/openapi.json). */
export async function apiOperations(t: TestService): Promise<{ doc: Record<string, unknown>; ops: ApiOperation[] }> {
  const res = await t.request('GET', '/openapi.json');
  if (res.status !== 200) throw new Error(`openapi.json: ${res.status}`);
  const ops: ApiOperation[] = [];
  // a body is a named component of the document (`$ref`): the operation carries the schema itself
  const components = (res.body.components?.schemas ?? {}) as Record<string, Record<string, unknown>>;
  for (const [path, item] of Object.entries(res.body.paths as Record<string, Record<string, OpenApiOperation>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) {
        for (const media of Object.values(operation.requestBody?.content ?? {})) {
          const ref = media.schema?.$ref;
          if (typeof ref === 'string') media.schema = components[ref.replace('#/components/schemas/', '')];
        }
        ops.push({ method: method.toUpperCase(), path, operation });
      }
    }
  }
  return { doc: res.body, ops };
}

/** The kind of key an operation needs, from its path (spec 4: /admin operator, /org organization, else project). */
export function keyKindFor(path: string): 'admin' | 'org' | 'project' | 'public' {
  const local = path.replace(/^\/api\/v1/, '');
  if (local === '/health') return 'public';
  if (local.startsWith('/admin/')) return 'admin';
  if (local.startsWith('/org/')) return 'org';
  return 'project';
}

/** An operation's path with every `{param}` replaced. */
export function fillPath(path: string, value: (name: string) => string): string {
  return path.replace(/^\/api\/v1/, '').replace(/\{([^}]+)\}/g, (_m, name: string) => value(name));
}
