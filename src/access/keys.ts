import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API key formats: organization tokens `svc_org_…`, project keys `svc_…`, the operator key `svc_admin_…`; their
 * stored hash and visible prefix. Used by the HTTP edge (authentication) and the repositories (issuing keys).
 */
export type KeyKind = 'admin' | 'org' | 'project';

export function keyKindOf(key: string): KeyKind | null {
  if (key.startsWith('svc_admin_')) return 'admin';
  if (key.startsWith('svc_org_')) return 'org';
  if (key.startsWith('svc_')) return 'project';
  return null;
}

export function newOrgToken(): string {
  return `svc_org_${randomBytes(20).toString('hex')}`;
}

/** `svc_` + 40 hex characters: never collides with the `svc_org_`/`svc_admin_` prefixes. */
export function newProjectKey(): string {
  return `svc_${randomBytes(20).toString('hex')}`;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The short visible prefix shown in listings. */
export function keyPrefix(key: string): string {
  return key.startsWith('svc_org_') ? key.slice(0, 16) : key.slice(0, 12);
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
