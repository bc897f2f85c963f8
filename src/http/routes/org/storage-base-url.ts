import { isIP } from 'node:net';

/**
 * Rule 4.1.3: the white-label storage base URL must use https and a public domain name: no localhost, no IP
 * literal (v4 or v6), no `.local` or other special-use name, no single-label host, no credentials, query or
 * fragment. Returns the normalized URL (no trailing slash) or the reason it is refused.
 */
const SPECIAL_USE_SUFFIXES = [
  'localhost',
  'local',
  'localdomain',
  'internal',
  'intranet',
  'lan',
  'home',
  'corp',
  'private',
  'test',
  'invalid',
  'example',
  'onion',
  'arpa',
];

export type StorageBaseUrlCheck = { ok: true; value: string; host: string } | { ok: false; reason: string };

export function checkStorageBaseUrl(input: string): StorageBaseUrlCheck {
  const raw = input.trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL such as https://docs.example.com' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'must use https' };
  if (url.username || url.password) return { ok: false, reason: 'must not contain credentials' };
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) {
    return { ok: false, reason: 'must not contain a query or fragment' };
  }
  if (url.port) return { ok: false, reason: 'must not set a port' };
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host.startsWith('[') || isIP(host) !== 0 || /^[0-9.]+$/.test(host)) {
    return { ok: false, reason: 'must be a domain name, not an IP address' };
  }
  const labels = host.split('.');
  if (labels.length < 2 || labels.some((l) => l === '')) {
    return { ok: false, reason: 'must be a public domain name (a host without a domain is refused)' };
  }
  const tld = labels[labels.length - 1]!;
  if (SPECIAL_USE_SUFFIXES.includes(tld) || host === 'localhost') {
    return { ok: false, reason: `must be a public domain name (.${tld} is not public)` };
  }
  if (!/^(xn--[a-z0-9-]+|[a-z]{2,63})$/.test(tld)) {
    return { ok: false, reason: 'must end in a public top-level domain' };
  }
  if (labels.some((l) => l.length > 63 || !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(l))) {
    return { ok: false, reason: 'must be a valid domain name' };
  }
  const path = url.pathname.replace(/\/+$/, '');
  return { ok: true, value: `https://${host}${path}`, host };
}
