import { copyFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices, webhookDeliveries, webhookEndpoints } from '../../src/db/schema.ts';
import { runDocumentsJob } from '../../src/documents/invoice-documents.ts';
import type { JobContext } from '../../src/jobs/queue.ts';
import { type DnsServer, startDnsServer } from '../support/dns-server.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';
import { tinyPng } from '../support/route-checks.ts';
import { hasTool } from '../support/tools.ts';
import {
  decodeQr,
  followPublic,
  keyOfUrl,
  noteBody,
  outboxEvents,
  pdfText,
  renderPage,
  waitFor,
  waitForStatus,
} from './support.ts';

/**
 * Documents of an issued invoice, as a user sees them (spec 2.8, 4.4, 6): the documents job stores the XML and
 * the DANFSe, the status shows their public URLs, GET /xml and /pdf redirect to them, the public URLs serve the
 * stored bytes without authentication, and the white-label host replaces the default one when set.
 */

let t: TestService;
let p: OnboardedProject;
let dns: DnsServer;

beforeAll(async () => {
  // the white-label domain is verified through this DNS server (its CNAME points at the service's target)
  dns = await startDnsServer();
  dns.set('docs.notas-acme.com.br', { cname: 'docs.nfse-service.example.com' });
  t = await startTestService({ NFSE_DNS_SERVER: dns.address });
  p = await onboardProject(t, { rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t?.close();
  await dns?.close();
});

const tools = { pdftotext: hasTool('pdftotext'), pdftoppm: hasTool('pdftoppm'), zbarimg: hasTool('zbarimg') };

async function issue(key = p.apiKey, overrides: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/emitir', { key, body: noteBody(overrides) });
  expect(res.status, res.text).toBe(202);
  const id = res.body.invoiceId as string;
  const issued = await waitForInvoice(t, key, id);
  expect(issued.status).toBe('issued');
  return id;
}

const complete = (s: { documentStatus: string | null }) => s.documentStatus === 'complete';

/** A note issued, its documents then taken away: its row as the issue job leaves it before storing them. */
async function issuedWithoutDocuments(): Promise<string> {
  const id = await issue();
  await waitForStatus(t, p.apiKey, id, complete);
  await t.service.ctx.db
    .update(invoices)
    .set({ xmlKey: null, pdfKey: null, documentsCached: false, documentsStatus: null })
    .where(eq(invoices.id, id));
  return id;
}

describe('documents of an issued invoice', () => {
  let invoiceId: string;
  // biome-ignore lint/suspicious/noExplicitAny: status body
  let status: any;

  beforeAll(async () => {
    invoiceId = await issue(p.apiKey, {
      valores: { total: 12345.67, aliquotaIss: 2 },
    });
    status = await waitForStatus(t, p.apiKey, invoiceId, complete);
  });

  it('stores XML and PDF, marks them cached and shows public URLs in the status', async () => {
    expect(status.documentsCached).toBe(true);
    expect(status.documentStatus).toBe('complete');
    expect(status.xmlUrl).toMatch(
      new RegExp(`^${t.baseUrl}/files/p/${p.projectId}/[0-9a-f]{32}/${status.chNFSe}-nfse\\.xml$`),
    );
    expect(status.pdfUrl).toMatch(
      new RegExp(`^${t.baseUrl}/files/p/${p.projectId}/[0-9a-f]{32}/${status.chNFSe}-danfse\\.pdf$`),
    );
  });

  it('writes one nfse.documents_ready, complete: the XML and the PDF are written together', async () => {
    const ready = await outboxEvents(t, { invoiceId, type: 'nfse.documents_ready' });
    expect(ready.map((e) => (e.data as { documentStatus: string }).documentStatus)).toEqual(['complete']);
    expect(ready[0]!.data).toMatchObject({
      invoiceId,
      xmlUrl: status.xmlUrl,
      pdfUrl: status.pdfUrl,
      cancelXmlUrl: null,
    });
    expect(new Date((ready[0]!.data as { cachedAt: string }).cachedAt).getTime()).toBeGreaterThan(0);
    // and the issuing event came first
    const all = await outboxEvents(t, { invoiceId });
    expect(all.map((e) => e.type)).toEqual(['nfse.issued', 'nfse.documents_ready']);
  });

  it('writes the XML alone (partial) when the PDF cannot be stored, and the PDF (complete) once it can', async () => {
    const id = await issuedWithoutDocuments();
    const before = (await outboxEvents(t, { invoiceId: id, type: 'nfse.documents_ready' })).length;
    // the real storage, refusing PDFs (a full disk, an unreachable bucket)
    const storage = t.service.ctx.storage;
    const refusingPdfs = {
      ...storage,
      put: (key: string, body: Buffer, contentType: string) =>
        key.endsWith('.pdf') ? Promise.reject(new Error('disk full')) : storage.put(key, body, contentType),
    };
    const job: JobContext = { id: 'test', retryCount: 0, isLastAttempt: false };
    await expect(
      runDocumentsJob({ ...t.service.ctx, storage: refusingPdfs }, { invoiceId: id, kind: 'emission' }, job),
    ).rejects.toThrow('disk full');
    const partial = await t.request('GET', `/invoices/${id}/status`, { key: p.apiKey });
    expect(partial.body).toMatchObject({ documentStatus: 'partial', pdfUrl: null });
    expect(partial.body.xmlUrl).toMatch(/-nfse\.xml$/);
    // the retry stores the PDF alone
    await runDocumentsJob(t.service.ctx, { invoiceId: id, kind: 'emission' }, job);
    const done = await t.request('GET', `/invoices/${id}/status`, { key: p.apiKey });
    expect(done.body).toMatchObject({ documentStatus: 'complete', xmlUrl: partial.body.xmlUrl });
    const ready = (await outboxEvents(t, { invoiceId: id, type: 'nfse.documents_ready' })).slice(before);
    expect(ready.map((e) => e.data)).toMatchObject([
      { documentStatus: 'partial', xmlUrl: partial.body.xmlUrl, pdfUrl: null },
      { documentStatus: 'complete', xmlUrl: partial.body.xmlUrl, pdfUrl: done.body.pdfUrl },
    ]);
  });

  it('redirects GET /pdf and /xml to public URLs that serve the exact stored bytes without authentication', async () => {
    const pdf = await followPublic(t, `/invoices/${invoiceId}/pdf`, p.apiKey);
    expect(pdf.location).toBe(status.pdfUrl);
    expect(pdf.status).toBe(200);
    expect(pdf.contentType).toBe('application/pdf');
    expect(pdf.cacheControl).toContain('immutable');
    const storedPdf = await t.service.ctx.storage.get(keyOfUrl(pdf.location));
    expect(storedPdf).not.toBeNull();
    expect(pdf.bytes.equals(storedPdf!.body)).toBe(true);
    expect(pdf.bytes.subarray(0, 5).toString()).toBe('%PDF-');

    const xml = await followPublic(t, `/invoices/${invoiceId}/xml`, p.apiKey);
    expect(xml.location).toBe(status.xmlUrl);
    expect(xml.contentType).toContain('application/xml');
    const [row] = await t.service.ctx.db.select().from(invoices).where(eq(invoices.id, invoiceId));
    expect(xml.bytes.toString('utf8')).toBe(row!.nfseXml);
    expect(xml.bytes.equals((await t.service.ctx.storage.get(keyOfUrl(xml.location)))!.body)).toBe(true);
  });

  it.skipIf(!tools.pdftotext)('prints the key, number, both parties and pt-BR values (pdftotext)', async () => {
    const pdf = await followPublic(t, `/invoices/${invoiceId}/pdf`, p.apiKey);
    const text = pdfText(pdf.bytes);
    expect(text.replace(/\s+/g, '')).toContain(status.chNFSe);
    expect(/NÚMERO DA NFS-e[^\n]*\n\s*(\d+)\s/.exec(text)?.[1]).toBe(status.numeroNfse);
    // the provider's name is the one the government wrote in the NFS-e (emit/xNome, from its registry)
    const [row] = await t.service.ctx.db.select().from(invoices).where(eq(invoices.id, invoiceId));
    const providerName = /<emit>[\s\S]*?<xNome>([^<]+)<\/xNome>/.exec(row!.nfseXml!)?.[1];
    expect(providerName).toBeTruthy();
    expect(text).toContain(providerName);
    expect(text).toContain('Cliente Tomador SA');
    expect(text).toContain('11.222.333/0001-81');
    expect(text).toContain('11.444.777/0001-61');
    expect(text).toContain('R$ 12.345,67');
    expect(text).toContain('NFS-e SEM VALIDADE JURÍDICA');
    expect(text).not.toContain('CANCELADA');
  });

  it.skipIf(!tools.pdftoppm || !tools.zbarimg)('carries a QR code that decodes to the public query URL', async () => {
    const pdf = await followPublic(t, `/invoices/${invoiceId}/pdf`, p.apiKey);
    const png = renderPage(pdf.bytes);
    if (process.env.DANFSE_PAGE_OUT) copyFileSync(png, process.env.DANFSE_PAGE_OUT);
    expect(decodeQr(png)).toBe(`https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=${status.chNFSe}`);
  });

  it('renders the PDF on the fly when the documents are not cached', async () => {
    await t.service.ctx.db
      .update(invoices)
      .set({ pdfKey: null, documentsCached: false, documentsStatus: 'partial' })
      .where(eq(invoices.id, invoiceId));
    const res = await t.request('GET', `/invoices/${invoiceId}/pdf`, { key: p.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    if (tools.pdftotext) expect(pdfText(res.bytes).replace(/\s+/g, '')).toContain(status.chNFSe);
    // the XML is still cached: its route keeps redirecting
    expect((await t.request('GET', `/invoices/${invoiceId}/xml`, { key: p.apiKey })).status).toBe(302);
  });

  it('an issue attempt that stopped after issuing, before the documents: its next attempt stores them', async () => {
    // the row as finishIssued leaves it when the process dies before the documents (the issue job not completed)
    const id = await issuedWithoutDocuments();
    const pending = await t.request('GET', `/invoices/${id}/status`, { key: p.apiKey });
    expect(pending.body).toMatchObject({ status: 'issued', documentStatus: null, documentsCached: false });
    // pg-boss hands the job out again (expiry of the dead worker's attempt): the same payload
    await t.service.ctx.queue.send('invoice.issue', { invoiceId: id });
    t.service.ctx.queue.wake('invoice.issue');
    const again = await waitForStatus(t, p.apiKey, id, complete);
    expect(again).toMatchObject({ status: 'issued', documentsCached: true, numeroNfse: pending.body.numeroNfse });
    expect(again.xmlUrl).toMatch(/-nfse\.xml$/);
    expect(again.pdfUrl).toMatch(/-danfse\.pdf$/);
  });

  it('answers 422 PDF_UNAVAILABLE when the renderer cannot produce the PDF', async () => {
    const id = await issue();
    await waitForStatus(t, p.apiKey, id, complete);
    await t.service.ctx.db
      .update(invoices)
      .set({ pdfKey: null, documentsCached: false, nfseXml: '<NFSe xmlns="http://www.sped.fazenda.gov.br/nfse"/>' })
      .where(eq(invoices.id, id));
    const res = await t.request('GET', `/invoices/${id}/pdf`, { key: p.apiKey });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.code).toBe('PDF_UNAVAILABLE');
  });

  it('answers 409 before issuing, 404 for unknown or foreign invoices, 401/403 without a proper key', async () => {
    const rejected = await onboardProject(t, { cnpj: '11222333000262', project: { serieNfse: '50000' } });
    const res = await t.request('POST', '/emitir', { key: rejected.apiKey, body: noteBody() });
    const failed = await waitForInvoice(t, rejected.apiKey, res.body.invoiceId);
    expect(failed.status).toBe('error');
    const notIssued = await t.request('GET', `/invoices/${failed.invoiceId}/pdf`, { key: rejected.apiKey });
    expect(notIssued.status).toBe(409);
    expect(notIssued.body.code).toBe('INVOICE_NOT_ISSUED');

    const foreign = await t.request('GET', `/invoices/${invoiceId}/pdf`, { key: rejected.apiKey });
    expect(foreign.status).toBe(404);
    const unknown = await t.request('GET', '/invoices/00000000-0000-4000-8000-000000000000/pdf', { key: p.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('INVOICE_NOT_FOUND');
    expect((await t.request('GET', '/invoices/not-a-uuid/pdf', { key: p.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/invoices/${invoiceId}/pdf`)).status).toBe(401);
    expect((await t.request('GET', `/invoices/${invoiceId}/pdf`, { key: p.orgToken })).status).toBe(403);
  });
});

describe('documents events of a project with a subscribed endpoint', () => {
  it('writes each nfse.documents_ready with its delivery, the same events as without one', async () => {
    // without an endpoint each step writes its row and its event in one statement; with one, in a transaction that
    // also writes the deliveries (their bodies carry the event's data)
    const q = await onboardProject(t, { rateLimitPerMinute: 100_000, cnpj: '11222333000262' });
    await t.service.ctx.db.insert(webhookEndpoints).values({
      projectId: q.projectId,
      url: 'https://127.0.0.1:9/hook',
      events: ['nfse.documents_ready'],
      secret: 'whsec_documents',
    });
    const invoiceId = await issue(q.apiKey);
    const status = await waitForStatus(t, q.apiKey, invoiceId, complete);
    const ready = await outboxEvents(t, { invoiceId, type: 'nfse.documents_ready' });
    expect(ready.map((e) => (e.data as { documentStatus: string }).documentStatus)).toEqual(['complete']);
    expect(ready[0]!.data).toMatchObject({ invoiceId, xmlUrl: status.xmlUrl, pdfUrl: status.pdfUrl });
    for (const event of ready) {
      const deliveries = await t.service.ctx.db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.eventId, event.id));
      expect(deliveries).toHaveLength(1);
      expect(JSON.parse(deliveries[0]!.body)).toMatchObject({ event: 'nfse.documents_ready', data: event.data });
    }
  });
});

describe('white-label storage domain', () => {
  it('puts the organization host in the status, the redirects and the events', async () => {
    const host = 'https://docs.notas-acme.com.br';
    const set = await t.request('PATCH', '/org/settings', { key: p.orgToken, body: { storageBaseUrl: host } });
    expect(set.status).toBe(200);
    try {
      await waitFor('the domain to be verified', async () => {
        const s = await t.request('GET', '/org/settings', { key: p.orgToken });
        return s.body.storageBaseUrlStatus?.status === 'active' ? true : undefined;
      });
      const invoiceId = await issue();
      const status = await waitForStatus(t, p.apiKey, invoiceId, complete);
      expect(status.xmlUrl).toMatch(new RegExp(`^${host}/p/${p.projectId}/[0-9a-f]{32}/${status.chNFSe}-nfse\\.xml$`));
      expect(status.pdfUrl).toMatch(
        new RegExp(`^${host}/p/${p.projectId}/[0-9a-f]{32}/${status.chNFSe}-danfse\\.pdf$`),
      );
      const pdf = await t.request('GET', `/invoices/${invoiceId}/pdf`, { key: p.apiKey });
      expect(pdf.status).toBe(302);
      expect(pdf.headers.get('location')).toBe(status.pdfUrl);
      const xml = await t.request('GET', `/invoices/${invoiceId}/xml`, { key: p.apiKey });
      expect(xml.headers.get('location')).toBe(status.xmlUrl);
      const ready = await outboxEvents(t, { invoiceId, type: 'nfse.documents_ready' });
      expect(ready).toHaveLength(1);
      for (const e of ready) expect((e.data as { xmlUrl: string }).xmlUrl.startsWith(`${host}/`)).toBe(true);
      expect((ready[0]!.data as { pdfUrl: string }).pdfUrl).toBe(status.pdfUrl);
      // the same document is reachable under the default host (the CNAME points at the storage)
      const direct = await fetch(`${t.baseUrl}/files/${keyOfUrl(status.pdfUrl)}`);
      expect(direct.status).toBe(200);
    } finally {
      await t.request('PATCH', '/org/settings', { key: p.orgToken, body: { storageBaseUrl: null } });
    }
    const after = await t.request('GET', '/org/settings', { key: p.orgToken });
    expect(after.body.storageBaseUrl).toBeNull();
  });
});

describe('DANFSe templates with the project logo', () => {
  it('draws the logo of the project with a logo template', async () => {
    const plain = await issue();
    await waitForStatus(t, p.apiKey, plain, complete);
    const plainPdf = await followPublic(t, `/invoices/${plain}/pdf`, p.apiKey);
    expect(plainPdf.bytes.includes('/Subtype /Image')).toBe(false);

    const png = tinyPng();
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'logo.png');
    const upload = await t.request('POST', `/org/projects/${p.projectId}/logo`, { key: p.orgToken, rawBody: form });
    expect(upload.status).toBe(201);
    const patch = await t.request('PATCH', `/org/projects/${p.projectId}`, {
      key: p.orgToken,
      body: { danfeTemplate: 'retrato_logo' },
    });
    expect(patch.status).toBe(200);
    try {
      const withLogo = await issue();
      await waitForStatus(t, p.apiKey, withLogo, complete);
      const pdf = await followPublic(t, `/invoices/${withLogo}/pdf`, p.apiKey);
      expect(pdf.bytes.includes('/Subtype /Image')).toBe(true);
    } finally {
      await t.request('DELETE', `/org/projects/${p.projectId}/logo`, { key: p.orgToken });
    }
  });
});

describe('OpenAPI document', () => {
  it('documents the documents, cancellation and batch operations with their answers', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const paths = res.body.paths;
    // bodies and answers are named components of the document (`$ref`)
    const named = (schema: { $ref?: string }) =>
      schema.$ref ? res.body.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;
    const pdf = paths['/api/v1/invoices/{id}/pdf'].get;
    expect(Object.keys(pdf.responses)).toEqual(
      expect.arrayContaining(['200', '302', '404', '409', '422', '501', '502']),
    );
    expect(pdf.responses['200'].content['application/pdf']).toBeDefined();
    const cancel = paths['/api/v1/cancelar'].post;
    expect(cancel.description).toContain('rejected');
    expect(named(cancel.responses['202'].content['application/json'].schema).properties.status.enum).toEqual([
      'cancelling',
    ]);
    expect(named(cancel.requestBody.content['application/json'].schema).properties.motivo.maxLength).toBe(255);
    const batch = paths['/api/v1/emitir/batch'].post;
    expect(named(batch.requestBody.content['application/json'].schema).properties.items.maxItems).toBe(100);
    expect(Object.keys(batch.responses)).toEqual(expect.arrayContaining(['202', '400', '402']));
    const batchStatus = paths['/api/v1/invoices/batch/{batchId}/status'].get;
    expect(named(batchStatus.responses['200'].content['application/json'].schema).required).toEqual(
      expect.arrayContaining(['batchId', 'status', 'total', 'processed', 'issued', 'errors', 'items']),
    );
  });
});
