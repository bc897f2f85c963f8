import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertificateStore } from '../../src/certificates/store.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject, TAKER, waitForInvoice } from '../support/onboarding.ts';

/**
 * Refuse at the door what cannot succeed (issue 9, item 7): POST /emitir and /emitir/batch on a project without a
 * valid A1 certificate answer 422 at once, spending neither a credit nor a DPS number.
 */

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const body = () => invoiceBody({ tomador: TAKER });

async function spent(orgToken: string, projectId: string) {
  const settings = await t.request('GET', '/org/settings', { key: orgToken });
  const numbering = await t.request('GET', `/org/projects/${projectId}/numeracao`, { key: orgToken });
  expect(settings.status).toBe(200);
  expect(numbering.status).toBe(200);
  return { credits: settings.body.subscription.creditsUsed as number, numbering: numbering.body };
}

describe('issuing needs a valid certificate', () => {
  it('refuses /emitir and /emitir/batch with 422 PROJECT_CERTIFICATE_MISSING, spending nothing', async () => {
    const p = await onboardProject(t, { withCertificate: false });
    const before = await spent(p.orgToken, p.projectId);
    const one = await t.request('POST', '/emitir', { key: p.apiKey, body: body() });
    expect(one.status, one.text).toBe(422);
    expect(one.body.code).toBe('PROJECT_CERTIFICATE_MISSING');
    expect(one.headers.get('content-type')).toMatch(/problem\+json/);
    const batch = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items: [body(), body()] } });
    expect(batch.status, batch.text).toBe(422);
    expect(batch.body.code).toBe('PROJECT_CERTIFICATE_MISSING');
    const idem = await t.request('POST', '/emitir', {
      key: p.apiKey,
      body: body(),
      headers: { 'idempotency-key': 'no-cert-1' },
    });
    expect(idem.status).toBe(422);
    expect(await spent(p.orgToken, p.projectId)).toEqual(before);
  });

  it('still validates the body first (400 names the field)', async () => {
    const p = await onboardProject(t, { withCertificate: false });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: { ...body(), valores: { total: -1 } } });
    expect(res.status).toBe(400);
  });

  it('refuses with 422 PROJECT_CERTIFICATE_EXPIRED once the certificate has expired, and accepts before', async () => {
    const p = await onboardProject(t);
    const ok = await t.request('POST', '/emitir', { key: p.apiKey, body: body() });
    expect(ok.status, ok.text).toBe(202);
    expect((await waitForInvoice(t, p.apiKey, ok.body.invoiceId)).status).toBe('issued');
    const before = await spent(p.orgToken, p.projectId);
    const realNow = t.service.ctx.now;
    t.service.ctx.now = () => new Date(Date.now() + 5 * 366 * 24 * 3600_000); // the business clock, 5 years on
    try {
      const res = await t.request('POST', '/emitir', { key: p.apiKey, body: body() });
      expect(res.status, res.text).toBe(422);
      expect(res.body.code).toBe('PROJECT_CERTIFICATE_EXPIRED');
      expect(res.body.detail).toMatch(/expired on \d{4}-/);
      const batch = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items: [body()] } });
      expect(batch.body.code).toBe('PROJECT_CERTIFICATE_EXPIRED');
    } finally {
      t.service.ctx.now = realNow;
    }
    expect(await spent(p.orgToken, p.projectId)).toEqual(before);
  });

  it('jobs that start together share one parse of the certificate', async () => {
    const p = await onboardProject(t);
    // a fresh store over the running service's database: nothing parsed yet
    const fresh = new CertificateStore(t.service.ctx.db, t.service.ctx.config.masterKey);
    const loaded = await Promise.all(Array.from({ length: 8 }, () => fresh.forProject(p.projectId)));
    expect(loaded.every((l) => l.ok)).toBe(true);
    const parsed = new Set(loaded.map((l) => (l.ok ? l.certificate : null)));
    expect(parsed.size).toBe(1);
    // and a later read takes the parsed one
    const later = await fresh.forProject(p.projectId);
    expect(later.ok && parsed.has(later.certificate)).toBe(true);
  });
});
