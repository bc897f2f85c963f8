import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/access/keys.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { expectProblem, projectBody } from '../support/route-checks.ts';

let t: TestService;
let token: string;
let projectId: string;

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: '100000' });
  token = (await t.createOrganization('pro')).token;
  projectId = (await t.request('POST', '/org/projects', { key: token, body: projectBody() })).body.id;
});
afterAll(async () => {
  await t?.close();
});

const createKey = (body: unknown, id = projectId) =>
  t.request('POST', `/org/projects/${id}/api-keys`, { key: token, body });
const listKeys = (id = projectId) => t.request('GET', `/org/projects/${id}/api-keys`, { key: token });
const status = (key: string) => t.request('GET', `/invoices/${randomUUID()}/status`, { key });

describe('POST /org/projects/{id}/api-keys', () => {
  it('creates a key with every scope and 60/min by default; the full key only in this response', async () => {
    const res = await createKey({ name: 'Produção' });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      ['id', 'name', 'key', 'keyPrefix', 'scopes', 'rateLimitPerMinute', 'createdAt', 'warnings'].sort(),
    );
    expect(res.body.warnings).toEqual([]);
    expect(res.body).toMatchObject({ name: 'Produção', scopes: ['emit', 'cancel', 'query'], rateLimitPerMinute: 60 });
    expect(res.body.key).toMatch(/^svc_[0-9a-f]{40}$/);
    expect(res.body.key.startsWith('svc_org_')).toBe(false);
    expect(res.body.key.startsWith(res.body.keyPrefix)).toBe(true);
    expect(res.body.keyPrefix.length).toBeLessThan(res.body.key.length / 2);

    // stored as a SHA-256 hash: the plaintext is nowhere in the row
    const row = await t.service.ctx.db.query.apiKeys.findFirst({ where: (k, { eq }) => eq(k.id, res.body.id) });
    expect(row!.keyHash).toBe(hashKey(res.body.key));
    expect(JSON.stringify(row)).not.toContain(res.body.key);

    // the key authenticates on project routes at once
    expectProblem(await status(res.body.key), 404, 'INVOICE_NOT_FOUND');
  });

  it('honours scopes and rateLimitPerMinute', async () => {
    const res = await createKey({ name: 'só consulta', scopes: ['query'], rateLimitPerMinute: 1_000_000 });
    expect(res.status, res.text).toBe(201);
    expect(res.body.scopes).toEqual(['query']);
    // above the plan's ceiling (pro: 1200): capped, and told (test/org/key-limits.test.ts covers the ceilings)
    expect(res.body.rateLimitPerMinute).toBe(1200);
    expect(res.body.warnings.map((w: { code: string }) => w.code)).toEqual(['RATE_LIMIT_CAPPED']);
    expectProblem(await status(res.body.key), 404, 'INVOICE_NOT_FOUND');

    const emitOnly = await createKey({ name: 'só emissão', scopes: ['emit'] });
    expectProblem(await status(emitOnly.body.key), 403, 'INSUFFICIENT_SCOPE');
  });

  it('enforces the per-key rate limit on project routes (429 with Retry-After)', async () => {
    const res = await createKey({ name: 'lenta', rateLimitPerMinute: 2 });
    const answers: number[] = [];
    let limited: Awaited<ReturnType<typeof status>> | undefined;
    for (let i = 0; i < 6 && !limited; i++) {
      const r = await status(res.body.key);
      answers.push(r.status);
      if (r.status === 429) limited = r;
    }
    expect(limited, `answers ${answers}`).toBeDefined();
    expectProblem(limited!, 429, 'RATE_LIMITED');
    const retryAfter = Number(limited!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 'k', scopes: ['admin'] }, 'scopes.0'],
    [{ name: 'k', scopes: [] }, 'scopes'],
    [{ name: 'k', scopes: ['emit', 'emit'] }, 'scopes'],
    [{ name: 'k', scopes: 'emit,cancel' }, 'scopes.0'],
    [{ name: 'k', rateLimitPerMinute: 0 }, 'rateLimitPerMinute'],
    [{ name: 'k', rateLimitPerMinute: 1_000_001 }, 'rateLimitPerMinute'],
    [{ name: 'k', rateLimitPerMinute: 2.5 }, 'rateLimitPerMinute'],
    [{ name: 'k', key: 'svc_mine' }, 'key'],
  ])('refuses %j with a 400 naming %s', async (body, field) => {
    const res = await createKey(body);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });
});

describe('GET and DELETE /org/projects/{id}/api-keys', () => {
  it('lists every key without the key itself, revoked ones with active=false, and records lastUsedAt', async () => {
    const id = (await t.request('POST', '/org/projects', { key: token, body: projectBody() })).body.id;
    const a = await createKey({ name: 'a', scopes: ['emit', 'query'], rateLimitPerMinute: 10 }, id);
    const b = await createKey({ name: 'b' }, id);
    expectProblem(await status(a.body.key), 404, 'INVOICE_NOT_FOUND');

    const revoke = await t.request('DELETE', `/org/projects/${id}/api-keys/${b.body.id}`, { key: token });
    expect(revoke.status).toBe(200);
    expect(revoke.body).toEqual({ revoked: true, id: b.body.id });

    let list = await listKeys(id);
    for (let i = 0; i < 50 && !list.body.data.find((k: { id: string }) => k.id === a.body.id).lastUsedAt; i++) {
      await new Promise((r) => setTimeout(r, 50));
      list = await listKeys(id);
    }
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(2);
    for (const k of list.body.data) {
      expect(Object.keys(k).sort()).toEqual(
        ['id', 'name', 'keyPrefix', 'scopes', 'rateLimitPerMinute', 'active', 'lastUsedAt', 'createdAt'].sort(),
      );
    }
    const listedA = list.body.data.find((k: { id: string }) => k.id === a.body.id);
    const listedB = list.body.data.find((k: { id: string }) => k.id === b.body.id);
    expect(listedA).toMatchObject({
      name: 'a',
      keyPrefix: a.body.keyPrefix,
      scopes: ['emit', 'query'],
      rateLimitPerMinute: 10,
      active: true,
    });
    expect(typeof listedA.lastUsedAt).toBe('string');
    expect(listedB).toMatchObject({ name: 'b', active: false, lastUsedAt: null });
    expect(list.text).not.toContain(a.body.key);
    expect(list.text).not.toContain(b.body.key);
  });

  it('revocation is effective immediately; a second revoke and foreign key ids are 404', async () => {
    const key = await createKey({ name: 'temporária' });
    expectProblem(await status(key.body.key), 404, 'INVOICE_NOT_FOUND');
    expect(
      (await t.request('DELETE', `/org/projects/${projectId}/api-keys/${key.body.id}`, { key: token })).status,
    ).toBe(200);
    expectProblem(await status(key.body.key), 401, 'UNAUTHENTICATED');
    expectProblem(
      await t.request('DELETE', `/org/projects/${projectId}/api-keys/${key.body.id}`, { key: token }),
      404,
      'NOT_FOUND',
    );

    // a key of another project of the same organization cannot be revoked through this project
    const other = (await t.request('POST', '/org/projects', { key: token, body: projectBody() })).body.id;
    const otherKey = await createKey({ name: 'outra' }, other);
    expectProblem(
      await t.request('DELETE', `/org/projects/${projectId}/api-keys/${otherKey.body.id}`, { key: token }),
      404,
      'NOT_FOUND',
    );
    expectProblem(await status(otherKey.body.key), 404, 'INVOICE_NOT_FOUND');
    for (const keyId of [randomUUID(), 'nope']) {
      expectProblem(
        await t.request('DELETE', `/org/projects/${projectId}/api-keys/${keyId}`, { key: token }),
        404,
        'NOT_FOUND',
      );
    }
  });

  it('answers 404 for the keys of a deleted project', async () => {
    const id = (await t.request('POST', '/org/projects', { key: token, body: projectBody() })).body.id;
    const key = await createKey({ name: 'k' }, id);
    await t.request('DELETE', `/org/projects/${id}`, { key: token });
    expectProblem(await createKey({ name: 'k2' }, id), 404, 'PROJECT_NOT_FOUND');
    expectProblem(await listKeys(id), 404, 'PROJECT_NOT_FOUND');
    expectProblem(
      await t.request('DELETE', `/org/projects/${id}/api-keys/${key.body.id}`, { key: token }),
      404,
      'PROJECT_NOT_FOUND',
    );
  });
});
