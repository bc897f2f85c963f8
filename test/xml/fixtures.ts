import { spawnSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import forge from 'node-forge';
import { SignedXml } from 'xml-crypto';
import type { SigningKey } from '../../src/xml/sign.ts';

export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';
export const SAMPLES_DIR = new URL('../fixtures/national', import.meta.url).pathname;

/** A fresh RSA-2048 key with a self-signed ICP-Brasil-like A1 certificate (CNPJ in the CN suffix). */
export function createTestSigningKey(commonName = 'EMPRESA EXEMPLO LTDA:11222333000181'): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const forgePrivate = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01' + forge.util.bytesToHex(forge.random.getBytesSync(8));
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  const subject = [
    { name: 'commonName', value: commonName },
    { shortName: 'OU', value: 'Certificado PJ A1' },
    { name: 'organizationName', value: 'ICP-Brasil' },
    { name: 'countryName', value: 'BR' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, keyEncipherment: true, keyCertSign: true },
    { name: 'extKeyUsage', clientAuth: true, emailProtection: true },
  ]);
  cert.sign(forgePrivate, forge.md.sha256.create());
  return {
    privateKey: createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' })),
    certificatePem: forge.pki.certificateToPem(cert),
  };
}

/** A sample DPS reduced to what our builders write: no BOM, declaration, signature or whitespace between tags. */
export function loadSampleDps(file: string): string {
  return readFileSync(join(SAMPLES_DIR, file), 'utf8')
    .replace(/^\uFEFF/, '')
    .replace(/^<\?xml[^?]*\?>/, '')
    .replace(/>\s+</g, '><')
    .replace(/<Signature[\s\S]*?<\/Signature>/g, '')
    .trim();
}

/** Verifies the n-th (default: last) Signature with xml-crypto against the given certificate. */
export function verifyWithXmlCrypto(
  xml: string,
  certificatePem: string,
  signatureIndex = -1,
): { ok: boolean; references: string[]; error?: string } {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const signatures = doc.getElementsByTagNameNS(DSIG_NS, 'Signature');
  const node = signatures.item(signatureIndex < 0 ? signatures.length + signatureIndex : signatureIndex);
  if (!node) return { ok: false, references: [], error: 'no Signature element' };
  const verifier = new SignedXml({ publicCert: certificatePem });
  try {
    verifier.loadSignature(node);
    const ok = verifier.checkSignature(xml);
    return { ok, references: ok ? verifier.getSignedReferences() : [] };
  } catch (err) {
    return { ok: false, references: [], error: (err as Error).message };
  }
}

/** Verifies with `xmlsec1 --verify`, trusting only the given certificate. `idElement` registers its Id attribute. */
export function verifyWithXmlsec1(
  xml: string,
  certificatePem: string,
  idElement?: string,
): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'xmlsec-'));
  try {
    const certPath = join(dir, 'cert.pem');
    const docPath = join(dir, 'signed.xml');
    writeFileSync(certPath, certificatePem);
    writeFileSync(docPath, xml);
    const args = ['--verify', '--trusted-pem', certPath];
    if (idElement) args.push('--id-attr:Id', idElement);
    args.push(docPath);
    const run = spawnSync('xmlsec1', args, { encoding: 'utf8' });
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text of the first element with that local name (a regexp is enough for our signature output). */
export function elementText(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`).exec(xml)?.[1];
}
