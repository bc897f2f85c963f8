import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { expectProblem } from '../support/route-checks.ts';

const CNAME_TARGET = 'cdn.nfse-target.example.net';
let t: TestService;

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: '100000', NFSE_CNAME_TARGET: CNAME_TARGET });
});
afterAll(async () => {
  await t?.close();
});

const setUrl = (token: string, storageBaseUrl: unknown) =>
  t.request('PATCH', '/org/settings', { key: token, body: { storageBaseUrl } });

describe('GET /org/settings', () => {
  it('shows the organization, its domain and the subscription figures of its plan', async () => {
    const org = await t.createOrganization('dev', 'Contabilidade Ágil');
    const res = await t.request('GET', '/org/settings', { key: org.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      name: 'Contabilidade Ágil',
      slug: org.slug,
      storageBaseUrl: null,
      storageBaseUrlStatus: null,
      subscription: { planName: expect.any(String), planSlug: 'dev', creditsUsed: 0, creditsLimit: 500, daysLeft: 30 },
    });
    const plan = await t.service.ctx.db.query.plans.findFirst({ where: (p, { eq }) => eq(p.slug, 'dev') });
    expect(res.body.subscription.planName).toBe(plan!.name);
  });

  it('follows plan changes and the credits used', async () => {
    const org = await t.createOrganization('free', 'Plano');
    await t.request('PUT', `/admin/organizations/${org.id}/plan`, { key: t.adminKey, body: { plan: 'enterprise' } });
    await t.service.ctx.db.execute(
      // 7 credits used in the current period
      (await import('drizzle-orm')).sql`update organizations set credits_used = 7 where id = ${org.id}`,
    );
    const res = await t.request('GET', '/org/settings', { key: org.token });
    expect(res.body.subscription).toMatchObject({ planSlug: 'enterprise', creditsUsed: 7, creditsLimit: 10_000 });
  });
});

describe('PATCH /org/settings', () => {
  it('sets an https public domain as pending_verification and says which CNAME to create', async () => {
    const org = await t.createOrganization('pro', 'Marca Branca');
    const res = await setUrl(org.token, 'https://Docs.Cliente-Exemplo.com.br/nfse/');
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['message', 'status', 'storageBaseUrl']);
    expect(res.body.storageBaseUrl).toBe('https://docs.cliente-exemplo.com.br/nfse');
    expect(res.body.status).toBe('pending_verification');
    expect(res.body.message).toContain('CNAME');
    expect(res.body.message).toContain('docs.cliente-exemplo.com.br');
    expect(res.body.message).toContain(CNAME_TARGET);
    const view = await t.request('GET', '/org/settings', { key: org.token });
    expect(view.body.storageBaseUrl).toBe('https://docs.cliente-exemplo.com.br/nfse');

    // another organization is not affected
    const other = await t.createOrganization('pro', 'Outra Marca');
    expect((await t.request('GET', '/org/settings', { key: other.token })).body.storageBaseUrl).toBeNull();

    // null removes it
    const removed = await setUrl(org.token, null);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ storageBaseUrl: null, status: 'removed' });
    expect((await t.request('GET', '/org/settings', { key: org.token })).body.storageBaseUrl).toBeNull();
    const row = await t.service.ctx.db.query.organizations.findFirst({ where: (o, { eq }) => eq(o.id, org.id) });
    expect(row!.storageBaseUrlStatus).toBeNull();
  });

  it.each([
    ['http://docs.cliente.com.br', 'https'],
    ['ftp://docs.cliente.com.br', 'https'],
    ['https://localhost', 'public'],
    ['https://localhost:8443', ''],
    ['https://cdn.localhost', 'public'],
    ['https://127.0.0.1', 'IP'],
    ['https://10.1.2.3/docs', 'IP'],
    ['https://0x7f.0.0.1', 'IP'],
    ['https://2130706433', 'IP'],
    ['https://[::1]', 'IP'],
    ['https://[2001:db8::10]', 'IP'],
    ['https://[::ffff:127.0.0.1]', 'IP'],
    ['https://printer.local', 'public'],
    ['https://files.intranet.local.', 'public'],
    ['https://intranet', 'without a domain'],
    ['https://docs', 'without a domain'],
    ['https://user:pass@docs.cliente.com.br', 'credentials'],
    ['https://docs.cliente.com.br?x=1', 'query'],
    ['https://docs.cliente.com.br#frag', 'query'],
    ['https://docs.cliente.123', ''],
    ['https://docs.cliente.c0m', 'top-level'],
    ['https://-bad-.cliente.com.br', 'valid'],
    ['docs.cliente.com.br', 'absolute'],
    ['', 'absolute'],
    ['https://', 'absolute'],
  ])('refuses %s', async (url, reasonPart) => {
    const org = await t.createOrganization('pro', 'Recusa');
    const res = await setUrl(org.token, url);
    expectProblem(res, 400, 'INVALID_STORAGE_BASE_URL');
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].field).toBe('storageBaseUrl');
    expect(res.body.errors[0].message).toContain(reasonPart);
    expect((await t.request('GET', '/org/settings', { key: org.token })).body.storageBaseUrl).toBeNull();
  });

  it('requires the storageBaseUrl key and refuses other fields and types', async () => {
    const org = await t.createOrganization('pro', 'Campos');
    for (const body of [{}, { storageBaseUrl: 'https://a.com.br', name: 'x' }, { storageBaseUrl: { url: 'x' } }]) {
      const res = await t.request('PATCH', '/org/settings', { key: org.token, body });
      expectProblem(res, 400, 'VALIDATION_FAILED');
    }
    const missing = await t.request('PATCH', '/org/settings', { key: org.token, body: {} });
    expect(missing.body.errors).toEqual([{ field: 'storageBaseUrl', message: 'is required' }]);
  });
});
