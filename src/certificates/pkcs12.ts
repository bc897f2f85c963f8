import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import forge from 'node-forge';

/**
 * Reads A1 certificates (PKCS#12 / .pfx) with node-forge, which also opens the legacy RC2/3DES files that
 * Node's OpenSSL 3 refuses, and pulls the ICP-Brasil identity (CNPJ / CPF) out of the certificate.
 */

export interface A1Certificate {
  /** PKCS#8 PEM of the private key. */
  keyPem: string;
  /** PEM of the end-entity certificate (the one matching the key). */
  certPem: string;
  /** The other certificates of the file (chain), PEM. */
  chainPem: string[];
  privateKey: KeyObject;
  subjectCN: string;
  /** ICP-Brasil SAN otherName 2.16.76.1.3.3, else the `:CNPJ` suffix of the CN. */
  cnpj: string | null;
  /** ICP-Brasil SAN otherName 2.16.76.1.3.1 (e-CPF), else an `:CPF` (11 digits) suffix of the CN. */
  cpf: string | null;
  validFrom: Date;
  validUntil: Date;
  /** SHA-256 of the certificate DER, lowercase hex without separators. */
  fingerprintSha256: string;
  /** Uppercase hex, as OpenSSL prints it. */
  serialNumber: string;
}

export type Pkcs12ErrorCode =
  | 'CERTIFICATE_NOT_PKCS12'
  | 'CERTIFICATE_WRONG_PASSWORD'
  | 'CERTIFICATE_NO_PRIVATE_KEY'
  | 'CERTIFICATE_EXPIRED'
  | 'CERTIFICATE_NOT_YET_VALID';

export type Pkcs12Result =
  | { ok: true; value: A1Certificate }
  | { ok: false; error: { code: Pkcs12ErrorCode; message: string } };

export interface CertificateIdentity {
  subjectCN: string;
  cnpj: string | null;
  cpf: string | null;
}

const OID_SAN = '2.5.29.17';
const OID_CN = '2.5.4.3';
const OID_ICP_PF_DATA = '2.16.76.1.3.1';
const OID_ICP_PJ_CNPJ = '2.16.76.1.3.3';
const CNPJ_PATTERN = /^[0-9A-Z]{12}[0-9]{2}$/;

function fail(code: Pkcs12ErrorCode, message: string): Pkcs12Result {
  return { ok: false, error: { code, message } };
}

/** Reads one DER/BER header at `at`: tag, content start and length (null: indefinite, BER). */
function derHeader(buf: Buffer, at: number): { tag: number; start: number; length: number | null } | null {
  if (at + 2 > buf.length) return null;
  const tag = buf[at]!;
  const first = buf[at + 1]!;
  if (first < 0x80) return { tag, start: at + 2, length: first };
  if (first === 0x80) return { tag, start: at + 2, length: null };
  const n = first & 0x7f;
  if (n > 4 || at + 2 + n > buf.length) return null;
  let length = 0;
  for (let i = 0; i < n; i++) length = length * 256 + buf[at + 2 + i]!;
  return { tag, start: at + 2 + n, length };
}

const OID_PKCS7_DATA = Buffer.from('2a864886f70d010701', 'hex');
const OID_PKCS7_SIGNED = Buffer.from('2a864886f70d010702', 'hex');

/**
 * Whether the bytes have the outer structure of a PKCS#12 PFX (RFC 7292): SEQUENCE { INTEGER 3,
 * ContentInfo SEQUENCE { OID pkcs7-data | pkcs7-signedData, … }, … } filling the whole file. Checked before the
 * file reaches the ASN.1 library, so anything else is CERTIFICATE_NOT_PKCS12 with a plain message.
 */
export function looksLikePkcs12(file: Buffer): boolean {
  const outer = derHeader(file, 0);
  if (outer?.tag !== 0x30) return false;
  if (outer.length !== null && outer.start + outer.length !== file.length) return false;
  const version = derHeader(file, outer.start);
  if (version?.tag !== 0x02 || version.length !== 1 || file[version.start] !== 3) return false;
  const authSafe = derHeader(file, version.start + 1);
  if (authSafe?.tag !== 0x30) return false;
  const oid = derHeader(file, authSafe.start);
  if (oid?.tag !== 0x06 || oid.length === null || oid.start + oid.length > file.length) return false;
  const value = file.subarray(oid.start, oid.start + oid.length);
  return value.equals(OID_PKCS7_DATA) || value.equals(OID_PKCS7_SIGNED);
}

const NOT_PKCS12 = 'The file is not a PKCS#12 (.pfx/.p12) certificate.';

/**
 * Opens a PKCS#12 file, checks its password and the certificate's validity at `now`, and returns the key,
 * the certificate and the ICP-Brasil identity. Every expected problem comes back as an error value.
 */
export function readPkcs12(file: Buffer, password: string, now: Date = new Date()): Pkcs12Result {
  if (!looksLikePkcs12(file)) return fail('CERTIFICATE_NOT_PKCS12', NOT_PKCS12);
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    const der = forge.asn1.fromDer(forge.util.createBuffer(file.toString('binary')), {
      strict: false,
      parseAllBytes: true,
    } as never);
    p12 = forge.pkcs12.pkcs12FromAsn1(der, false, password);
  } catch (err) {
    const message = (err as Error).message ?? String(err);
    if (/MAC could not be verified|wrong password|Invalid password/i.test(message)) {
      return fail('CERTIFICATE_WRONG_PASSWORD', 'The certificate password is wrong.');
    }
    if (/not an PKCS#12|Cannot read|Too few bytes|Unparsed DER|unsupported|not.*supported/i.test(message)) {
      return fail('CERTIFICATE_NOT_PKCS12', NOT_PKCS12);
    }
    // A PFX without a MAC only shows a wrong password when its contents fail to decrypt or parse (the
    // library's message stays out of the answer: it names internals, not the caller's mistake).
    return fail('CERTIFICATE_WRONG_PASSWORD', 'The certificate could not be decrypted with this password.');
  }

  const keys: KeyObject[] = [];
  for (const bagType of [forge.pki.oids.pkcs8ShroudedKeyBag, forge.pki.oids.keyBag]) {
    for (const bag of p12.getBags({ bagType })[bagType] ?? []) {
      const key = keyObjectOf(bag);
      if (key) keys.push(key);
    }
  }
  if (keys.length === 0) {
    return fail('CERTIFICATE_NO_PRIVATE_KEY', 'The PKCS#12 file has no private key (export it with the key).');
  }

  const certs: X509Certificate[] = [];
  const certBagType = forge.pki.oids.certBag;
  for (const bag of p12.getBags({ bagType: certBagType })[certBagType] ?? []) {
    const der = certificateDerOf(bag);
    if (der) certs.push(new X509Certificate(der));
  }

  let privateKey: KeyObject | undefined;
  let cert: X509Certificate | undefined;
  for (const key of keys) {
    cert = certs.find((c) => safeCheckPrivateKey(c, key));
    if (cert) {
      privateKey = key;
      break;
    }
  }
  if (!cert || !privateKey) {
    return fail('CERTIFICATE_NOT_PKCS12', 'The PKCS#12 file has no certificate matching its private key.');
  }

  const validFrom = new Date(cert.validFrom);
  const validUntil = new Date(cert.validTo);
  if (now.getTime() < validFrom.getTime()) {
    return fail('CERTIFICATE_NOT_YET_VALID', `The certificate is only valid from ${validFrom.toISOString()}.`);
  }
  if (now.getTime() > validUntil.getTime()) {
    return fail('CERTIFICATE_EXPIRED', `The certificate expired on ${validUntil.toISOString()}.`);
  }

  const identity = readCertificateIdentity(cert.raw);
  return {
    ok: true,
    value: {
      keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      certPem: cert.toString(),
      chainPem: certs.filter((c) => c !== cert).map((c) => c.toString()),
      privateKey,
      subjectCN: identity.subjectCN,
      cnpj: identity.cnpj,
      cpf: identity.cpf,
      validFrom,
      validUntil,
      fingerprintSha256: createHash('sha256').update(cert.raw).digest('hex'),
      serialNumber: cert.serialNumber.toUpperCase(),
    },
  };
}

function safeCheckPrivateKey(cert: X509Certificate, key: KeyObject): boolean {
  try {
    return cert.checkPrivateKey(key);
  } catch {
    return false;
  }
}

function keyObjectOf(bag: forge.pkcs12.Bag): KeyObject | undefined {
  let info: forge.asn1.Asn1 | undefined;
  if (bag.key) {
    info = forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key));
  } else if (bag.asn1) {
    // forge only understands RSA keys; others stay as the decrypted PrivateKeyInfo.
    info = bag.asn1;
  }
  if (!info) return undefined;
  try {
    const der = Buffer.from(forge.asn1.toDer(info).getBytes(), 'binary');
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } catch {
    return undefined;
  }
}

function certificateDerOf(bag: forge.pkcs12.Bag): Buffer | undefined {
  try {
    if (bag.cert) return Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(bag.cert)).getBytes(), 'binary');
    if (bag.asn1) return Buffer.from(forge.asn1.toDer(bag.asn1).getBytes(), 'binary');
  } catch {
    return undefined;
  }
  return undefined;
}

/** Converts a certificate given as PEM text or DER bytes to DER. */
export function certificateToDer(cert: string | Buffer): Buffer {
  if (Buffer.isBuffer(cert)) return cert;
  return new X509Certificate(cert).raw;
}

/**
 * The subject CN and the ICP-Brasil CNPJ / CPF of a certificate (PEM or DER). Reads the SAN otherName
 * fields itself, from the raw ASN.1, so it works whatever the key algorithm.
 */
export function readCertificateIdentity(cert: string | Buffer): CertificateIdentity {
  const der = certificateToDer(cert);
  const root = forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
  const tbs = (root.value as forge.asn1.Asn1[])[0];
  const fields = tbs.value as forge.asn1.Asn1[];
  // TBSCertificate: [0] version?, serial, signature, issuer, validity, subject, spki, [1]?, [2]?, [3] extensions?
  const offset = fields[0].tagClass === forge.asn1.Class.CONTEXT_SPECIFIC ? 1 : 0;
  const subject = fields[offset + 4];
  const subjectCN = readCommonName(subject);

  let cnpj: string | null = null;
  let cpf: string | null = null;
  for (const field of fields) {
    if (field.tagClass !== forge.asn1.Class.CONTEXT_SPECIFIC || field.type !== 3) continue;
    const extensions = (field.value as forge.asn1.Asn1[])[0]?.value as forge.asn1.Asn1[] | undefined;
    for (const ext of extensions ?? []) {
      const parts = ext.value as forge.asn1.Asn1[];
      if (forge.asn1.derToOid(parts[0].value as string) !== OID_SAN) continue;
      const octets = parts[parts.length - 1].value as string;
      const names = forge.asn1.fromDer(octets).value as forge.asn1.Asn1[];
      for (const name of names) {
        if (name.tagClass !== forge.asn1.Class.CONTEXT_SPECIFIC || name.type !== 0 || !name.constructed) continue;
        const [typeId, wrapped] = name.value as forge.asn1.Asn1[];
        if (!typeId || !wrapped) continue;
        const oid = forge.asn1.derToOid(typeId.value as string);
        const text = primitiveText(wrapped).trim();
        if (oid === OID_ICP_PJ_CNPJ) {
          const candidate = text.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
          if (CNPJ_PATTERN.test(candidate)) cnpj = candidate;
        } else if (oid === OID_ICP_PF_DATA) {
          const digits = text.replace(/\s/g, '');
          // birth date (8) + CPF (11) + NIS (11) + RG (15) + issuer (6); a bare CPF is accepted too.
          const candidate = digits.length === 11 ? digits : digits.slice(8, 19);
          if (/^[0-9]{11}$/.test(candidate)) cpf = candidate;
        }
      }
    }
  }

  const suffix = /:([0-9A-Z]{12}[0-9]{2}|[0-9]{11})$/.exec(subjectCN.trim());
  if (suffix) {
    if (!cnpj && suffix[1].length === 14) cnpj = suffix[1];
    if (!cpf && suffix[1].length === 11) cpf = suffix[1];
  }
  return { subjectCN, cnpj, cpf };
}

function readCommonName(name: forge.asn1.Asn1): string {
  let cn = '';
  for (const rdn of (name.value as forge.asn1.Asn1[]) ?? []) {
    for (const attr of (rdn.value as forge.asn1.Asn1[]) ?? []) {
      const [type, value] = attr.value as forge.asn1.Asn1[];
      if (type && value && forge.asn1.derToOid(type.value as string) === OID_CN) cn = decodeString(value);
    }
  }
  return cn;
}

/** The text of the first primitive value inside an ASN.1 node (otherName values are wrapped in [0]). */
function primitiveText(node: forge.asn1.Asn1): string {
  if (!node.constructed || typeof node.value === 'string') return decodeString(node);
  for (const child of node.value as forge.asn1.Asn1[]) {
    const text = primitiveText(child);
    if (text) return text;
  }
  return '';
}

function decodeString(node: forge.asn1.Asn1): string {
  const raw = typeof node.value === 'string' ? node.value : '';
  const bytes = Buffer.from(raw, 'binary');
  if (node.tagClass === forge.asn1.Class.UNIVERSAL && node.type === forge.asn1.Type.BMPSTRING) {
    const swapped = Buffer.from(bytes);
    swapped.swap16();
    return swapped.toString('utf16le');
  }
  return bytes.toString('utf8');
}
