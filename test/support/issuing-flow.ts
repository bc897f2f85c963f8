import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import type { TestService } from './harness.ts';

/**
 * The steps every engine's end-to-end test takes over HTTP as a user: issue and wait for the note to settle, read the
 * emission XML, ask for a cancellation the provider does not offer. The assertions on what the provider answered stay
 * in each test.
 */

// biome-ignore lint/suspicious/noExplicitAny: status body
type StatusBody = any;

/** POST /emitir (202 expected), then waits until the invoice is issued, rejected or failed. */
export async function issueAndSettle(
  t: TestService,
  apiKey: string,
  body: Record<string, unknown>,
): Promise<{ invoiceId: string; status: StatusBody }> {
  const res = await t.request('POST', '/emitir', { key: apiKey, body });
  expect(res.status, res.text).toBe(202);
  const invoiceId: string = res.body.invoiceId;
  const status = await waitForInvoiceState(t, apiKey, invoiceId, (s) => ['issued', 'rejected', 'failed'].includes(s));
  return { invoiceId, status };
}

/** The stored emission XML of an invoice (following the redirect to storage when the API answers 302). */
export async function emissionXml(t: TestService, apiKey: string, invoiceId: string): Promise<string> {
  const xml = await t.request('GET', `/invoices/${invoiceId}/xml?type=emission`, { key: apiKey });
  return xml.status === 302 ? await (await fetch(xml.headers.get('location')!)).text() : xml.text;
}

/**
 * POST /cancelar on a provider that offers no cancellation: follows the request until it leaves `requested` /
 * `cancelling`, and checks it ended CANCEL_NOT_SUPPORTED with the note still issued.
 */
export async function expectCancellationNotOffered(t: TestService, apiKey: string, invoiceId: string) {
  const cancel = await t.request('POST', '/cancelar', { key: apiKey, body: { invoiceId } });
  const deadline = Date.now() + 15_000;
  let after = cancel.body;
  while (cancel.status === 202 && Date.now() < deadline) {
    after = (await t.request('GET', `/invoices/${invoiceId}/status`, { key: apiKey })).body;
    if (after.cancellation?.status !== 'requested' && after.status !== 'cancelling') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(JSON.stringify({ status: cancel.status, after })).toContain('CANCEL_NOT_SUPPORTED');
  expect(after.status === 'issued' || cancel.status >= 400).toBe(true);
}

/** The exchanges a sandbox recorded (its `exchanges.jsonl`), flushed first. */
export async function sandboxExchanges(t: TestService, slug: string): Promise<string> {
  await t.service.sandbox?.flushExchanges();
  return readFileSync(join(t.dataDir, 'sandbox', slug, 'exchanges.jsonl'), 'utf8');
}
