import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyKeys, organizations, rateLimitCounters } from '../../src/db/schema.ts';
import { runHousekeeping } from '../../src/wiring/workers.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';
import { hasTool } from '../support/tools.ts';

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t);
});
afterAll(async () => {
  await t?.close();
});

async function fetchXml(invoiceId: string, key = p.apiKey, type = 'emission') {
  const res = await t.request('GET', `/invoices/${invoiceId}/xml?type=${type}`, { key });
  if (res.status === 302) {
    const location = res.headers.get('location')!;
    const file = await fetch(location);
    return { status: 200, text: await file.text(), contentType: file.headers.get('content-type') };
  }
  return { status: res.status, text: res.text, contentType: res.headers.get('content-type'), body: res.body };
}

function verifyWithXmlsec(xml: string, idElement: string, certPem: string) {
  const dir = mkdtempSync(join(tmpdir(), 'xmlsec-'));
  try {
    writeFileSync(join(dir, 'doc.xml'), xml);
    writeFileSync(join(dir, 'cert.pem'), certPem);
    return spawnSync(
      'xmlsec1',
      ['--verify', '--id-attr:Id', idElement, '--trusted-pem', join(dir, 'cert.pem'), join(dir, 'doc.xml')],
      { encoding: 'utf8' },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('issuing through the national environment (sandbox), as a user', () => {
  it('accepts, issues within 10 s and serves the NFS-e whose DPS is XSD-valid and signed', async () => {
    const res = await t.request('POST', '/emitir', {
      key: p.apiKey,
      body: invoiceBody({ referencia: 'pedido-42' }),
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ queued: true, status: 'queued' });
    expect(res.body.pollUrl).toBe(`/api/v1/invoices/${res.body.invoiceId}/status`);

    const started = Date.now();
    const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId, 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(status.status).toBe('issued');
    expect(status.chNFSe).toMatch(/^\d{50}$/);
    expect(status.numeroNfse).toMatch(/^\d+$/);
    expect(status.ambiente).toBe('homologacao');
    expect(status.referencia).toBe('pedido-42');
    expect(new Date(status.emittedAt).getTime()).toBeGreaterThan(0);

    const xml = await fetchXml(res.body.invoiceId);
    expect(xml.status).toBe(200);
    expect(xml.contentType).toContain('xml');
    expect(xml.text).toContain(`Id="NFS${status.chNFSe}"`);
    expect(validateXml('NFSe', xml.text)).toEqual({ ok: true });

    const dps = /<DPS[\s\S]*<\/DPS>/.exec(xml.text)?.[0];
    expect(dps).toBeTruthy();
    expect(validateXml('DPS', dps!)).toEqual({ ok: true });
    expect(dps).toContain('<CNPJ>11444777000161</CNPJ>');
    if (hasTool('xmlsec1')) {
      const verified = verifyWithXmlsec(dps!, 'infDPS', p.certificatePem);
      expect(verified.stderr).toContain('OK');
      expect(verified.status).toBe(0);
    }
  });

  it('answers 400 naming each bad field', async () => {
    const res = await t.request('POST', '/emitir', {
      key: p.apiKey,
      body: { tomador: { cnpj: '11444777000162' }, servico: {}, valores: { total: 'abc' } },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(
      expect.arrayContaining(['tomador.nome', 'servico.descricao', 'valores.total', 'valores.aliquotaIss']),
    );
    expect(res.body.code).toBe('VALIDATION_FAILED');

    const badCnpj = await t.request('POST', '/emitir', {
      key: p.apiKey,
      body: invoiceBody({ tomador: { ...invoiceBody().tomador, cnpj: '11444777000162' } }),
    });
    expect(badCnpj.status).toBe(400);
    expect(badCnpj.body.errors.map((e: { field: string }) => e.field)).toContain('tomador.cnpj');

    const malformed = await t.request('POST', '/emitir', {
      key: p.apiKey,
      rawBody: '{"tomador": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('MALFORMED_JSON');

    const huge = await t.request('POST', '/emitir', {
      key: p.apiKey,
      rawBody: JSON.stringify(invoiceBody()).replace('1500.5', '1e999'),
      headers: { 'content-type': 'application/json' },
    });
    expect(huge.status).toBe(400);
    const longPath = await t.request('GET', `/invoices/${'x'.repeat(5000)}/status`, { key: p.apiKey });
    expect(longPath.status).toBeLessThan(500);
    expect(longPath.status).toBeGreaterThanOrEqual(400);
  });

  it('records a business rejection of the government as status error with the official code', async () => {
    const other = await onboardProject(t, { cnpj: '11222333000262', project: { serieNfse: '50000' } });
    const res = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    expect(res.status).toBe(202);
    const status = await waitForInvoice(t, other.apiKey, res.body.invoiceId);
    expect(status.status).toBe('error');
    expect(status.errorCode).toBe('E0010');
    expect(status.errors[0]).toMatchObject({ Codigo: 'E0010' });
    expect(status.numeroDps).toBe(1);

    // the rejected DPS keeps its number: the next invoice takes the next one
    const next = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    const nextStatus = await waitForInvoice(t, other.apiKey, next.body.invoiceId);
    expect(nextStatus.numeroDps).toBe(2);

    const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml`, { key: other.apiKey });
    expect(xml.status).toBe(409);
    expect(xml.body.code).toBe('INVOICE_NOT_ISSUED');
  });

  it('replays an Idempotency-Key with the same body and refuses it with another body', async () => {
    const body = invoiceBody({ referencia: 'idem-1' });
    const first = await t.request('POST', '/emitir', { key: p.apiKey, body, headers: { 'idempotency-key': 'k-1' } });
    const again = await t.request('POST', '/emitir', { key: p.apiKey, body, headers: { 'idempotency-key': 'k-1' } });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.invoiceId).toBe(first.body.invoiceId);
    const different = await t.request('POST', '/emitir', {
      key: p.apiKey,
      body: invoiceBody({ referencia: 'idem-2' }),
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(different.status).toBe(409);
    expect(different.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('counts credits and refuses past a hard limit with 402', async () => {
    const free = await onboardProject(t, { plan: 'free', cnpj: '11222333000343' });
    await t.service.ctx.db.update(organizations).set({ creditsUsed: 49 }).where(eq(organizations.id, free.orgId));
    const ok = await t.request('POST', '/emitir', { key: free.apiKey, body: invoiceBody() });
    expect(ok.status).toBe(202);
    const refused = await t.request('POST', '/emitir', { key: free.apiKey, body: invoiceBody() });
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('PAYMENT_REQUIRED_CREDITS_EXHAUSTED');
    const settings = await t.request('GET', '/org/settings', { key: free.orgToken });
    expect(settings.body.subscription.creditsUsed).toBe(50);
    expect(settings.body.subscription.creditsLimit).toBe(50);
  });

  it('isolates invoices between projects and checks scopes', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    const other = await onboardProject(t, { cnpj: '11222333000424' });
    const foreign = await t.request('GET', `/invoices/${res.body.invoiceId}/status`, { key: other.apiKey });
    expect(foreign.status).toBe(404);
    const unknown = await t.request('GET', '/invoices/00000000-0000-4000-8000-000000000000/status', { key: p.apiKey });
    expect(unknown.status).toBe(404);
    const noKey = await t.request('POST', '/emitir', { body: invoiceBody() });
    expect(noKey.status).toBe(401);
    const orgToken = await t.request('POST', '/emitir', { key: p.orgToken, body: invoiceBody() });
    expect(orgToken.status).toBe(403);
    expect(orgToken.body.code).toBe('WRONG_KEY_KIND');
    const queryOnly = await t.request('POST', `/org/projects/${p.projectId}/api-keys`, {
      key: p.orgToken,
      body: { name: 'readonly', scopes: ['query'] },
    });
    const refused = await t.request('POST', '/emitir', { key: queryOnly.body.key, body: invoiceBody() });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('housekeeping drops expired idempotency keys and closed rate-limit windows, keeping live ones', async () => {
    const db = t.service.ctx.db;
    const old = new Date(Date.now() - 72 * 3600_000);
    await db.insert(idempotencyKeys).values([
      { projectId: p.projectId, key: 'old-key', requestHash: 'x', statusCode: 202, response: {}, createdAt: old },
      { projectId: p.projectId, key: 'fresh-key', requestHash: 'x', statusCode: 202, response: {} },
    ]);
    await db.insert(rateLimitCounters).values([
      { bucket: 'test:old', windowStart: old, count: 1 },
      { bucket: 'test:now', windowStart: new Date(), count: 1 },
    ]);
    await runHousekeeping(t.service.ctx);
    const keys = (await db.select({ key: idempotencyKeys.key }).from(idempotencyKeys)).map((r) => r.key);
    expect(keys).toContain('fresh-key');
    expect(keys).not.toContain('old-key');
    const buckets = (await db.select({ b: rateLimitCounters.bucket }).from(rateLimitCounters)).map((r) => r.b);
    expect(buckets).toContain('test:now');
    expect(buckets).not.toContain('test:old');
  });
});
