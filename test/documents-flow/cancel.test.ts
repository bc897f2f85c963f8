import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices } from '../../src/db/schema.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SefinSandbox, startSefinSandbox } from '../../src/sandbox/sefin/server.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';
import { hasTool } from '../support/tools.ts';
import { followPublic, keyOfUrl, noteBody, outboxEvents, pdfText, waitFor, waitForStatus } from './support.ts';

/**
 * Cancellation as a user does it (spec 3, 4.2, 4.4, 6): issue → POST /cancelar → cancelled, with the
 * government's event XML (valid against evento_v1.01.xsd) and a watermarked PDF. The Sefin sandbox runs beside
 * the service with a clock the test can move, so that the government can refuse a request (dhEvento after its
 * own clock, E1843) the way a real clock skew makes it.
 */

let sandboxDir: string;
let sandbox: SefinSandbox;
let skewMs = 0;
let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  sandboxDir = mkdtempSync(join(tmpdir(), 'cancel-sandbox-'));
  const identity = provisionSandboxIdentity(sandboxDir);
  sandbox = await startSefinSandbox({
    tls: identity.tls,
    signer: identity.signer,
    now: () => new Date(Date.now() + skewMs),
  });
  t = await startTestService({
    NFSE_GOVERNMENT: 'sandbox',
    NFSE_SEFIN_SANDBOX_URL: sandbox.url,
    NFSE_SEFIN_SANDBOX_CA_FILE: identity.caFile,
  });
  p = await onboardProject(t, { rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
  rmSync(sandboxDir, { recursive: true, force: true });
});

async function issue(key = p.apiKey): Promise<string> {
  const res = await t.request('POST', '/emitir', { key, body: noteBody() });
  expect(res.status, res.text).toBe(202);
  const status = await waitForInvoice(t, key, res.body.invoiceId);
  expect(status.status).toBe('issued');
  return res.body.invoiceId;
}

function cancel(invoiceId: string, motivo?: string, key = p.apiKey) {
  return t.request('POST', '/cancelar', { key, body: motivo === undefined ? { invoiceId } : { invoiceId, motivo } });
}

function sandboxEventsOf(chave: string) {
  return sandbox.issued().find((r) => r.chaveAcesso === chave)?.events ?? [];
}

/** Cancelled, with the cancellation documents stored (cancel XML and the watermarked PDF). */
const cancelledWithDocuments = (s: { status: string; cancelXmlUrl?: string | null; pdfUrl?: string | null }) =>
  s.status === 'cancelled' && !!s.cancelXmlUrl && !!s.pdfUrl?.endsWith('-danfse-cancelada.pdf');

describe('cancelling an issued invoice', () => {
  it('goes issued → cancelled with the event XML, the CANCELADA PDF and the events', async () => {
    const invoiceId = await issue();
    const issued = await waitForStatus(t, p.apiKey, invoiceId, (s) => s.documentStatus === 'complete');
    const motivo = 'Serviço não prestado ao tomador';

    const res = await cancel(invoiceId, motivo);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({
      invoiceId,
      status: 'cancelling',
      cancellation: { status: 'requested', requestedAt: expect.any(String) },
      pollUrl: `/api/v1/invoices/${invoiceId}/status`,
    });
    const again = await cancel(invoiceId);
    expect(again.status).toBe(409);
    expect(['INVOICE_CANCELLATION_IN_PROGRESS', 'INVOICE_ALREADY_CANCELLED']).toContain(again.body.code);

    const status = await waitForStatus(t, p.apiKey, invoiceId, cancelledWithDocuments);
    expect(status.chNFSe).toBe(issued.chNFSe);
    expect(new Date(status.cancelledAt).getTime()).toBeGreaterThan(0);
    expect(status.cancellation).toMatchObject({ status: 'done', motivo, errorCode: null, errorMessage: null });
    expect(status.pdfUrl).not.toBe(issued.pdfUrl);
    expect(status.xmlUrl).toBe(issued.xmlUrl);

    // the cancellation XML: the government's signed evento, valid against the official schema
    const xml = await followPublic(t, `/invoices/${invoiceId}/xml?type=cancel`, p.apiKey);
    expect(xml.location).toBe(status.cancelXmlUrl);
    expect(xml.status).toBe(200);
    const eventXml = xml.bytes.toString('utf8');
    expect(validateXml('evento', eventXml)).toEqual({ ok: true });
    expect(eventXml).toContain(`Id="EVT${status.chNFSe}101101001"`);
    expect(eventXml).toContain(`<chNFSe>${status.chNFSe}</chNFSe>`);
    expect(eventXml).toContain(`<xMotivo>${motivo}</xMotivo>`);
    expect(eventXml).toContain('<xDesc>Cancelamento de NFS-e</xDesc>');
    const [row] = await t.service.ctx.db.select().from(invoices).where(eq(invoices.id, invoiceId));
    expect(eventXml).toBe(row!.cancelXml);
    expect(xml.bytes.equals((await t.service.ctx.storage.get(keyOfUrl(xml.location)))!.body)).toBe(true);

    // the PDF now carries the watermark; the first one stays as it was (public URLs are immutable)
    const pdf = await followPublic(t, `/invoices/${invoiceId}/pdf`, p.apiKey);
    expect(pdf.location).toBe(status.pdfUrl);
    const original = await fetch(issued.pdfUrl);
    expect(original.status).toBe(200);
    if (hasTool('pdftotext')) {
      expect(pdfText(pdf.bytes)).toContain('CANCELADA');
      expect(pdfText(Buffer.from(await original.arrayBuffer()))).not.toContain('CANCELADA');
    }

    // the outbox: one nfse.cancelled carrying the stored cancellation XML; documents_ready stays at one (spec 6: the
    // watermarked PDF replaces the first without an event)
    const cancelled = await outboxEvents(t, { invoiceId, type: 'nfse.cancelled' });
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.data).toEqual({
      invoiceId,
      numeroNfse: issued.numeroNfse,
      cancelledAt: new Date(status.cancelledAt).toISOString(),
      cancelXmlUrl: status.cancelXmlUrl,
    });
    // the URL the event carries is already served when the event is written
    const fromEvent = await fetch((cancelled[0]!.data as { cancelXmlUrl: string }).cancelXmlUrl);
    expect(fromEvent.status).toBe(200);
    expect(await fromEvent.text()).toBe(eventXml);
    const ready = await outboxEvents(t, { invoiceId, type: 'nfse.documents_ready' });
    expect(ready).toHaveLength(1);
    expect(ready.map((e) => (e.data as { documentStatus: string }).documentStatus)).toEqual(['complete']);
    expect(ready.map((e) => (e.data as { cancelXmlUrl: string | null }).cancelXmlUrl)).toEqual([null]);
    // the status shows both the cancellation XML and the watermarked PDF
    expect(status.cancelXmlUrl).toMatch(/-cancelamento\.xml$/);
    expect(status.pdfUrl).toMatch(/-danfse-cancelada\.pdf$/);

    // the government registered exactly one cancellation; a second request is refused here
    expect(sandboxEventsOf(status.chNFSe).map((e) => e.tipoEvento)).toEqual(['101101']);
    const third = await cancel(invoiceId);
    expect(third.status).toBe(409);
    expect(third.body.code).toBe('INVOICE_ALREADY_CANCELLED');
  });

  it('renders the watermarked PDF on the fly before the documents are cached', async () => {
    const invoiceId = await issue();
    expect((await cancel(invoiceId)).status).toBe(202);
    await waitForStatus(t, p.apiKey, invoiceId, cancelledWithDocuments);
    // cancelled right after issuing (the emission documents may still be running): still one documents_ready
    const ready = await outboxEvents(t, { invoiceId, type: 'nfse.documents_ready' });
    expect(ready.map((e) => (e.data as { documentStatus: string }).documentStatus)).toEqual(['complete']);
    await t.service.ctx.db
      .update(invoices)
      .set({ pdfKey: null, documentsCached: false })
      .where(eq(invoices.id, invoiceId));
    const res = await t.request('GET', `/invoices/${invoiceId}/pdf`, { key: p.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    if (hasTool('pdftotext')) expect(pdfText(res.bytes)).toContain('CANCELADA');
  });

  it('sends a 255-character motivo as xMotivo and pads a missing one to the schema minimum', async () => {
    const long = 'Cancelamento por erro de digitação no valor do serviço. '.repeat(5).slice(0, 255);
    expect(long).toHaveLength(255);
    const first = await issue();
    const second = await issue();
    expect((await cancel(first, long)).status).toBe(202);
    expect((await cancel(second)).status).toBe(202);
    const a = await waitForStatus(t, p.apiKey, first, cancelledWithDocuments);
    const b = await waitForStatus(t, p.apiKey, second, cancelledWithDocuments);
    const xmlA = (await followPublic(t, `/invoices/${first}/xml?type=cancel`, p.apiKey)).bytes.toString('utf8');
    const xmlB = (await followPublic(t, `/invoices/${second}/xml?type=cancel`, p.apiKey)).bytes.toString('utf8');
    expect(/<xMotivo>([^<]*)<\/xMotivo>/.exec(xmlA)?.[1]).toBe(long.trimEnd());
    expect(/<xMotivo>([^<]*)<\/xMotivo>/.exec(xmlB)?.[1]?.length).toBeGreaterThanOrEqual(15);
    expect(a.cancellation.motivo).toBe(long.trim());
    expect(b.cancellation.motivo).toBeNull();
  });

  it('refuses bad requests: 400 over 255 characters, 404 unknown or foreign, 409 not issued, 401/403 keys', async () => {
    const invoiceId = await issue();
    const tooLong = await cancel(invoiceId, 'x'.repeat(256));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.code).toBe('VALIDATION_FAILED');
    expect(tooLong.body.errors.map((e: { field: string }) => e.field)).toEqual(['motivo']);
    const missing = await t.request('POST', '/cancelar', { key: p.apiKey, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { field: string }) => e.field)).toContain('invoiceId');

    expect((await cancel('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await cancel('not-a-uuid')).body.code).toBe('INVOICE_NOT_FOUND');
    const other = await onboardProject(t, { cnpj: '11222333000343', rateLimitPerMinute: 100_000 });
    expect((await cancel(invoiceId, undefined, other.apiKey)).status).toBe(404);

    expect((await t.request('POST', '/cancelar', { body: { invoiceId } })).status).toBe(401);
    expect((await cancel(invoiceId, undefined, p.orgToken)).body.code).toBe('WRONG_KEY_KIND');
    const emitOnly = await t.request('POST', `/org/projects/${p.projectId}/api-keys`, {
      key: p.orgToken,
      body: { name: 'emit only', scopes: ['emit', 'query'] },
    });
    const noScope = await cancel(invoiceId, undefined, emitOnly.body.key);
    expect(noScope.status).toBe(403);
    expect(noScope.body.code).toBe('INSUFFICIENT_SCOPE');

    const rejected = await onboardProject(t, { cnpj: '11222333000424', project: { serieNfse: '50000' } });
    const res = await t.request('POST', '/emitir', { key: rejected.apiKey, body: noteBody() });
    const failed = await waitForInvoice(t, rejected.apiKey, res.body.invoiceId);
    expect(failed.status).toBe('error');
    const notIssued = await cancel(failed.invoiceId, undefined, rejected.apiKey);
    expect(notIssued.status).toBe(409);
    expect(notIssued.body.code).toBe('INVOICE_NOT_ISSUED');
    // nothing of the refused requests reached the invoice
    const after = await t.request('GET', `/invoices/${invoiceId}/status`, { key: p.apiKey });
    expect(after.body.status).toBe('issued');
    expect(after.body.cancellation).toBeUndefined();
    const cancelXml = await t.request('GET', `/invoices/${invoiceId}/xml?type=cancel`, { key: p.apiKey });
    expect(cancelXml.status).toBe(409);
    expect(cancelXml.body.code).toBe('INVOICE_NOT_CANCELLED');
  });

  it('keeps the invoice issued and shows the refusal when the government refuses; a new request may succeed', async () => {
    const invoiceId = await issue();
    skewMs = -10 * 60_000; // the government's clock is 10 minutes behind: our dhEvento is "in the future"
    try {
      expect((await cancel(invoiceId, 'Erro na emissão do documento')).status).toBe(202);
      const refused = await waitForStatus(t, p.apiKey, invoiceId, (s) => s.cancellation?.status === 'rejected');
      expect(refused.status).toBe('issued');
      expect(refused.cancellation).toMatchObject({
        status: 'rejected',
        motivo: 'Erro na emissão do documento',
        errorCode: 'E1843',
      });
      expect(refused.cancellation.errorMessage.length).toBeGreaterThan(0);
      expect(refused.cancelledAt).toBeUndefined();
      expect(await outboxEvents(t, { invoiceId, type: 'nfse.cancelled' })).toHaveLength(0);
      expect((await t.request('GET', `/invoices/${invoiceId}/xml?type=cancel`, { key: p.apiKey })).status).toBe(409);
    } finally {
      skewMs = 0;
    }
    expect((await cancel(invoiceId)).status).toBe(202);
    const done = await waitForStatus(t, p.apiKey, invoiceId, cancelledWithDocuments);
    expect(done.cancellation).toMatchObject({ status: 'done', errorCode: null, errorMessage: null });
  });

  it('reconciles a cancellation whose answer was lost instead of sending it twice', async () => {
    const invoiceId = await issue();
    const { chNFSe } = (await t.request('GET', `/invoices/${invoiceId}/status`, { key: p.apiKey })).body;
    sandbox.setFaults({ commitThenDropRate: 1 });
    try {
      expect((await cancel(invoiceId)).status).toBe(202);
      // the government registers the event and the connection drops before the answer
      await waitFor('the event at the government', async () => (sandboxEventsOf(chNFSe).length > 0 ? true : undefined));
    } finally {
      sandbox.setFaults({});
    }
    const status = await waitForStatus(t, p.apiKey, invoiceId, cancelledWithDocuments, 30_000);
    expect(status.cancellation.status).toBe('done');
    expect(sandboxEventsOf(chNFSe).map((e) => e.tipoEvento)).toEqual(['101101']);
    expect(await outboxEvents(t, { invoiceId, type: 'nfse.cancelled' })).toHaveLength(1);
  });
});
