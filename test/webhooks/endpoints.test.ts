import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { expectProblem } from '../support/route-checks.ts';
import { createWebhookTenant, type WebhookTenant } from './support.ts';

/**
 * Webhook endpoint management over HTTP (spec 2.10, 4.5) on a service WITHOUT the development setting:
 * CRUD, the secret shown once and sealed at rest, rotation, validation 400s naming the field, the SSRF
 * guard at registration, tenant isolation (another project's ids are 404) and the scopes.
 */

let t: TestService;
let a: WebhookTenant;
let b: WebhookTenant;

beforeAll(async () => {
  t = await startTestService();
  [a, b] = await Promise.all([createWebhookTenant(t), createWebhookTenant(t)]);
});
afterAll(async () => {
  await t?.close();
});

const create = (key: string, body: unknown) => t.request('POST', '/webhooks/endpoints', { key, body });

describe('endpoint records', () => {
  it('creates, reads, lists, updates and deletes; the secret is returned only at creation and sealed at rest', async () => {
    const secret = 'segredo-super-secreto-0123';
    const created = await create(a.key, {
      url: 'https://hooks.example.com/nfse',
      events: ['nfse.issued', 'nfse.error', 'nfse.issued'],
      secret,
      description: 'ERP',
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      url: 'https://hooks.example.com/nfse',
      events: ['nfse.issued', 'nfse.error'],
      active: true,
      signing: true,
      secretHint: '…0123',
      previousSecretExpiresAt: null,
      description: 'ERP',
      secret,
    });
    const id = created.body.id as string;

    const one = await t.request('GET', `/webhooks/endpoints/${id}`, { key: a.key });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ...created.body, secret: undefined });
    expect(one.text).not.toContain(secret);
    const list = await t.request('GET', '/webhooks/endpoints', { key: a.key });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ page: 1, limit: 20, total: 1 });
    expect(list.body.data[0].id).toBe(id);
    expect(list.text).not.toContain(secret);

    const [row] = await t.service.ctx.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
    expect(row!.secret).not.toContain(secret);
    expect(Buffer.from(row!.secret!, 'base64').toString('latin1')).not.toContain(secret);

    const patched = await t.request('PATCH', `/webhooks/endpoints/${id}`, {
      key: a.key,
      body: { url: 'https://hooks2.example.com/x', events: ['nfse.cancelled'], active: false, description: null },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      url: 'https://hooks2.example.com/x',
      events: ['nfse.cancelled'],
      active: false,
      description: null,
      signing: true,
      previousSecretExpiresAt: null,
    });

    const rotated = await t.request('PATCH', `/webhooks/endpoints/${id}`, {
      key: a.key,
      body: { secret: 'outro-segredo-bem-longo-4567' },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secretHint).toBe('…4567');
    const grace = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(grace).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(grace).toBeLessThanOrEqual(24 * 3600_000);

    const removed = await t.request('PATCH', `/webhooks/endpoints/${id}`, { key: a.key, body: { secret: '' } });
    expect(removed.body).toMatchObject({ signing: false, secretHint: null, previousSecretExpiresAt: null });

    const deleted = await t.request('DELETE', `/webhooks/endpoints/${id}`, { key: a.key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(
      await t.request('GET', `/webhooks/endpoints/${id}`, { key: a.key }),
      404,
      'WEBHOOK_ENDPOINT_NOT_FOUND',
    );
    expectProblem(
      await t.request('DELETE', `/webhooks/endpoints/${id}`, { key: a.key }),
      404,
      'WEBHOOK_ENDPOINT_NOT_FOUND',
    );
    expect((await t.request('GET', '/webhooks/endpoints', { key: a.key })).body.pagination.total).toBe(0);
  });

  it('without a secret, or with "" or null, nothing is signed; active false is kept', async () => {
    for (const secret of [undefined, '', null]) {
      const res = await create(a.key, {
        url: 'https://hooks.example.com/plain',
        events: ['batch.completed'],
        active: false,
        ...(secret === undefined ? {} : { secret }),
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ signing: false, secretHint: null, secret: null, active: false });
      await t.request('DELETE', `/webhooks/endpoints/${res.body.id}`, { key: a.key });
    }
  });

  it('POST /test on an inactive endpoint answers 409 WEBHOOK_ENDPOINT_INACTIVE and sends nothing', async () => {
    const res = await create(a.key, { url: 'https://hooks.example.com/off', events: ['nfse.issued'], active: false });
    expect(res.status, res.text).toBe(201);
    const test = await t.request('POST', `/webhooks/endpoints/${res.body.id}/test`, { key: a.key });
    expectProblem(test, 409, 'WEBHOOK_ENDPOINT_INACTIVE');
    const history = await t.request('GET', `/webhooks/deliveries?endpointId=${res.body.id}`, { key: a.key });
    expect(history.body.pagination.total).toBe(0);
    await t.request('DELETE', `/webhooks/endpoints/${res.body.id}`, { key: a.key });
  });

  it('pages the list', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await create(a.key, { url: `https://hooks.example.com/p${i}`, events: ['nfse.issued'] })).body.id);
    }
    const page2 = await t.request('GET', '/webhooks/endpoints?limit=2&page=2', { key: a.key });
    expect(page2.body.pagination).toEqual({ page: 2, limit: 2, total: 3 });
    expect(page2.body.data).toHaveLength(1);
    expectProblem(await t.request('GET', '/webhooks/endpoints?limit=101', { key: a.key }), 400, 'INVALID_QUERY');
    for (const id of ids) await t.request('DELETE', `/webhooks/endpoints/${id}`, { key: a.key });
  });
});

describe('validation', () => {
  const url = 'https://hooks.example.com/v';
  it.each([
    ['plain http', { url: 'http://hooks.example.com/v', events: ['nfse.issued'] }, 'url', 'must use https'],
    ['not a URL', { url: 'hooks dot example', events: ['nfse.issued'] }, 'url', 'must be an absolute URL'],
    ['credentials', { url: 'https://u:p@hooks.example.com/', events: ['nfse.issued'] }, 'url', 'credentials'],
    ['missing url', { events: ['nfse.issued'] }, 'url', 'is required'],
    ['missing events', { url }, 'events', 'is required'],
    ['empty events', { url, events: [] }, 'events', 'must NOT have fewer than 1 items'],
    ['unknown event', { url, events: ['nfse.issued', 'invoice.paid'] }, 'events.1', 'must be one of nfse.issued'],
    ['test event', { url, events: ['webhook.test'] }, 'events.0', 'must be one of'],
    ['bad whsec_ secret', { url, events: ['nfse.issued'], secret: 'whsec_***' }, 'secret', 'base64'],
    ['long secret', { url, events: ['nfse.issued'], secret: 'x'.repeat(257) }, 'secret', 'must NOT have more'],
    ['unknown field', { url, events: ['nfse.issued'], retries: 9 }, 'retries', 'is not an accepted field'],
  ])('create refuses %s, naming the field', async (_name, body, field, message) => {
    const res = await create(a.key, body);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    const error = res.body.errors.find((e: { field: string }) => e.field === field);
    expect(error, JSON.stringify(res.body.errors)).toBeDefined();
    expect(error.message).toContain(message);
  });

  it('update refuses the same, naming the field, and changes nothing', async () => {
    const created = await create(a.key, { url, events: ['nfse.issued'] });
    const id = created.body.id;
    for (const [body, field] of [
      [{ url: 'http://hooks.example.com/x' }, 'url'],
      [{ events: ['nfse.issued', 'nope'] }, 'events.1'],
      [{ active: 'maybe' }, 'active'],
    ] as const) {
      const res = await t.request('PATCH', `/webhooks/endpoints/${id}`, { key: a.key, body });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    const after = await t.request('GET', `/webhooks/endpoints/${id}`, { key: a.key });
    expect(after.body).toMatchObject({ url, events: ['nfse.issued'], active: true });
    await t.request('DELETE', `/webhooks/endpoints/${id}`, { key: a.key });
  });
});

describe('SSRF guard at registration', () => {
  it.each([
    'https://127.0.0.1/hook',
    'https://10.0.0.5/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/hook',
    'https://localhost/hook',
    'https://localhost:8443/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[fe80::1]/hook',
    'https://[fc00::1]/hook',
    'https://100.64.0.1/hook',
    'https://192.168.0.10/hook',
    'https://172.16.5.4/hook',
    'https://0.0.0.0/hook',
    'https://224.0.0.1/hook',
    'https://2130706433/hook',
  ])('refuses %s', async (target) => {
    const res = await create(a.key, { url: target, events: ['nfse.issued'] });
    expectProblem(res, 400, 'WEBHOOK_URL_REFUSED');
    expect(res.body.errors).toEqual([
      {
        field: 'url',
        message: expect.stringMatching(/^must reach a public internet address; .*NFSE_WEBHOOKS_ALLOW_INSECURE=true/),
      },
    ]);
  });

  it.each(['http://hooks.example.com/hook', 'http://127.0.0.1:8080/hook', 'http://localhost/hook'])(
    'refuses plain http %s',
    async (target) => {
      const res = await create(a.key, { url: target, events: ['nfse.issued'] });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      // the refusal names the development setting that allows local receivers
      expect(res.body.errors).toEqual([
        {
          field: 'url',
          message:
            'must use https (in development, NFSE_WEBHOOKS_ALLOW_INSECURE=true allows http and receivers on this machine or a private network)',
        },
      ]);
    },
  );

  it('refuses an internal target on update too, and keeps the endpoint as it was', async () => {
    const created = await create(a.key, { url: 'https://hooks.example.com/ok', events: ['nfse.issued'] });
    const res = await t.request('PATCH', `/webhooks/endpoints/${created.body.id}`, {
      key: a.key,
      body: { url: 'https://169.254.169.254/' },
    });
    expectProblem(res, 400, 'WEBHOOK_URL_REFUSED');
    const after = await t.request('GET', `/webhooks/endpoints/${created.body.id}`, { key: a.key });
    expect(after.body.url).toBe('https://hooks.example.com/ok');
    await t.request('DELETE', `/webhooks/endpoints/${created.body.id}`, { key: a.key });
  });

  it('with NFSE_WEBHOOKS_ALLOW_INSECURE a loopback http endpoint is accepted; without it, the attempt is refused again', async () => {
    t.service.ctx.config.webhooksAllowInsecure = true;
    let id: string;
    try {
      const res = await create(a.key, { url: 'http://127.0.0.1:9/hook', events: ['nfse.issued'] });
      expect(res.status, res.text).toBe(201);
      id = res.body.id;
    } finally {
      t.service.ctx.config.webhooksAllowInsecure = false;
    }
    const test = await t.request('POST', `/webhooks/endpoints/${id}/test`, { key: a.key });
    expect(test.status, test.text).toBe(200);
    expect(test.body).toMatchObject({ success: false, statusCode: null });
    expect(test.body.error).toMatch(
      /^refused: the URL must use https \(in development, NFSE_WEBHOOKS_ALLOW_INSECURE=true/,
    );
    expect(test.body.delivery).toMatchObject({ status: 'failed', attemptCount: 1, event: 'webhook.test' });
    await t.request('DELETE', `/webhooks/endpoints/${id}`, { key: a.key });
  });
});

describe('tenancy and scopes', () => {
  it("another project's endpoint and deliveries are 404, like unknown ids, and stay untouched", async () => {
    const created = await create(a.key, { url: 'https://hooks.example.com/mine', events: ['nfse.issued'] });
    const id = created.body.id as string;
    // a test delivery of a's endpoint (the name does not resolve here: a failed attempt, recorded)
    const test = await t.request('POST', `/webhooks/endpoints/${id}/test`, { key: a.key });
    expect(test.status).toBe(200);
    const deliveryId = test.body.delivery.id as string;

    for (const probe of [id, randomUUID(), 'not-a-uuid']) {
      for (const [method, path, body] of [
        ['GET', `/webhooks/endpoints/${probe}`, undefined],
        ['PATCH', `/webhooks/endpoints/${probe}`, { active: false }],
        ['DELETE', `/webhooks/endpoints/${probe}`, undefined],
        ['POST', `/webhooks/endpoints/${probe}/test`, undefined],
      ] as const) {
        const res = await t.request(method, path, { key: b.key, body });
        expectProblem(res, 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
        expect(res.body.detail).toBe('Webhook endpoint not found');
      }
    }
    for (const probe of [deliveryId, randomUUID(), 'nope']) {
      expectProblem(
        await t.request('GET', `/webhooks/deliveries/${probe}`, { key: b.key }),
        404,
        'WEBHOOK_DELIVERY_NOT_FOUND',
      );
      expectProblem(
        await t.request('POST', `/webhooks/deliveries/${probe}/retry`, { key: b.key }),
        404,
        'WEBHOOK_DELIVERY_NOT_FOUND',
      );
    }
    const foreignList = await t.request('GET', `/webhooks/deliveries?endpointId=${id}`, { key: b.key });
    expect(foreignList.body.pagination.total).toBe(0);
    expect((await t.request('GET', '/webhooks/endpoints', { key: b.key })).body.pagination.total).toBe(0);

    const mine = await t.request('GET', `/webhooks/endpoints/${id}`, { key: a.key });
    expect(mine.body).toMatchObject({ active: true, url: 'https://hooks.example.com/mine' });
    const own = await t.request('GET', `/webhooks/deliveries/${deliveryId}`, { key: a.key });
    expect(own.status).toBe(200);
    expect(own.body.attempts).toHaveLength(1);
    await t.request('DELETE', `/webhooks/endpoints/${id}`, { key: a.key });
  });

  const routes = [
    ['POST', '/webhooks/endpoints', 'emit'],
    ['GET', '/webhooks/endpoints', 'query'],
    ['GET', '/webhooks/endpoints/{id}', 'query'],
    ['PATCH', '/webhooks/endpoints/{id}', 'emit'],
    ['DELETE', '/webhooks/endpoints/{id}', 'emit'],
    ['POST', '/webhooks/endpoints/{id}/test', 'emit'],
    ['GET', '/webhooks/deliveries', 'query'],
    ['GET', '/webhooks/deliveries/{id}', 'query'],
    ['POST', '/webhooks/deliveries/{id}/retry', 'emit'],
  ] as const;

  it.each(routes)(
    '%s %s: 401 without a key, 403 for an org token and without the scope %s',
    async (method, path, scope) => {
      const url = path.replace('{id}', randomUUID());
      const body =
        method === 'POST' || method === 'PATCH'
          ? { url: 'https://hooks.example.com/s', events: ['nfse.issued'] }
          : undefined;
      expectProblem(await t.request(method, url, { body }), 401, 'UNAUTHENTICATED');
      expectProblem(await t.request(method, url, { key: `svc_${'1'.repeat(40)}`, body }), 401, 'UNAUTHENTICATED');
      expectProblem(await t.request(method, url, { key: a.orgToken, body }), 403, 'WRONG_KEY_KIND');
      const lacking = scope === 'emit' ? a.queryKey : a.emitKey;
      const refused = await t.request(method, url, { key: lacking, body });
      expectProblem(refused, 403, 'INSUFFICIENT_SCOPE');
      expect(refused.body.detail).toContain(scope);
      const allowed = await t.request(method, url, { key: scope === 'emit' ? a.emitKey : a.queryKey, body });
      expect([401, 403], allowed.text).not.toContain(allowed.status);
      expect(allowed.status).toBeLessThan(500);
      if (allowed.status === 201) await t.request('DELETE', `/webhooks/endpoints/${allowed.body.id}`, { key: a.key });
    },
  );

  it('every webhook route is in the OpenAPI document, with its scope, tag and response schemas', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    for (const [method, path, scope] of routes) {
      const op = res.body.paths[`/api/v1${path}`]?.[method.toLowerCase()];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.summary).toBeTruthy();
      expect(op.description.startsWith(`Needs the project key scope \`${scope}\`.`), op.description).toBe(true);
      expect(op.tags).toEqual(['webhooks']);
      const success = Object.keys(op.responses).find((code) => code.startsWith('2'))!;
      expect(success, `${method} ${path}`).toBeDefined();
      if (success !== '204') expect(op.responses[success].content['application/json'].schema).toBeDefined();
      expect(op.responses['403']).toBeDefined();
    }
    // the answer is a named component of the document (`$ref`)
    const ref: string =
      res.body.paths['/api/v1/webhooks/endpoints/{id}'].get.responses['200'].content['application/json'].schema.$ref;
    const record = res.body.components.schemas[ref.replace('#/components/schemas/', '')];
    expect(Object.keys(record.properties)).toEqual(
      expect.arrayContaining(['id', 'url', 'events', 'active', 'signing', 'secretHint', 'previousSecretExpiresAt']),
    );
    expect(record.properties.secret).toBeUndefined();
  });
});
