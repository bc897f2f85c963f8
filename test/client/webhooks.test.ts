import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  signStandard,
  signSvc,
  verifyStandardWebhook,
  verifySvcSignature,
  verifyWebhook,
  WebhookVerificationError,
} from '../../packages/client/src/index.ts';
import { signatureHeaders } from '../../src/webhooks/signing.ts';

/**
 * The client's webhook helpers against the service's own signer (src/webhooks/signing.ts): both schemes, the
 * `whsec_` secrets, a rotation's two signatures, the timestamp tolerance, and what must be refused.
 */

const body = JSON.stringify({
  event: 'nfse.issued',
  deliveryId: '7b0c1f3e-9a52-4c1d-8f5e-2d6a1b3c4d5e',
  timestamp: '2026-03-02T12:00:00.000Z',
  data: { invoiceId: 'inv-1', chNFSe: null, nNFSe: '12', acentuação: 'ç' },
});
const id = '7b0c1f3e-9a52-4c1d-8f5e-2d6a1b3c4d5e';
const now = Date.parse('2026-03-02T12:00:05.000Z');
const ts = Math.floor(now / 1000) - 5;

function delivery(current: string, previous: string | null = null): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-svc-event': 'nfse.issued',
    'x-svc-delivery': id,
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    ...signatureHeaders({ current, previous }, id, ts, body),
  };
}

describe('webhook verification helpers', () => {
  it('verify what the service signs, in both schemes, from a string or the raw bytes', () => {
    const secret = 'segredo-do-receptor-0001';
    const headers = delivery(secret);
    expect(signSvc(secret, body)).toBe(headers['x-svc-signature']);
    expect(signStandard(secret, id, ts, body)).toBe(headers['webhook-signature']);
    expect(verifySvcSignature(body, headers['x-svc-signature'], secret)).toBe(true);
    expect(verifySvcSignature(Buffer.from(body), headers['x-svc-signature'], secret)).toBe(true);
    const event = verifyWebhook({ body: Buffer.from(body), headers, secret, scheme: 'both', now });
    expect(event).toMatchObject({ event: 'nfse.issued', deliveryId: id, data: { invoiceId: 'inv-1' } });
    expect(verifyStandardWebhook({ body, headers: new Headers(headers), secret, now })).toEqual({ id, timestamp: ts });
  });

  it('take a whsec_ secret as base64 key bytes, and either signature after a rotation', () => {
    const key = randomBytes(32);
    const secret = `whsec_${key.toString('base64')}`;
    const headers = delivery('new-secret-of-the-endpoint', secret);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    const mac = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
    expect(headers['webhook-signature'].split(' ')[1]).toBe(`v1,${mac}`);
    expect(verifyStandardWebhook({ body, headers, secret, now }).id).toBe(id);
    expect(verifyStandardWebhook({ body, headers, secret: 'new-secret-of-the-endpoint', now }).id).toBe(id);
    // X-Svc-Signature is the current secret's only
    expect(verifySvcSignature(body, headers['x-svc-signature'], secret)).toBe(false);
  });

  it('refuse a tampered body, another secret, a stale or future timestamp, missing headers', () => {
    const secret = 'segredo-do-receptor-0001';
    const headers = delivery(secret);
    const tampered = body.replace('inv-1', 'inv-2');
    expect(verifySvcSignature(tampered, headers['x-svc-signature'], secret)).toBe(false);
    expect(verifySvcSignature(body, headers['x-svc-signature'], 'outro-segredo')).toBe(false);
    expect(verifySvcSignature(body, 'sha256=00', secret)).toBe(false);
    expect(verifySvcSignature(body, undefined, secret)).toBe(false);
    const refused = (options: Partial<Parameters<typeof verifyWebhook>[0]>, message: RegExp) =>
      expect(() => verifyWebhook({ body, headers, secret, now, ...options })).toThrow(message);
    refused({ body: tampered }, /no webhook-signature matches/);
    refused({ secret: 'outro-segredo' }, /no webhook-signature matches/);
    refused({ now: now + 301_000 }, /too old/);
    refused({ now: now - 310_000 }, /in the future/);
    refused({ body: tampered, scheme: 'svc' }, /X-Svc-Signature does not match/);
    refused({ headers: { ...headers, 'webhook-signature': undefined } }, /missing/);
    refused({ headers: { ...headers, 'webhook-timestamp': '12e5' } }, /malformed/);
    refused({ headers: { ...headers, 'x-svc-delivery': 'other' }, scheme: 'svc' }, /delivery id/);
    expect(() =>
      verifyWebhook({
        body: 'not json',
        headers: { 'x-svc-signature': signSvc(secret, 'not json') },
        secret,
        scheme: 'svc',
      }),
    ).toThrow(WebhookVerificationError);
    // a wider tolerance accepts an older delivery
    expect(verifyWebhook({ body, headers, secret, now: now + 3_600_000, toleranceSeconds: 7200 }).deliveryId).toBe(id);
  });
});
