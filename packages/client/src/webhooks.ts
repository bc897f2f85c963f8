import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './generated.ts';

/**
 * Verifying the service's webhook deliveries. Each delivery to an endpoint with a secret carries two signatures
 * (spec section 6 and the service's `SIGNING_NOTE`):
 *
 * - `X-Svc-Signature: sha256=<lowercase hex HMAC-SHA256 of the raw body>`, keyed with the secret's UTF-8 bytes
 *   (the current secret only). It signs no timestamp: use `X-Svc-Delivery` (the same across retries) to drop
 *   replays you already processed.
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` (Unix seconds of the
 *   attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`, space-separated,
 *   one per valid secret (after a rotation the previous secret signs too, for 24 h). The key is the secret's
 *   UTF-8 bytes, or for a `whsec_<base64>` secret the decoded bytes after the prefix. The timestamp is signed,
 *   so a delivery older (or newer) than the tolerance is refused: a replay protection.
 *
 * Always verify over the raw body bytes exactly as received (before any JSON parsing); every comparison of a
 * computed signature is constant-time (`timingSafeEqual`).
 */

export type RawBody = string | Uint8Array;
/** Node's `IncomingHttpHeaders`, a plain record, or a fetch `Headers`. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/** Default tolerance of the Standard Webhooks timestamp: 5 minutes either way. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
const STANDARD_SECRET_PREFIX = 'whsec_';

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(', ') : value;
}

const bytesOf = (body: RawBody): Buffer =>
  typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);

/** Constant-time equality of two byte strings (a length difference is not secret). */
function safeEqual(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}

/** The HMAC key of a Standard Webhooks signature for a secret (`whsec_` secrets are base64). */
export function standardSigningKey(secret: string): Buffer {
  return secret.startsWith(STANDARD_SECRET_PREFIX)
    ? Buffer.from(secret.slice(STANDARD_SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** The `X-Svc-Signature` value for a body (`sha256=<hex>`). */
export function signSvc(secret: string, body: RawBody): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(bytesOf(body)).digest('hex')}`;
}

/** One Standard Webhooks signature (`v1,<base64>`). */
export function signStandard(secret: string, id: string, timestampSeconds: number, body: RawBody): string {
  const mac = createHmac('sha256', standardSigningKey(secret))
    .update(Buffer.from(`${id}.${timestampSeconds}.`, 'utf8'))
    .update(bytesOf(body))
    .digest('base64');
  return `v1,${mac}`;
}

/** Whether `X-Svc-Signature` is the HMAC of the raw body with the secret (constant-time). */
export function verifySvcSignature(body: RawBody, signature: string | null | undefined, secret: string): boolean {
  if (!signature || !secret) return false;
  return safeEqual(Buffer.from(signature.trim(), 'utf8'), Buffer.from(signSvc(secret, body), 'utf8'));
}

export interface StandardVerification {
  body: RawBody;
  headers: HeaderSource;
  /** the endpoint secret, or several (e.g. the previous one during a rotation on your side) */
  secret: string | readonly string[];
  /** how far `webhook-timestamp` may be from now; default 300 s */
  toleranceSeconds?: number;
  /** the current time in milliseconds (tests); default Date.now() */
  now?: number;
}

/**
 * Checks the Standard Webhooks headers: the timestamp within the tolerance, and at least one `v1` signature
 * matching one of the secrets (constant-time). Throws a `WebhookVerificationError` naming what failed.
 */
export function verifyStandardWebhook(options: StandardVerification): { id: string; timestamp: number } {
  const id = header(options.headers, 'webhook-id');
  const timestampText = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (!id || !timestampText || !signatures) {
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  }
  if (!/^\d{1,15}$/.test(timestampText)) throw new WebhookVerificationError('malformed webhook-timestamp');
  const timestamp = Number(timestampText);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (timestamp < nowSeconds - tolerance) throw new WebhookVerificationError('webhook-timestamp too old');
  if (timestamp > nowSeconds + tolerance) throw new WebhookVerificationError('webhook-timestamp in the future');
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  const given = signatures
    .split(' ')
    .map((s) => s.split(','))
    .filter(([version, mac]) => version === 'v1' && mac)
    .map(([, mac]) => Buffer.from(mac!, 'utf8'));
  for (const secret of secrets) {
    const expected = Buffer.from(signStandard(secret, id, timestamp, options.body).slice(3), 'utf8');
    // every signature is compared (no early exit on the first secret that matches a prefix of the list)
    if (given.map((mac) => safeEqual(mac, expected)).includes(true)) return { id, timestamp };
  }
  throw new WebhookVerificationError('no webhook-signature matches the secret');
}

export interface WebhookVerification extends StandardVerification {
  /**
   * `standard` (default): the Standard Webhooks headers, timestamp tolerance included; `svc`: `X-Svc-Signature`
   * only (no signed timestamp: deduplicate on `X-Svc-Delivery`); `both`: each must verify.
   */
  scheme?: 'standard' | 'svc' | 'both';
}

/**
 * Verifies a delivery and returns its parsed envelope (`event`, `deliveryId`, `timestamp`, `data`), typed by
 * event name. Throws a `WebhookVerificationError` when a signature, the timestamp or the envelope is wrong.
 */
export function verifyWebhook(options: WebhookVerification): WebhookEvent {
  const scheme = options.scheme ?? 'standard';
  if (scheme === 'standard' || scheme === 'both') verifyStandardWebhook(options);
  if (scheme === 'svc' || scheme === 'both') {
    const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
    const signature = header(options.headers, 'x-svc-signature');
    if (!secrets.map((s) => verifySvcSignature(options.body, signature, s)).includes(true)) {
      throw new WebhookVerificationError('X-Svc-Signature does not match the secret');
    }
  }
  let envelope: unknown;
  try {
    envelope = JSON.parse(bytesOf(options.body).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
  const e = envelope as Partial<WebhookEvent> | null;
  if (!e || typeof e.event !== 'string' || typeof e.deliveryId !== 'string' || typeof e.data !== 'object') {
    throw new WebhookVerificationError('the body is not a webhook envelope');
  }
  const delivery = header(options.headers, 'x-svc-delivery') ?? header(options.headers, 'webhook-id');
  if (delivery && delivery !== e.deliveryId) {
    throw new WebhookVerificationError('the delivery id of the headers differs from the body');
  }
  return envelope as WebhookEvent;
}
