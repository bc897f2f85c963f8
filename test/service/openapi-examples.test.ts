import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { startTestService, type TestService } from '../support/harness.ts';

/**
 * The examples of the served OpenAPI document are requests the service really accepts and answers it really gives:
 * each request example (kept next to its route's schema) is sent as it stands, in the order a customer would, and
 * the answer has the status and the fields of the documented response example (the same values where they do not
 * depend on ids or clocks).
 */

type Json = Record<string, unknown>;
let t: TestService;
let doc: { paths: Record<string, Record<string, Json>> };
beforeAll(async () => {
  t = await startTestService();
  doc = (await t.request('GET', '/openapi.json')).body;
});
afterAll(async () => {
  await t?.close();
});

interface Operation {
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
}
const operation = (method: string, path: string) => doc.paths[`/api/v1${path}`]![method] as unknown as Operation;
/** The request example of an operation. */
const requestExample = (method: string, path: string) =>
  operation(method, path).requestBody!.content['application/json']!.example as Json;
/** The response example of an operation's status. */
const responseExample = (method: string, path: string, status: number) =>
  operation(method, path).responses[status]!.content!['application/json']!.example as Json;
const keysOf = (value: unknown) => Object.keys(value as object).sort();

/** Polls an invoice's status until it leaves queued/processing. */
async function settled(key: string, id: string): Promise<Json> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await t.request('GET', `/invoices/${id}/status`, { key });
    expect(res.status).toBe(200);
    if (!['queued', 'processing'].includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`invoice ${id} still ${res.body.status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe('the examples of the OpenAPI document', () => {
  it('are accepted and answered as documented, from the operator to the cancellation of a note', async () => {
    // the operator: organization, token, member, plan, limits
    const orgRes = await t.request('POST', '/admin/organizations', {
      key: t.adminKey,
      body: requestExample('post', '/admin/organizations'),
    });
    expect(orgRes.status, orgRes.text).toBe(201);
    const orgExample = responseExample('post', '/admin/organizations', 201);
    expect(keysOf(orgRes.body)).toEqual(keysOf(orgExample));
    expect(orgRes.body).toMatchObject({ name: orgExample.name, slug: orgExample.slug, plan: orgExample.plan });
    const orgId: string = orgRes.body.id;
    const orgToken: string = orgRes.body.token;

    const tokenRes = await t.request('POST', `/admin/organizations/${orgId}/tokens`, {
      key: t.adminKey,
      body: requestExample('post', '/admin/organizations/{id}/tokens'),
    });
    expect(tokenRes.status, tokenRes.text).toBe(201);
    const tokenExample = responseExample('post', '/admin/organizations/{id}/tokens', 201);
    expect(keysOf(tokenRes.body)).toEqual(keysOf(tokenExample));
    expect(tokenRes.body.scopes).toEqual(tokenExample.scopes);

    const memberRes = await t.request('POST', `/admin/organizations/${orgId}/members`, {
      key: t.adminKey,
      body: requestExample('post', '/admin/organizations/{id}/members'),
    });
    expect(memberRes.status, memberRes.text).toBe(201);
    expect(memberRes.body.email).toBe(responseExample('post', '/admin/organizations/{id}/members', 201).email);

    const planRes = await t.request('PUT', `/admin/organizations/${orgId}/plan`, {
      key: t.adminKey,
      body: requestExample('put', '/admin/organizations/{id}/plan'),
    });
    expect(planRes.status, planRes.text).toBe(200);
    expect(planRes.body).toEqual({ ...responseExample('put', '/admin/organizations/{id}/plan', 200), id: orgId });

    const limitsRes = await t.request('PUT', `/admin/organizations/${orgId}/limits`, {
      key: t.adminKey,
      body: requestExample('put', '/admin/organizations/{id}/limits'),
    });
    expect(limitsRes.status, limitsRes.text).toBe(200);
    expect(limitsRes.body).toEqual({ ...responseExample('put', '/admin/organizations/{id}/limits', 200), id: orgId });

    // the organization: project, its update and numbering, certificate, key, settings
    const projectRes = await t.request('POST', '/org/projects', {
      key: orgToken,
      body: requestExample('post', '/org/projects'),
    });
    expect(projectRes.status, projectRes.text).toBe(201);
    const projectExample = responseExample('post', '/org/projects', 201);
    const { id: projectId, createdAt: _created, ...projectFields } = projectRes.body;
    const { id: _id, createdAt: _exampleCreated, ...exampleFields } = projectExample;
    expect(projectFields).toEqual(exampleFields);

    // the shared Problem example is the refusal of a CNPJ with wrong check digits
    const problemExample = (doc as unknown as { components: { schemas: { Problem: { examples: Json[] } } } }).components
      .schemas.Problem.examples[0]!;
    const refused = await t.request('POST', '/org/projects', {
      key: orgToken,
      body: { ...requestExample('post', '/org/projects'), cnpj: '11.222.333/0001-80' },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body).toEqual({ ...problemExample, requestId: refused.body.requestId });

    const updateRes = await t.request('PATCH', `/org/projects/${projectId}`, {
      key: orgToken,
      body: requestExample('patch', '/org/projects/{id}'),
    });
    expect(updateRes.status, updateRes.text).toBe(200);
    expect(updateRes.body).toEqual({ ...responseExample('patch', '/org/projects/{id}', 200), id: projectId });

    const numberingRes = await t.request('PATCH', `/org/projects/${projectId}/numeracao`, {
      key: orgToken,
      body: requestExample('patch', '/org/projects/{id}/numeracao'),
    });
    expect(numberingRes.status, numberingRes.text).toBe(200);
    expect(numberingRes.body).toEqual(responseExample('patch', '/org/projects/{id}/numeracao', 200));

    const a1 = createA1Certificate({
      cnpj: projectRes.body.cnpj,
      name: projectRes.body.razaoSocial,
      password: 'S3nh@DoCertificado',
    });
    const form = new FormData();
    form.set('password', a1.password);
    form.set('file', new Blob([new Uint8Array(a1.pfx)], { type: 'application/x-pkcs12' }), 'horizonte-ecnpj-a1.pfx');
    const certRes = await t.request('POST', `/org/projects/${projectId}/certificate`, { key: orgToken, rawBody: form });
    expect(certRes.status, certRes.text).toBe(201);
    expect(keysOf(certRes.body)).toEqual(keysOf(responseExample('post', '/org/projects/{id}/certificate', 201)));

    const keyRes = await t.request('POST', `/org/projects/${projectId}/api-keys`, {
      key: orgToken,
      body: requestExample('post', '/org/projects/{id}/api-keys'),
    });
    expect(keyRes.status, keyRes.text).toBe(201);
    const keyExample = responseExample('post', '/org/projects/{id}/api-keys', 201);
    expect(keysOf(keyRes.body)).toEqual(keysOf(keyExample));
    expect(keyRes.body).toMatchObject({
      name: keyExample.name,
      scopes: keyExample.scopes,
      rateLimitPerMinute: keyExample.rateLimitPerMinute,
      warnings: keyExample.warnings,
    });
    expect(keyRes.body.key).toMatch(/^svc_[0-9a-f]{40}$/);
    const projectKey: string = keyRes.body.key;

    const settingsRes = await t.request('PATCH', '/org/settings', {
      key: orgToken,
      body: requestExample('patch', '/org/settings'),
    });
    expect(settingsRes.status, settingsRes.text).toBe(200);
    const settingsExample = responseExample('patch', '/org/settings', 200);
    expect(settingsRes.body).toMatchObject({
      storageBaseUrl: settingsExample.storageBaseUrl,
      status: settingsExample.status,
    });

    // the project key: the coverage lookup, one note, a batch, the cancellation
    const coverage = await t.request('GET', '/cobertura/cidades?q=4106902', { key: projectKey });
    expect(coverage.status, coverage.text).toBe(200);
    const coverageExample = responseExample('get', '/cobertura/cidades', 200);
    expect(coverage.body.data).toEqual(coverageExample.data);

    const issueRes = await t.request('POST', '/emitir', { key: projectKey, body: requestExample('post', '/emitir') });
    expect(issueRes.status, issueRes.text).toBe(202);
    const issueExample = responseExample('post', '/emitir', 202);
    const invoiceId: string = issueRes.body.invoiceId;
    expect(issueRes.body).toEqual({
      ...issueExample,
      invoiceId,
      pollUrl: `/api/v1/invoices/${invoiceId}/status`,
    });

    const batchRes = await t.request('POST', '/emitir/batch', {
      key: projectKey,
      body: requestExample('post', '/emitir/batch'),
    });
    expect(batchRes.status, batchRes.text).toBe(202);
    const batchExample = responseExample('post', '/emitir/batch', 202) as { items: Json[] };
    expect(batchRes.body.items.map((i: Json) => i.warnings)).toEqual(batchExample.items.map((i) => i.warnings));

    const status = await settled(projectKey, invoiceId);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    const statusExample = responseExample('get', '/invoices/{id}/status', 200);
    // the documents may not be stored yet: their URLs appear with them
    const { xmlUrl: _xml, pdfUrl: _pdf, ...always } = statusExample;
    expect(keysOf(status)).toEqual(expect.arrayContaining(keysOf(always)));
    expect(status).toMatchObject({ referencia: statusExample.referencia, warnings: statusExample.warnings });

    const cancelRes = await t.request('POST', '/cancelar', {
      key: projectKey,
      body: { ...requestExample('post', '/cancelar'), invoiceId },
    });
    expect(cancelRes.status, cancelRes.text).toBe(202);
    const cancelExample = responseExample('post', '/cancelar', 202) as { cancellation: Json };
    expect(keysOf(cancelRes.body)).toEqual(keysOf(cancelExample));
    expect(cancelRes.body).toMatchObject({ status: 'cancelling', cancellation: { status: 'requested' } });
  });
});
