import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CertificateAuthority,
  createCertificateAuthority,
  issueServerCertificate,
  issueSigningCertificate,
} from '../certificates/generate.ts';

/**
 * The sandbox's own PKI, created once in a directory and reused: a CA (which the service trusts in sandbox
 * mode), the TLS server certificate for localhost / 127.0.0.1 / ::1, and the key that signs what it issues.
 */

export interface SandboxIdentity {
  caPem: string;
  /** Path of the CA certificate file (for clients outside this process, e.g. curl --cacert). */
  caFile: string;
  tls: { keyPem: string; certPem: string };
  signer: { privateKey: KeyObject; certPem: string };
}

const FILES = {
  caKey: 'ca.key.pem',
  caCert: 'ca.cert.pem',
  tlsKey: 'tls.key.pem',
  tlsCert: 'tls.cert.pem',
  signerKey: 'signer.key.pem',
  signerCert: 'signer.cert.pem',
} as const;

const HOSTS = ['localhost', '127.0.0.1', '::1'];
/** Renew a certificate that has less than this left. */
const RENEW_MARGIN_MS = 7 * 24 * 60 * 60 * 1000;

function writePrivate(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function usable(certPem: string, issuer?: X509Certificate): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const fresh = new Date(cert.validTo).getTime() - Date.now() > RENEW_MARGIN_MS;
    return fresh && (!issuer || cert.verify(issuer.publicKey));
  } catch {
    return false;
  }
}

function read(dir: string, name: string): string | null {
  const path = join(dir, name);
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

/** Whether `provisionSandboxIdentity` will have to make the CA, TLS and signing keys (a first start). */
export function sandboxIdentityMissing(dir: string): boolean {
  return !existsSync(join(dir, FILES.caKey));
}

export function provisionSandboxIdentity(dir: string): SandboxIdentity {
  mkdirSync(dir, { recursive: true, mode: 0o700 });

  let caKey = read(dir, FILES.caKey);
  let caCert = read(dir, FILES.caCert);
  let renewedCa = false;
  if (!caKey || !caCert || !usable(caCert)) {
    const ca = createCertificateAuthority('NFS-e Service Sandbox CA');
    writePrivate(join(dir, FILES.caKey), ca.keyPem);
    writePrivate(join(dir, FILES.caCert), ca.certPem);
    caKey = ca.keyPem;
    caCert = ca.certPem;
    renewedCa = true;
  }
  const ca: CertificateAuthority = { keyPem: caKey, certPem: caCert, privateKey: createPrivateKey(caKey) };
  const caX509 = new X509Certificate(caCert);

  let tlsKey = read(dir, FILES.tlsKey);
  let tlsCert = read(dir, FILES.tlsCert);
  if (renewedCa || !tlsKey || !tlsCert || !usable(tlsCert, caX509)) {
    const issued = issueServerCertificate(ca, HOSTS);
    writePrivate(join(dir, FILES.tlsKey), issued.keyPem);
    writePrivate(join(dir, FILES.tlsCert), issued.certPem);
    tlsKey = issued.keyPem;
    tlsCert = issued.certPem;
  }

  let signerKey = read(dir, FILES.signerKey);
  let signerCert = read(dir, FILES.signerCert);
  if (renewedCa || !signerKey || !signerCert || !usable(signerCert, caX509)) {
    const issued = issueSigningCertificate(ca, {
      cn: 'sefin.sandbox.nfse.local',
      organization: 'Sefin Nacional NFS-e (sandbox)',
    });
    writePrivate(join(dir, FILES.signerKey), issued.keyPem);
    writePrivate(join(dir, FILES.signerCert), issued.certPem);
    signerKey = issued.keyPem;
    signerCert = issued.certPem;
  }

  return {
    caPem: caCert,
    caFile: join(dir, FILES.caCert),
    tls: { keyPem: tlsKey, certPem: tlsCert },
    signer: { privateKey: createPrivateKey(signerKey), certPem: signerCert },
  };
}
