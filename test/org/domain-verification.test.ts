import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, waitForStatus } from '../documents-flow/support.ts';
import { type DnsServer, startDnsServer } from '../support/dns-server.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, TAKER } from '../support/onboarding.ts';

/**
 * The white-label domain is verified before use (issue 9, item 9): the service resolves the domain's CNAME through
 * the DNS server of NFSE_DNS_SERVER, here a real UDP DNS server of the test (test/support/dns-server.ts).
 */

const TARGET = 'docs.nfse-service.example.com';
let dns: DnsServer;
let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestService({
    NFSE_DNS_SERVER: dns.address,
    NFSE_CNAME_TARGET: TARGET,
    NFSE_DOMAIN_VERIFICATION_RETRY_SECONDS: '1',
    NFSE_TEST_JOB_RETRY_LIMIT: '1',
    // the checks below poll GET /org/settings every 100 ms with one organization token: on a loaded machine that
    // is more than the default 120 requests a minute
    NFSE_ORG_RATE_LIMIT: '6000',
  });
  p = await onboardProject(t, { rateLimitPerMinute: 6000 });
});
afterAll(async () => {
  await t?.close();
  await dns?.close();
});

const settings = async () => (await t.request('GET', '/org/settings', { key: p.orgToken })).body;
const setDomain = (storageBaseUrl: string | null) =>
  t.request('PATCH', '/org/settings', { key: p.orgToken, body: { storageBaseUrl } });
const complete = (s: { documentStatus: string | null }) => s.documentStatus === 'complete';

async function issuedDocuments() {
  const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ tomador: TAKER }) });
  expect(res.status, res.text).toBe(202);
  return waitForStatus(t, p.apiKey, res.body.invoiceId, complete, 30_000);
}

describe('white-label domain verification', () => {
  it('keeps the current base while pending, then moves to active once the CNAME resolves to the target', async () => {
    const host = 'docs.notas-acme.com.br';
    const set = await setDomain(`https://${host}`);
    expect(set.status, set.text).toBe(200);
    expect(set.body.status).toBe('pending_verification');
    expect(set.body.message).toContain(TARGET);

    // no CNAME yet: checked (through our DNS server), still pending, with the reason
    const pending = await waitFor('a first check', async () => {
      const s = await settings();
      return s.storageBaseUrlStatus?.checkedAt ? s : undefined;
    });
    expect(dns.queries).toContain(host);
    expect(pending.storageBaseUrl).toBe(`https://${host}`);
    expect(pending.storageBaseUrlStatus).toMatchObject({
      status: 'pending_verification',
      cnameTarget: TARGET,
      activeBaseUrl: null,
    });
    expect(pending.storageBaseUrlStatus.reason).toMatch(/no CNAME/);
    const before = await issuedDocuments();
    expect(before.xmlUrl.startsWith(`${t.baseUrl}/files/`)).toBe(true);

    // a CNAME to somewhere else: still pending, the reason names it
    dns.set(host, { cname: 'elsewhere.example.net' });
    const wrong = await waitFor('the wrong CNAME', async () => {
      const s = await settings();
      return /elsewhere\.example\.net/.test(s.storageBaseUrlStatus?.reason ?? '') ? s : undefined;
    });
    expect(wrong.storageBaseUrlStatus.status).toBe('pending_verification');

    // the right CNAME: active, and document URLs move to the domain
    dns.set(host, { cname: `${TARGET}.` });
    const active = await waitFor('the domain to be verified', async () => {
      const s = await settings();
      return s.storageBaseUrlStatus?.status === 'active' ? s : undefined;
    });
    expect(active.storageBaseUrlStatus).toMatchObject({ reason: null, activeBaseUrl: `https://${host}` });
    const after = await issuedDocuments();
    expect(after.xmlUrl.startsWith(`https://${host}/p/`)).toBe(true);
    const pdf = await t.request('GET', `/invoices/${after.invoiceId}/pdf`, { key: p.apiKey });
    expect(pdf.headers.get('location')).toBe(after.pdfUrl);

    // a new domain is pending again; until it is verified the verified one stays in use
    const next = 'notas.acme-novo.com.br';
    expect((await setDomain(`https://${next}`)).body.status).toBe('pending_verification');
    const meanwhile = await issuedDocuments();
    expect(meanwhile.xmlUrl.startsWith(`https://${host}/p/`)).toBe(true);
    expect((await settings()).storageBaseUrlStatus.activeBaseUrl).toBe(`https://${host}`);

    // setting back the verified domain keeps it active at once
    const back = await setDomain(`https://${host}`);
    expect(back.body.status).toBe('active');

    expect((await setDomain(null)).body.status).toBe('removed');
    const removed = await settings();
    expect(removed.storageBaseUrl).toBeNull();
    expect(removed.storageBaseUrlStatus).toBeNull();
    expect((await issuedDocuments()).xmlUrl.startsWith(`${t.baseUrl}/files/`)).toBe(true);
  });

  it('fails with the reason when the DNS cannot answer through the retries', async () => {
    const host = 'docs.dns-quebrado.com.br';
    dns.set(host, 'servfail');
    expect((await setDomain(`https://${host}`)).body.status).toBe('pending_verification');
    const failed = await waitFor(
      'the verification to fail',
      async () => {
        const s = await settings();
        return s.storageBaseUrlStatus?.status === 'failed' ? s : undefined;
      },
      // two attempts (retry limit 1) with the catalogue's backoff between them, then the dead-letter step:
      // seconds alone, longer when the suite's other files load the machine
      90_000,
    );
    expect(failed.storageBaseUrlStatus.reason).toMatch(/DNS_UNAVAILABLE/);
    expect(failed.storageBaseUrlStatus.activeBaseUrl).toBeNull();
    // setting it again (after fixing the DNS) starts over
    dns.set(host, { cname: TARGET });
    expect((await setDomain(`https://${host}`)).body.status).toBe('pending_verification');
    await waitFor('the domain to be verified', async () => {
      const s = await settings();
      return s.storageBaseUrlStatus?.status === 'active' ? s : undefined;
    });
  }, 150_000);
});
