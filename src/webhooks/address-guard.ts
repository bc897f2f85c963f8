import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * The SSRF guard of webhook targets: a delivery may only reach the public internet. Applied to the URL at
 * registration (name, literal address and DNS answers) and again at every attempt after resolving the
 * name, on the very addresses the connection then uses (see sender.ts), so a name that changes its answer
 * between the check and the connection (DNS rebinding) cannot reach an internal address.
 *
 * `allowInsecure` (NFSE_WEBHOOKS_ALLOW_INSECURE, development and tests only) allows http:// and
 * non-public addresses.
 */

export type GuardResult<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Ends the refusals the development setting lifts (plain http, non-public addresses): a developer pointing an
 * endpoint at a receiver on their machine learns which setting allows it.
 */
export const ALLOW_INSECURE_HINT =
  ' (in development, NFSE_WEBHOOKS_ALLOW_INSECURE=true allows http and receivers on this machine or a private network)';

/** One resolved address: what the connection will use. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address (A and AAAA); injectable so tests can stand in for DNS. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

// [first address, prefix length, reason]
const IPV4_BLOCKS: [string, number, string][] = [
  ['0.0.0.0', 8, 'a "this network" address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a carrier-grade NAT (CGNAT) address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.169.254', 32, 'the cloud metadata address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'an IETF protocol assignment address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.88.99.0', 24, 'a 6to4 relay anycast address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
  // Azure's wire server (instance metadata and agent channel) sits on a public-looking address
  ['168.63.129.16', 32, 'a cloud metadata address'],
];

const IPV6_BLOCKS: [string, number, string][] = [
  ['::', 128, 'the unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['100::', 64, 'a discard-only address'],
  ['64:ff9b:1::', 48, 'a local-use NAT64 address'],
  ['2001::', 23, 'an IETF special-purpose address'],
  ['2001:db8::', 32, 'a documentation address'],
  ['fc00::', 7, 'a unique local (private) address'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
];

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** The 8 groups of an IPv6 address as numbers (handles `::` and an embedded dotted IPv4 tail). */
function ipv6Groups(ip: string): number[] {
  let text = ip.toLowerCase().split('%')[0]!;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = ipv4ToInt(text.slice(lastColon + 1));
    tail = [Math.floor(v4 / 65536), v4 % 65536];
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const parse = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const gap = text.indexOf('::');
  if (gap < 0) return [...parse(text), ...tail];
  const head = parse(text.slice(0, gap));
  const rest = parse(text.slice(gap + 2));
  return [...head, ...new Array(8 - tail.length - head.length - rest.length).fill(0), ...rest, ...tail];
}

function ipv6ToBigInt(ip: string): bigint {
  return ipv6Groups(ip).reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function inV4Block(value: number, base: string, prefix: number): boolean {
  const size = 2 ** (32 - prefix);
  const start = ipv4ToInt(base);
  return value >= start && value < start + size;
}

function inV6Block(value: bigint, base: string, prefix: number): boolean {
  const shift = BigInt(128 - prefix);
  return value >> shift === ipv6ToBigInt(base) >> shift;
}

function v4FromInt(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * Why an IP address is not a public unicast address, or null when it is. IPv6 forms that embed an IPv4
 * address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible `::a.b.c.d`,
 * NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32`, ISATAP `…:5efe:a.b.c.d`) are
 * judged by the embedded address; local-use NAT64 and Teredo are refused whatever they embed.
 */
export function forbiddenAddressReason(ip: string): string | null {
  const kind = isIP(ip.split('%')[0]!);
  if (kind === 4) {
    const value = ipv4ToInt(ip);
    for (const [base, prefix, reason] of IPV4_BLOCKS) if (inV4Block(value, base, prefix)) return reason;
    return null;
  }
  if (kind !== 6) return 'not an IP address';
  const value = ipv6ToBigInt(ip);
  const low32 = Number(value & 0xffffffffn);
  const embedded = (v4: number, form: string): string | null => {
    const inner = forbiddenAddressReason(v4FromInt(v4));
    return inner ? `${inner} (${form} ${v4FromInt(v4)})` : null;
  };
  // ::ffff:0:0/96 (IPv4-mapped), ::ffff:0:0:0/96 (IPv4-translated, SIIT) and ::/96 (IPv4-compatible, deprecated)
  // carry an IPv4 address in the low 32 bits
  if (value >> 32n === 0xffffn) return embedded(low32, 'IPv4-mapped');
  if (value >> 32n === 0xffff0000n) return embedded(low32, 'IPv4-translated');
  if (value >> 32n === 0n && value > 1n) return embedded(low32, 'IPv4-compatible');
  // NAT64 well-known prefix 64:ff9b::/96: the IPv4 address in the low 32 bits
  if (inV6Block(value, '64:ff9b::', 96)) return embedded(low32, 'NAT64');
  // NAT64 local-use 64:ff9b:1::/48 (RFC 8215): a translator of a private network, never a public target
  if (inV6Block(value, '64:ff9b:1::', 48)) return 'a local-use NAT64 address';
  // 6to4 2002::/16: the IPv4 address in bits 16-47
  if (inV6Block(value, '2002::', 16)) return embedded(Number((value >> 80n) & 0xffffffffn), '6to4');
  // Teredo 2001::/32: the server's IPv4 in bits 32-63, the client's (inverted) in the low 32 bits; a tunnel,
  // never a webhook target even when both are public
  if (inV6Block(value, '2001::', 32)) {
    return (
      embedded(Number((value >> 64n) & 0xffffffffn), 'Teredo server') ??
      embedded(~low32 >>> 0, 'Teredo client') ??
      'a Teredo tunnel address'
    );
  }
  // ISATAP: an interface identifier 0000:5efe or 0200:5efe followed by the IPv4 address
  const isatap = Number((value >> 32n) & 0xfdffffffn);
  if (isatap === 0x5efe) {
    const inner = embedded(low32, 'ISATAP');
    if (inner) return inner;
  }
  for (const [base, prefix, reason] of IPV6_BLOCKS) if (inV6Block(value, base, prefix)) return reason;
  return null;
}

/** Host names that never denote a public internet host, whatever DNS says. */
function forbiddenHostName(host: string): string | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || name === 'localhost.localdomain') {
    return 'a loopback host name';
  }
  if (name === 'metadata.google.internal' || name === 'metadata') return 'a cloud metadata host name';
  for (const suffix of ['.internal', '.local', '.home.arpa', '.intranet', '.lan']) {
    if (name.endsWith(suffix)) return `a private host name (${suffix})`;
  }
  return null;
}

/** What the URL syntax check hands on: the parsed URL and the host in connectable form. */
export interface CheckedUrl {
  url: URL;
  /** the host name, or the IP literal without IPv6 brackets */
  host: string;
  /** the host is an IP literal */
  literal: boolean;
}

/**
 * The checks that need no network: scheme, credentials, and a host that is a forbidden name or a
 * forbidden literal address.
 */
export function checkWebhookUrlSyntax(text: string, allowInsecure: boolean): GuardResult<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, error: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) {
    return { ok: false, error: `must use https${url.protocol === 'http:' ? ALLOW_INSECURE_HINT : ''}` };
  }
  if (url.username || url.password) return { ok: false, error: 'must not contain credentials' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!host) return { ok: false, error: 'must have a host' };
  const literal = isIP(host) !== 0;
  if (!allowInsecure) {
    const reason = literal ? forbiddenAddressReason(host) : forbiddenHostName(host);
    if (reason) {
      return { ok: false, error: `must reach a public internet address; ${host} is ${reason}${ALLOW_INSECURE_HINT}` };
    }
  }
  return { ok: true, value: { url, host, literal } };
}

/**
 * Resolves the URL's host and checks every address it resolves to (one forbidden answer refuses the whole
 * name: a name mixing public and internal answers is not trusted). The addresses returned are the ones to
 * connect to.
 */
export async function resolveWebhookTarget(
  checked: CheckedUrl,
  allowInsecure: boolean,
  resolve: HostResolver = systemResolver,
): Promise<GuardResult<ResolvedAddress[]>> {
  let addresses: ResolvedAddress[];
  if (checked.literal) {
    addresses = [{ address: checked.host, family: isIP(checked.host) === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(checked.host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
      return { ok: false, error: `DNS resolution of ${checked.host} failed (${code})` };
    }
    if (addresses.length === 0) return { ok: false, error: `${checked.host} has no address` };
  }
  if (!allowInsecure) {
    for (const a of addresses) {
      const reason = forbiddenAddressReason(a.address);
      if (reason) {
        return {
          ok: false,
          error: `must reach a public internet address; ${checked.host} resolves to ${a.address}, ${reason}${ALLOW_INSECURE_HINT}`,
        };
      }
    }
  }
  return { ok: true, value: addresses };
}

/**
 * The registration check: the syntax rules, then the DNS answers when the name resolves now. A name that
 * does not resolve yet is accepted (a receiver may be set up after its endpoint); every attempt checks the
 * answers again before connecting.
 */
export async function checkWebhookUrl(
  text: string,
  allowInsecure: boolean,
  resolve: HostResolver = systemResolver,
): Promise<GuardResult<URL>> {
  const syntax = checkWebhookUrlSyntax(text, allowInsecure);
  if (!syntax.ok) return syntax;
  if (allowInsecure) return { ok: true, value: syntax.value.url };
  const target = await resolveWebhookTarget(syntax.value, allowInsecure, resolve);
  if (!target.ok && !target.error.startsWith('DNS resolution') && !target.error.endsWith('has no address')) {
    return target;
  }
  return { ok: true, value: syntax.value.url };
}
