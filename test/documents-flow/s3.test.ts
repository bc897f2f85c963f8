import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';
import { hasTool } from '../support/tools.ts';
import { followPublic, keyOfUrl, noteBody, outboxEvents, pdfText, waitForStatus } from './support.ts';

/**
 * The documents flow with STORAGE_DRIVER=s3 against a real S3-compatible server (s3rver) started here: the
 * documents job writes the XML and the PDF to the bucket, the URLs point at the bucket's public address, and
 * the bucket serves the exact stored bytes without credentials.
 */

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
// s3rver ships no type declarations.
const S3rver = createRequire(import.meta.url)('s3rver') as new (options: Record<string, unknown>) => S3rverInstance;

let s3Dir: string;
let s3server: S3rverInstance;
let publicBase: string;
let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), 'documents-s3rver-'));
  s3server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory: s3Dir,
    silent: true,
    configureBuckets: [{ name: 'docs' }],
  });
  const { port } = await s3server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  publicBase = `${endpoint}/docs`;
  t = await startTestService({
    STORAGE_DRIVER: 's3',
    S3_BUCKET: 'docs',
    S3_REGION: 'us-east-1',
    S3_ENDPOINT: endpoint,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    S3_PUBLIC_BASE_URL: publicBase,
  });
  p = await onboardProject(t, { rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t?.close();
  s3server?.httpServer?.closeAllConnections();
  await s3server?.close();
  if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
});

describe('documents on S3-compatible storage', () => {
  it('stores XML and PDF in the bucket and redirects to its public URLs, which serve the stored bytes', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: noteBody() });
    expect(res.status, res.text).toBe(202);
    const invoiceId = res.body.invoiceId as string;
    expect((await waitForInvoice(t, p.apiKey, invoiceId)).status).toBe('issued');
    const status = await waitForStatus(t, p.apiKey, invoiceId, (s) => s.documentStatus === 'complete');
    expect(status.documentsCached).toBe(true);
    expect(status.xmlUrl.startsWith(`${publicBase}/p/${p.projectId}/`)).toBe(true);
    expect(status.pdfUrl.startsWith(`${publicBase}/p/${p.projectId}/`)).toBe(true);

    const pdf = await followPublic(t, `/invoices/${invoiceId}/pdf`, p.apiKey);
    expect(pdf.location).toBe(status.pdfUrl);
    expect(pdf.status).toBe(200);
    expect(pdf.contentType).toBe('application/pdf');
    expect(pdf.cacheControl).toContain('immutable');
    const storedPdf = await t.service.ctx.storage.get(keyOfUrl(status.pdfUrl));
    expect(pdf.bytes.equals(storedPdf!.body)).toBe(true);
    if (hasTool('pdftotext')) expect(pdfText(pdf.bytes).replace(/\s+/g, '')).toContain(status.chNFSe);

    const xml = await followPublic(t, `/invoices/${invoiceId}/xml`, p.apiKey);
    expect(xml.location).toBe(status.xmlUrl);
    expect(xml.status).toBe(200);
    const [row] = await t.service.ctx.db.select().from(invoices).where(eq(invoices.id, invoiceId));
    expect(xml.bytes.toString('utf8')).toBe(row!.nfseXml);

    const ready = await outboxEvents(t, { invoiceId, type: 'nfse.documents_ready' });
    expect(ready.map((e) => e.data)).toMatchObject([
      { documentStatus: 'complete', xmlUrl: status.xmlUrl, pdfUrl: status.pdfUrl },
    ]);

    // nothing was written to the local disk: the bucket is the only copy
    expect(existsSync(join(t.dataDir, 'documents'))).toBe(false);
  });
});
