import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, orgTokens } from '../../src/db/schema.ts';
import { runHousekeeping } from '../../src/wiring/workers.ts';
import { startTestService, type TestService } from '../support/harness.ts';

/** Dashboard sign-in, sessions, CSRF and tenancy, over real HTTP against the real service and database. */

let t: TestService;
const PASSWORD = 'senha-muito-segura-1';

interface Session {
  cookie: string;
  csrfToken: string;
}

async function call(
  method: string,
  path: string,
  options: { session?: Session | null; csrf?: string | null; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.session) headers.cookie = options.session.cookie;
  const csrf = options.csrf === undefined ? options.session?.csrfToken : options.csrf;
  if (csrf) headers['x-csrf-token'] = csrf;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${t.baseUrl}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    redirect: 'manual',
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text.startsWith('{') ? JSON.parse(text) : null };
}

async function orgWithMember(email: string) {
  const org = await t.createOrganization('pro', `Org ${email}`);
  const member = await t.request('POST', `/admin/organizations/${org.id}/members`, {
    key: t.adminKey,
    body: { email, password: PASSWORD },
  });
  expect(member.status).toBe(201);
  return org;
}

async function signIn(email: string, password = PASSWORD): Promise<Session> {
  const res = await call('POST', '/dashboard/api/session', { body: { email, password } });
  expect(res.status, res.text).toBe(200);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  return { cookie, csrfToken: res.body.csrfToken };
}

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('dashboard sign-in', () => {
  it('sets an HttpOnly SameSite=Strict cookie scoped to /dashboard and answers who signed in', async () => {
    await orgWithMember('ana@acme.com.br');
    const res = await call('POST', '/dashboard/api/session', {
      body: { email: 'ANA@acme.com.br', password: PASSWORD },
    });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^nfse_session=[0-9a-f-]{36}\.[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/dashboard');
    expect(cookie).not.toContain('Secure'); // served over http here
    expect(res.body.email).toBe('ana@acme.com.br');
    expect(res.body.organization.name).toBe('Org ana@acme.com.br');
    const session = { cookie: cookie.split(';')[0]!, csrfToken: res.body.csrfToken };
    const me = await call('GET', '/dashboard/api/session', { session });
    expect(me.status).toBe(200);
    expect(me.body.csrfToken).toBe(session.csrfToken);
  });

  it('refuses a wrong password and an unknown e-mail with the same 401, in comparable time', async () => {
    await orgWithMember('bia@acme.com.br');
    const t0 = performance.now();
    const wrong = await call('POST', '/dashboard/api/session', {
      body: { email: 'bia@acme.com.br', password: 'not-the-password' },
    });
    const t1 = performance.now();
    const unknown = await call('POST', '/dashboard/api/session', {
      body: { email: 'nobody@acme.com.br', password: 'not-the-password' },
    });
    const t2 = performance.now();
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('DASHBOARD_SIGN_IN_FAILED');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail).toBe(wrong.body.detail);
    // both run one scrypt (tens of milliseconds): an unknown e-mail is not answered at once
    expect(t2 - t1).toBeGreaterThan((t1 - t0) / 4);
  });

  it('marks the cookie Secure when the service is served over https', async () => {
    await orgWithMember('lia@acme.com.br');
    const config = t.service.ctx.config;
    const plain = config.publicBaseUrl;
    config.publicBaseUrl = 'https://nfse.example.com.br';
    try {
      const res = await call('POST', '/dashboard/api/session', {
        body: { email: 'lia@acme.com.br', password: PASSWORD },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')).toMatch(/; Secure$/);
    } finally {
      config.publicBaseUrl = plain;
    }
  });

  it('names the field of a malformed sign-in body', async () => {
    const res = await call('POST', '/dashboard/api/session', { body: { email: 'x@y.z' } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('password');
  });

  it('limits sign-in attempts per e-mail (429 with Retry-After)', async () => {
    await orgWithMember('cai@acme.com.br');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await call('POST', '/dashboard/api/session', {
        body: { email: 'cai@acme.com.br', password: `wrong-${i}` },
      });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses[5]).toBe(429);
  });

  it('refuses a sign-in posted by another site (Origin)', async () => {
    const res = await call('POST', '/dashboard/api/session', {
      body: { email: 'ana@acme.com.br', password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('CSRF_TOKEN_INVALID');
  });
});

describe('dashboard session and CSRF', () => {
  it('answers 401 without a session, with an unknown one, and serves the page itself to anyone', async () => {
    for (const session of [null, { cookie: 'nfse_session=00000000-0000-4000-8000-000000000000.abc', csrfToken: 'x' }]) {
      const me = await call('GET', '/dashboard/api/session', { session });
      expect(me.status).toBe(401);
      expect(me.body.code).toBe('DASHBOARD_SESSION_REQUIRED');
      const projects = await call('GET', '/dashboard/api/v1/org/projects', { session });
      expect(projects.status).toBe(401);
    }
    const page = await call('GET', '/dashboard');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/dashboard/');
  });

  it('refuses a state-changing request without the CSRF token or with a wrong one (403), and accepts the right one', async () => {
    await orgWithMember('dora@acme.com.br');
    const session = await signIn('dora@acme.com.br');
    const body = { name: 'X', cnpj: '11222333000181' };
    const missing = await call('POST', '/dashboard/api/v1/org/projects', { session, csrf: null, body });
    expect(missing.status).toBe(403);
    expect(missing.body.code).toBe('CSRF_TOKEN_INVALID');
    const wrong = await call('POST', '/dashboard/api/v1/org/projects', {
      session,
      csrf: `${session.csrfToken}x`,
      body,
    });
    expect(wrong.status).toBe(403);
    const signOutWithoutToken = await call('DELETE', '/dashboard/api/session', { session, csrf: null });
    expect(signOutWithoutToken.status).toBe(403);
    // with the token the request reaches the API, whose own validation answers (fields named)
    const right = await call('POST', '/dashboard/api/v1/org/projects', { session, body });
    expect(right.status).toBe(400);
    expect(right.body.errors.length).toBeGreaterThan(0);
    expect(right.body.errors.map((e: { field: string }) => e.field)).toContain('razaoSocial');
  });

  it('signs out: the cookie no longer works and the credentials minted for the session are revoked', async () => {
    await orgWithMember('eva@acme.com.br');
    const session = await signIn('eva@acme.com.br');
    expect((await call('GET', '/dashboard/api/v1/org/projects', { session })).status).toBe(200);
    const out = await call('DELETE', '/dashboard/api/session', { session });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await call('GET', '/dashboard/api/session', { session })).status).toBe(401);
    const rows = await t.service.ctx.db
      .select({ active: orgTokens.active })
      .from(orgTokens)
      .where(eq(orgTokens.name, 'dashboard session eva@acme.com.br'));
    expect(rows).toEqual([{ active: false }]);
  });

  it('expires a session after its lifetime', async () => {
    await orgWithMember('flor@acme.com.br');
    const session = await signIn('flor@acme.com.br');
    const realNow = t.service.ctx.now;
    t.service.ctx.now = () => new Date(Date.now() + 13 * 3600_000);
    try {
      const me = await call('GET', '/dashboard/api/session', { session });
      expect(me.status).toBe(401);
      expect(me.body.detail).toContain('expired');
    } finally {
      t.service.ctx.now = realNow;
    }
    expect((await call('GET', '/dashboard/api/session', { session })).status).toBe(401);
  });

  it("revokes an expired session's credentials in the worker's housekeeping, without the member coming back", async () => {
    await orgWithMember('gui@acme.com.br');
    await signIn('gui@acme.com.br');
    const tokenOf = async () =>
      t.service.ctx.db
        .select({ active: orgTokens.active })
        .from(orgTokens)
        .where(eq(orgTokens.name, 'dashboard session gui@acme.com.br'));
    await runHousekeeping(t.service.ctx);
    expect(await tokenOf()).toEqual([{ active: true }]); // not expired yet
    const realNow = t.service.ctx.now;
    t.service.ctx.now = () => new Date(Date.now() + 13 * 3600_000);
    try {
      await runHousekeeping(t.service.ctx);
    } finally {
      t.service.ctx.now = realNow;
    }
    expect(await tokenOf()).toEqual([{ active: false }]);
  });
});

describe('dashboard tenancy', () => {
  it("answers 404 for another organization's project, through the API and the dashboard's own routes", async () => {
    const other = await orgWithMember('gil@outra.com.br');
    const project = await t.request('POST', '/org/projects', {
      key: other.token,
      body: {
        name: 'Outra',
        cnpj: '11444777000161',
        razaoSocial: 'OUTRA LTDA',
        regimeTributario: '1',
        codigoMunicipio: '2611606',
        serieNfse: '1',
        ambiente: 2,
      },
    });
    expect(project.status, project.text).toBe(201);
    const otherId = project.body.id as string;
    await orgWithMember('hugo@acme.com.br');
    const session = await signIn('hugo@acme.com.br');
    expect((await call('GET', `/dashboard/api/v1/org/projects/${otherId}`, { session })).status).toBe(404);
    expect((await call('GET', `/dashboard/api/projects/${otherId}/invoices`, { session })).status).toBe(404);
    const status = await call('GET', '/dashboard/api/v1/invoices/00000000-0000-4000-8000-000000000000/status', {
      session,
      headers: { 'x-dashboard-project': otherId },
    });
    expect(status.status).toBe(404);
    expect(status.body.code).toBe('PROJECT_NOT_FOUND');
    // operator routes are never reachable through a session
    expect((await call('GET', '/dashboard/api/v1/admin/organizations', { session })).status).toBe(404);
    for (const sneaky of ['/x/../admin/organizations', '/org/%2e%2e/admin/organizations', '//admin/organizations']) {
      expect((await call('GET', `/dashboard/api/v1${sneaky}`, { session })).status).toBe(404);
    }
  });
});

describe('dashboard organization tokens', () => {
  it('creates a scoped token shown once, lists it, revokes it, and never reaches another organization', async () => {
    const other = await orgWithMember('ines@outra.com.br');
    await orgWithMember('joao@acme.com.br');
    const session = await signIn('joao@acme.com.br');
    const bad = await call('POST', '/dashboard/api/org-tokens', {
      session,
      body: { name: 'ERP', scopes: ['projects:read', 'emit'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toMatch(/^scopes/);
    const created = await call('POST', '/dashboard/api/org-tokens', {
      session,
      body: { name: 'ERP', scopes: ['projects:read'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^svc_org_/);
    // a real token of the API, within its scopes
    expect((await t.request('GET', '/org/projects', { key: created.body.token })).status).toBe(200);
    const write = await t.request('POST', '/org/projects', { key: created.body.token, body: {} });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('INSUFFICIENT_SCOPE');
    const list = await call('GET', '/dashboard/api/org-tokens', { session });
    const listed = list.body.data.find((x: { id: string }) => x.id === created.body.id);
    expect(listed).toMatchObject({ name: 'ERP', scopes: ['projects:read'], active: true, thisSession: false });
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);
    expect(list.body.data.filter((x: { thisSession: boolean }) => x.thisSession)).toHaveLength(1);
    // another organization's token: 404, and it stays active
    const otherSession = await signIn('ines@outra.com.br');
    const otherTokens = await call('GET', '/dashboard/api/org-tokens', { session: otherSession });
    const otherTokenId = otherTokens.body.data.find((x: { thisSession: boolean }) => !x.thisSession).id as string;
    const foreign = await call('DELETE', `/dashboard/api/org-tokens/${otherTokenId}`, { session });
    expect(foreign.status).toBe(404);
    expect((await t.request('GET', '/org/projects', { key: other.token })).status).toBe(200);
    const revoked = await call('DELETE', `/dashboard/api/org-tokens/${created.body.id}`, { session, csrf: null });
    expect(revoked.status).toBe(403);
    expect((await call('DELETE', `/dashboard/api/org-tokens/${created.body.id}`, { session })).status).toBe(204);
    expect((await t.request('GET', '/org/projects', { key: created.body.token })).status).toBe(401);
  });
});

describe('dashboard project keys', () => {
  it("acts on a project through a key of the session's own, minted again if revoked and revoked at sign-out", async () => {
    await orgWithMember('kai@acme.com.br');
    const session = await signIn('kai@acme.com.br');
    const created = await call('POST', '/dashboard/api/v1/org/projects', {
      session,
      body: {
        name: 'Kai',
        cnpj: '11222333000181',
        razaoSocial: 'KAI LTDA',
        regimeTributario: '1',
        codigoMunicipio: '2611606',
        serieNfse: '1',
        ambiente: 2,
      },
    });
    expect(created.status, created.text).toBe(201);
    const projectId = created.body.id as string;
    const project = { 'x-dashboard-project': projectId };
    const endpoints = () => call('GET', '/dashboard/api/v1/webhooks/endpoints', { session, headers: project });
    expect((await endpoints()).status).toBe(200);
    // without a project the project routes answer 404 naming the header
    const none = await call('GET', '/dashboard/api/v1/webhooks/endpoints', { session });
    expect(none.status).toBe(404);
    expect(none.body.errors[0].field).toBe('(header) x-dashboard-project');
    const keys = async () =>
      (await call('GET', `/dashboard/api/v1/org/projects/${projectId}/api-keys`, { session })).body.data as {
        id: string;
        name: string;
        active: boolean;
      }[];
    const [minted] = await keys();
    expect(minted).toMatchObject({ name: 'dashboard session kai@acme.com.br', active: true });
    expect((await endpoints()).status).toBe(200);
    expect(await keys()).toHaveLength(1); // reused, not minted per request
    const revoke = await call('DELETE', `/dashboard/api/v1/org/projects/${projectId}/api-keys/${minted!.id}`, {
      session,
    });
    expect(revoke.status).toBe(200);
    expect((await endpoints()).status).toBe(200); // a new key, minted once
    const after = await keys();
    expect(after.map((k) => k.active).sort()).toEqual([false, true]);
    expect((await call('DELETE', '/dashboard/api/session', { session })).status).toBe(204);
    const rows = await t.service.ctx.db
      .select({ active: apiKeys.active })
      .from(apiKeys)
      .where(eq(apiKeys.projectId, projectId));
    expect(rows.every((r) => !r.active)).toBe(true);
  });
});
