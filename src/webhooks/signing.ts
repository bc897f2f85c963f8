import { createHmac } from 'node:crypto';

/**
 * Webhook signatures. Two schemes are sent side by side:
 *
 * - the spec's `X-Svc-Signature: sha256=<lowercase hex HMAC-SHA256 of the raw body>`, keyed with the UTF-8
 *   bytes of the endpoint secret exactly as registered (the current secret only);
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-signature: v1,<base64 HMAC-SHA256 of
 *   "<webhook-id>.<webhook-timestamp>.<body>">`, space-separated, one per valid secret (the current one and,
 *   for 24 h after a rotation, the previous one). The key is the secret's UTF-8 bytes, or, for a secret
 *   written `whsec_<base64>` (the Standard Webhooks format), the base64-decoded bytes after the prefix.
 */

export const STANDARD_SECRET_PREFIX = 'whsec_';

/** The HMAC key of the Standard Webhooks signature for a secret. */
export function standardSigningKey(secret: string): Buffer {
  if (secret.startsWith(STANDARD_SECRET_PREFIX)) {
    return Buffer.from(secret.slice(STANDARD_SECRET_PREFIX.length), 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/** Whether a `whsec_` secret carries valid base64 of a usable key (16 to 64 bytes). */
export function isValidStandardSecret(secret: string): boolean {
  if (!secret.startsWith(STANDARD_SECRET_PREFIX)) return true;
  const b64 = secret.slice(STANDARD_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return false;
  const bytes = Buffer.from(b64, 'base64').length;
  return bytes >= 16 && bytes <= 64;
}

/** `sha256=<hex>` of the X-Svc-Signature header. */
export function svcSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body, 'utf8').digest('hex')}`;
}

/** One `v1,<base64>` Standard Webhooks signature. */
export function standardSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', standardSigningKey(secret))
    .update(`${id}.${timestampSeconds}.${body}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

/** The signing headers of one attempt (none when the endpoint has no secret). */
export function signatureHeaders(
  secrets: { current: string | null; previous: string | null },
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  if (!secrets.current) return {};
  const standard = [secrets.current, ...(secrets.previous ? [secrets.previous] : [])].map((s) =>
    standardSignature(s, id, timestampSeconds, body),
  );
  return {
    'x-svc-signature': svcSignature(secrets.current, body),
    'webhook-signature': standard.join(' '),
  };
}
