import { createHmac, timingSafeEqual } from 'node:crypto';
import { standardSigningKey } from '../../webhooks/signing.ts';

/**
 * `nfse webhooks verify`: checks a captured delivery (raw body bytes + its headers) against an endpoint secret,
 * with both schemes the service signs with (src/webhooks/signing.ts): `X-Svc-Signature: sha256=<hex>` and the
 * Standard Webhooks `webhook-id` / `webhook-timestamp` / `webhook-signature: v1,<base64> …`.
 */

/** Headers from a file: a JSON object, or HTTP header lines (`Name: value`, e.g. `curl -D`), names lower-cased. */
export function parseHeaderFile(text: string): Record<string, string> {
  const trimmed = text.trim();
  const out: Record<string, string> = {};
  if (trimmed.startsWith('{')) {
    const parsed = JSON.parse(trimmed) as Record<string, unknown>;
    for (const [name, value] of Object.entries(parsed)) {
      out[name.toLowerCase()] = Array.isArray(value) ? value.map(String).join(' ') : String(value);
    }
    return out;
  }
  for (const line of trimmed.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || /^HTTP\//i.test(line) || /^(POST|PUT) /i.test(line)) continue;
    out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return out;
}

const same = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

export interface VerifyReport {
  ok: boolean;
  lines: string[];
}

export function verifyDelivery(
  body: Buffer,
  headers: Record<string, string>,
  secret: string,
  options: { toleranceSeconds: number; nowSeconds?: number },
): VerifyReport {
  const lines: string[] = [];
  let ok = true;
  let schemes = 0;

  const svc = headers['x-svc-signature'];
  if (svc === undefined) lines.push('X-Svc-Signature: absent');
  else {
    schemes++;
    const expected = `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
    const valid = same(Buffer.from(svc), Buffer.from(expected));
    ok &&= valid;
    lines.push(`X-Svc-Signature: ${valid ? 'valid' : 'INVALID (not the HMAC-SHA256 of this body with this secret)'}`);
  }

  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signature = headers['webhook-signature'];
  if (signature === undefined) lines.push('webhook-signature: absent');
  else if (!id || !timestamp || !/^\d+$/.test(timestamp)) {
    ok = false;
    lines.push('webhook-signature: INVALID (webhook-id and a numeric webhook-timestamp are required with it)');
  } else {
    schemes++;
    const expected = createHmac('sha256', standardSigningKey(secret))
      .update(`${id}.${timestamp}.`)
      .update(body)
      .digest();
    const signatures = signature.split(' ').filter(Boolean);
    const match = signatures.findIndex((s) => {
      const [version, mac] = s.split(',');
      return version === 'v1' && same(Buffer.from(mac ?? '', 'base64'), expected);
    });
    ok &&= match >= 0;
    lines.push(
      `webhook-signature: ${
        match >= 0
          ? `valid (signature ${match + 1} of ${signatures.length})`
          : `INVALID (none of ${signatures.length} signature(s) matches this body, id, timestamp and secret)`
      }`,
    );
    const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
    const age = now - Number(timestamp);
    const when = new Date(Number(timestamp) * 1000).toISOString();
    if (options.toleranceSeconds > 0 && Math.abs(age) > options.toleranceSeconds) {
      ok = false;
      lines.push(
        `webhook-timestamp: ${when}, ${age} s old: OUTSIDE the ${options.toleranceSeconds} s replay window (--tolerance 0 to skip)`,
      );
    } else lines.push(`webhook-timestamp: ${when} (${age} s old)`);
  }
  const delivery = headers['x-svc-delivery'];
  if (delivery && id && delivery !== id) {
    ok = false;
    lines.push(`X-Svc-Delivery (${delivery}) differs from webhook-id (${id})`);
  }
  if (schemes === 0) {
    ok = false;
    lines.push('no signature header: was the endpoint registered with a secret?');
  }
  return { ok, lines };
}
