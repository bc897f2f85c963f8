import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { events } from '../../src/db/schema.ts';
import type { TestService } from '../support/harness.ts';
import { invoiceBody, TAKER } from '../support/onboarding.ts';

/** Shared helpers of the documents, cancellation and batch suites (everything over HTTP but the outbox reads). */

export { TAKER };

/** A valid POST /emitir body with {@link TAKER}. */
export function noteBody(overrides: Record<string, unknown> = {}) {
  return invoiceBody({ tomador: TAKER, ...overrides });
}

const workDir = mkdtempSync(join(tmpdir(), 'documents-flow-'));
let counter = 0;

/** Writes bytes to a fresh file of the suite's work directory and returns its path. */
export function writeWorkFile(bytes: Buffer, extension: string): string {
  const path = join(workDir, `file-${process.pid}-${++counter}.${extension}`);
  writeFileSync(path, bytes);
  return path;
}

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** The text of a PDF (pdftotext, layout kept). */
export function pdfText(pdf: Buffer): string {
  return run('pdftotext', ['-layout', writeWorkFile(pdf, 'pdf'), '-']);
}

/** Renders the first page to PNG (pdftoppm, 150 dpi) and returns the PNG path. */
export function renderPage(pdf: Buffer): string {
  const path = writeWorkFile(pdf, 'pdf');
  const prefix = path.replace(/\.pdf$/, '');
  run('pdftoppm', ['-r', '150', '-png', '-singlefile', path, prefix]);
  return `${prefix}.png`;
}

/** The QR code(s) of a rendered page, decoded by zbarimg. */
export function decodeQr(pngPath: string): string {
  const r = spawnSync('zbarimg', ['-q', '--raw', pngPath], { encoding: 'utf8' });
  return r.stdout.trim();
}

/** Polls `probe` until it returns a value that is not undefined (or the timeout). */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls the invoice status until `accept` holds. */
export async function waitForStatus(
  t: TestService,
  apiKey: string,
  invoiceId: string,
  // biome-ignore lint/suspicious/noExplicitAny: status body
  accept: (status: any) => boolean,
  timeoutMs = 20_000,
  // biome-ignore lint/suspicious/noExplicitAny: status body
): Promise<any> {
  return waitFor(
    `invoice ${invoiceId}`,
    async () => {
      const res = await t.request('GET', `/invoices/${invoiceId}/status`, { key: apiKey });
      if (res.status !== 200) throw new Error(`status: ${res.status} ${res.text}`);
      return accept(res.body) ? res.body : undefined;
    },
    timeoutMs,
  );
}

/** The outbox events of an invoice (or of a batch), oldest first. */
export async function outboxEvents(t: TestService, filter: { invoiceId?: string; batchId?: string; type?: string }) {
  const conditions = [
    filter.invoiceId ? eq(events.invoiceId, filter.invoiceId) : undefined,
    filter.batchId ? eq(events.batchId, filter.batchId) : undefined,
    filter.type ? eq(events.type, filter.type) : undefined,
  ].filter((c) => c !== undefined);
  return t.service.ctx.db
    .select()
    .from(events)
    .where(and(...conditions))
    .orderBy(asc(events.createdAt));
}

/** Follows a 302 of the API to the public URL without any credential; returns the location and the file. */
export async function followPublic(t: TestService, path: string, apiKey: string) {
  const res = await t.request('GET', path, { key: apiKey });
  if (res.status !== 302) throw new Error(`expected 302 for ${path}, got ${res.status} ${res.text}`);
  const location = res.headers.get('location')!;
  const file = await fetch(location);
  return {
    location,
    status: file.status,
    contentType: file.headers.get('content-type'),
    cacheControl: file.headers.get('cache-control'),
    bytes: Buffer.from(await file.arrayBuffer()),
  };
}

/** The storage key of a public URL (what follows the storage base). */
export function keyOfUrl(url: string): string {
  const path = new URL(url).pathname;
  const at = path.indexOf('/p/');
  return path.slice(at + 1);
}

/** Polls the invoice status until its `status` satisfies `done` (the engines' end-to-end tests). */
export function waitForInvoiceState(
  t: TestService,
  apiKey: string,
  invoiceId: string,
  done: (status: string) => boolean,
  timeoutMs = 20_000,
  // biome-ignore lint/suspicious/noExplicitAny: status body
): Promise<any> {
  return waitForStatus(t, apiKey, invoiceId, (body) => done(body.status), timeoutMs);
}
