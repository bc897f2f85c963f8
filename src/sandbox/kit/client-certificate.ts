import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import forge from 'node-forge';

/**
 * Who is calling a sandbox: the TLS client certificate (with the ICP-Brasil identity it carries) or, for providers
 * that authenticate by HTTP, the `Authorization` header. The sandbox's own reading, independent of the service's
 * certificate code (a bug there must not hide behind the same bug here).
 */

export interface PeerCertificate {
  /** DER bytes. */
  raw: Buffer;
  validFrom: Date;
  validTo: Date;
  /** SHA-256 fingerprint, `AA:BB:…` as OpenSSL prints it. */
  fingerprint256: string;
  /** Whether the chain verified against the server's client CAs (always false when none were configured). */
  authorized: boolean;
}

/** The client certificate presented in the TLS handshake, or null (plain HTTP, or none presented). */
export function peerCertificateOf(req: IncomingMessage): PeerCertificate | null {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return null;
  const peer = socket.getPeerCertificate(false);
  if (!peer?.raw) return null;
  return {
    raw: peer.raw,
    validFrom: new Date(peer.valid_from),
    validTo: new Date(peer.valid_to),
    fingerprint256: peer.fingerprint256,
    authorized: socket.authorized === true,
  };
}

export interface IcpBrasilIdentity {
  subjectCN: string;
  /** SAN otherName 2.16.76.1.3.3 (e-CNPJ), else a `:CNPJ` suffix of the CN. */
  cnpj: string | null;
  /** SAN otherName 2.16.76.1.3.1 (e-CPF: birth date + CPF + …), else an `:CPF` (11 digits) suffix of the CN. */
  cpf: string | null;
}

const OID_COMMON_NAME = '2.5.4.3';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const OID_PF_DATA = '2.16.76.1.3.1';
const OID_PJ_CNPJ = '2.16.76.1.3.3';
/** 12 alphanumeric characters (the alphanumeric CNPJ of 2026) and 2 check digits. */
const CNPJ = /^[0-9A-Z]{12}[0-9]{2}$/;

type Node = forge.asn1.Asn1;

function children(node: Node | undefined): Node[] {
  return node && Array.isArray(node.value) ? (node.value as Node[]) : [];
}

function oidOf(node: Node | undefined): string | null {
  return node && typeof node.value === 'string' && node.type === forge.asn1.Type.OID
    ? forge.asn1.derToOid(node.value)
    : null;
}

/** The text of a string node (BMPString is UTF-16BE), or of the first string found inside a constructed one. */
function textOf(node: Node | undefined): string {
  if (!node) return '';
  if (typeof node.value !== 'string') {
    for (const inner of children(node)) {
      const text = textOf(inner);
      if (text) return text;
    }
    return '';
  }
  const bytes = Buffer.from(node.value, 'binary');
  if (node.tagClass === forge.asn1.Class.UNIVERSAL && node.type === forge.asn1.Type.BMPSTRING) {
    return Buffer.from(bytes).swap16().toString('utf16le');
  }
  return bytes.toString('utf8');
}

/** Reads the subject CN and the ICP-Brasil CNPJ / CPF of a certificate (DER); throws on a malformed one. */
export function readIcpBrasilIdentity(der: Buffer): IcpBrasilIdentity {
  const certificate = forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
  const tbs = children(certificate)[0];
  const fields = children(tbs);
  // TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serial, signature, issuer, validity, subject, … [3] extensions }
  const first = fields[0];
  const versioned = first?.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && first.type === 0;
  const subject = fields[versioned ? 5 : 4];
  if (!subject) throw new Error('certificate without a subject');

  let subjectCN = '';
  for (const rdn of children(subject)) {
    for (const attribute of children(rdn)) {
      const [type, value] = children(attribute);
      if (oidOf(type) === OID_COMMON_NAME) subjectCN = textOf(value);
    }
  }

  let cnpj: string | null = null;
  let cpf: string | null = null;
  const extensions = fields.find((f) => f.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && f.type === 3);
  for (const extension of children(children(extensions)[0])) {
    const parts = children(extension);
    if (oidOf(parts[0]) !== OID_SUBJECT_ALT_NAME) continue;
    const octets = parts[parts.length - 1]?.value;
    if (typeof octets !== 'string') continue;
    for (const name of children(forge.asn1.fromDer(octets))) {
      // otherName [0] { type-id OID, [0] EXPLICIT value }
      if (name.tagClass !== forge.asn1.Class.CONTEXT_SPECIFIC || name.type !== 0 || !name.constructed) continue;
      const [typeId, value] = children(name);
      const oid = oidOf(typeId);
      const text = textOf(value).trim();
      if (oid === OID_PJ_CNPJ) {
        const candidate = text.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
        if (CNPJ.test(candidate)) cnpj = candidate;
      } else if (oid === OID_PF_DATA) {
        const digits = text.replace(/\s/g, '');
        const candidate = digits.length === 11 ? digits : digits.slice(8, 19);
        if (/^[0-9]{11}$/.test(candidate)) cpf = candidate;
      }
    }
  }

  const suffix = /:([0-9A-Z]{12}[0-9]{2}|[0-9]{11})$/.exec(subjectCN.trim());
  if (suffix?.[1].length === 14) cnpj ??= suffix[1];
  if (suffix?.[1].length === 11) cpf ??= suffix[1];
  return { subjectCN, cnpj, cpf };
}

export type Authorization =
  | { scheme: 'basic'; user: string; password: string }
  | { scheme: 'bearer'; token: string }
  | { scheme: 'other'; name: string; value: string };

/** The `Authorization` header of a provider using HTTP authentication, or null when absent or unreadable. */
export function authorizationOf(headers: IncomingHttpHeaders): Authorization | null {
  const header = headers.authorization?.trim();
  if (!header) return null;
  const space = header.indexOf(' ');
  const name = space < 0 ? header : header.slice(0, space);
  const value = space < 0 ? '' : header.slice(space + 1).trim();
  if (name.toLowerCase() === 'bearer') return value ? { scheme: 'bearer', token: value } : null;
  if (name.toLowerCase() === 'basic') {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return null;
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    return { scheme: 'basic', user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return { scheme: 'other', name, value };
}
