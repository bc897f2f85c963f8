import { createHash, createPrivateKey, createSign, createVerify, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { looksLikePkcs12, readCertificateIdentity, readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { describePkcs12WithOpenssl, exportPkcs12WithOpenssl } from '../support/openssl-pkcs12.ts';
import { hasTool } from '../support/tools.ts';

const CNPJ = '11222333000181';
const PASSWORD = 'segredo-123';
const DAY = 24 * 60 * 60 * 1000;

function expectKeyMatchesCertificate(keyPem: string, certPem: string, privateKey: import('node:crypto').KeyObject) {
  const signer = createSign('sha256').update('payload');
  const signature = signer.sign(privateKey);
  expect(createVerify('sha256').update('payload').verify(certPem, signature)).toBe(true);
  expect(new X509Certificate(certPem).checkPrivateKey(privateKey)).toBe(true);
  expect(keyPem).toContain('BEGIN PRIVATE KEY');
}

describe('readPkcs12', () => {
  const ca = createCertificateAuthority('AC Teste');
  const modern = createA1Certificate({ cnpj: CNPJ, name: 'EMPRESA EXEMPLO LTDA', password: PASSWORD, issuer: ca });

  it('reads a modern AES-256 PKCS#12 and its ICP-Brasil identity', () => {
    const result = readPkcs12(modern.pfx, PASSWORD);
    if (!result.ok) throw new Error(result.error.message);
    const a1 = result.value;
    expect(a1.subjectCN).toBe(`EMPRESA EXEMPLO LTDA:${CNPJ}`);
    expect(a1.cnpj).toBe(CNPJ);
    expect(a1.cpf).toBeNull();
    expect(a1.certPem).toBe(new X509Certificate(modern.certPem).toString());
    expect(a1.chainPem).toHaveLength(1);
    expect(new X509Certificate(a1.chainPem[0]).subject).toContain('CN=AC Teste');
    const der = new X509Certificate(modern.certPem).raw;
    expect(a1.fingerprintSha256).toBe(createHash('sha256').update(der).digest('hex'));
    expect(a1.serialNumber).toBe(new X509Certificate(modern.certPem).serialNumber.toUpperCase());
    expect(a1.validFrom.getTime()).toBeLessThan(Date.now());
    expect(a1.validUntil.getTime()).toBeGreaterThan(Date.now() + 300 * DAY);
    expectKeyMatchesCertificate(a1.keyPem, a1.certPem, a1.privateKey);
    // Node's own TLS accepts what forge made (so the engine may also pass key + cert PEM to TLS).
    expect(() => createSecureContext({ key: a1.keyPem, cert: a1.certPem })).not.toThrow();
  });

  it('reads a 3DES PKCS#12', () => {
    const des = createA1Certificate({ cnpj: CNPJ, name: 'EMPRESA 3DES', password: PASSWORD, encryption: '3des' });
    const result = readPkcs12(des.pfx, PASSWORD);
    if (!result.ok) throw new Error(result.error.message);
    expect(result.value.cnpj).toBe(CNPJ);
    expect(result.value.chainPem).toHaveLength(0);
    expectKeyMatchesCertificate(result.value.keyPem, result.value.certPem, result.value.privateKey);
  });

  it.skipIf(!hasTool('openssl'))('reads an OpenSSL 3 default PKCS#12 (PBKDF2, AES-256, SHA-256 MAC)', () => {
    const pfx = exportPkcs12WithOpenssl({
      keyPem: modern.keyPem,
      certPem: modern.certPem,
      password: PASSWORD,
      legacy: false,
    });
    const info = describePkcs12WithOpenssl(pfx, PASSWORD, false);
    expect(info).toMatch(/AES-256-CBC/);
    expect(info).toMatch(/MAC: sha256/);
    const result = readPkcs12(pfx, PASSWORD);
    if (!result.ok) throw new Error(result.error.message);
    expect(result.value.cnpj).toBe(CNPJ);
  });

  it.skipIf(!hasTool('openssl'))('reads a legacy RC2-40 PKCS#12 that Node itself refuses', () => {
    const pfx = exportPkcs12WithOpenssl({
      keyPem: modern.keyPem,
      certPem: modern.certPem,
      password: PASSWORD,
      legacy: true,
    });
    expect(describePkcs12WithOpenssl(pfx, PASSWORD, true)).toMatch(/pbeWithSHA1And40BitRC2-CBC/);
    expect(() => createSecureContext({ pfx, passphrase: PASSWORD })).toThrow();
    const result = readPkcs12(pfx, PASSWORD);
    if (!result.ok) throw new Error(result.error.message);
    expect(result.value.cnpj).toBe(CNPJ);
    expectKeyMatchesCertificate(result.value.keyPem, result.value.certPem, result.value.privateKey);
    expect(readPkcs12(pfx, 'errada')).toMatchObject({ ok: false, error: { code: 'CERTIFICATE_WRONG_PASSWORD' } });
  });

  it('reports a wrong password', () => {
    const result = readPkcs12(modern.pfx, 'senha-errada');
    expect(result).toMatchObject({ ok: false, error: { code: 'CERTIFICATE_WRONG_PASSWORD' } });
  });

  it('reports files that are not PKCS#12', () => {
    const garbage = readPkcs12(Buffer.from('definitely not a certificate file'), PASSWORD);
    expect(garbage).toMatchObject({ ok: false, error: { code: 'CERTIFICATE_NOT_PKCS12' } });
    expect(readPkcs12(Buffer.alloc(0), PASSWORD)).toMatchObject({
      ok: false,
      error: { code: 'CERTIFICATE_NOT_PKCS12' },
    });
    const pem = readPkcs12(Buffer.from(modern.certPem), PASSWORD);
    expect(pem).toMatchObject({ ok: false, error: { code: 'CERTIFICATE_NOT_PKCS12' } });
    const der = readPkcs12(new X509Certificate(modern.certPem).raw, PASSWORD);
    expect(der).toMatchObject({ ok: false, error: { code: 'CERTIFICATE_NOT_PKCS12' } });
  });

  it('refuses other DER structures, truncated or padded files as CERTIFICATE_NOT_PKCS12 with a plain message', () => {
    const cases: [string, Buffer][] = [
      ['a DER private key', createPrivateKey(modern.keyPem).export({ format: 'der', type: 'pkcs8' }) as Buffer],
      ['a truncated PFX', modern.pfx.subarray(0, modern.pfx.length - 40)],
      ['a PFX with trailing bytes', Buffer.concat([modern.pfx, Buffer.from('<?php echo 1; ?>')])],
      ['a PFX cut to its header', modern.pfx.subarray(0, 6)],
      ['a PNG', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')],
    ];
    for (const [what, bytes] of cases) {
      const result = readPkcs12(bytes, PASSWORD);
      expect(result, what).toMatchObject({ ok: false, error: { code: 'CERTIFICATE_NOT_PKCS12' } });
      if (!result.ok) expect(result.error.message, what).toBe('The file is not a PKCS#12 (.pfx/.p12) certificate.');
    }
    expect(looksLikePkcs12(modern.pfx)).toBe(true);
  });

  it('never puts the ASN.1 library message in a password error', () => {
    const result = readPkcs12(modern.pfx, 'senha-errada');
    if (result.ok) throw new Error('expected a refusal');
    expect(result.error.message).not.toMatch(/asn1|forge|DER|bytes|Cannot/i);
  });

  it('reports a PKCS#12 without a private key', () => {
    const cert = forge.pki.certificateFromPem(modern.certPem);
    const p12 = forge.pkcs12.toPkcs12Asn1(null, [cert], PASSWORD, { algorithm: '3des' });
    const pfx = Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary');
    expect(readPkcs12(pfx, PASSWORD)).toMatchObject({ ok: false, error: { code: 'CERTIFICATE_NO_PRIVATE_KEY' } });
  });

  it('checks validity against `now`', () => {
    const notBefore = new Date('2024-01-01T00:00:00Z');
    const notAfter = new Date('2025-01-01T00:00:00Z');
    const old = createA1Certificate({ cnpj: CNPJ, name: 'EMPRESA ANTIGA', password: PASSWORD, notBefore, notAfter });
    expect(readPkcs12(old.pfx, PASSWORD)).toMatchObject({ ok: false, error: { code: 'CERTIFICATE_EXPIRED' } });
    expect(readPkcs12(old.pfx, PASSWORD, new Date('2023-12-31T00:00:00Z'))).toMatchObject({
      ok: false,
      error: { code: 'CERTIFICATE_NOT_YET_VALID' },
    });
    const during = readPkcs12(old.pfx, PASSWORD, new Date('2024-06-01T00:00:00Z'));
    expect(during.ok).toBe(true);
    if (during.ok) {
      expect(during.value.validFrom.toISOString()).toBe(notBefore.toISOString());
      expect(during.value.validUntil.toISOString()).toBe(notAfter.toISOString());
    }
  });
});

describe('readCertificateIdentity', () => {
  it('takes the CNPJ from the SAN otherName 2.16.76.1.3.3 when the CN has none', () => {
    const a1 = createA1Certificate({
      cnpj: CNPJ,
      name: 'X',
      commonName: 'EMPRESA SEM SUFIXO NO CN',
      password: PASSWORD,
    });
    expect(readCertificateIdentity(a1.certPem)).toEqual({
      subjectCN: 'EMPRESA SEM SUFIXO NO CN',
      cnpj: CNPJ,
      cpf: null,
    });
  });

  it('prefers the otherName to the CN suffix', () => {
    const a1 = createA1Certificate({
      cnpj: CNPJ,
      name: 'X',
      commonName: 'EMPRESA:99888777000166',
      password: PASSWORD,
    });
    expect(readCertificateIdentity(a1.certPem).cnpj).toBe(CNPJ);
  });

  it('falls back to the `:CNPJ` suffix of the CN without an otherName', () => {
    const a1 = createA1Certificate({ cnpj: CNPJ, name: 'EMPRESA SO CN', password: PASSWORD, otherName: false });
    const pem = new X509Certificate(a1.certPem);
    expect(pem.subjectAltName).toBeUndefined();
    expect(readCertificateIdentity(pem.raw).cnpj).toBe(CNPJ);
    const none = createA1Certificate({
      cnpj: CNPJ,
      name: 'X',
      commonName: 'SEM CNPJ',
      password: PASSWORD,
      otherName: false,
    });
    expect(readCertificateIdentity(none.certPem)).toEqual({ subjectCN: 'SEM CNPJ', cnpj: null, cpf: null });
  });

  it('reads the CPF of an e-CPF from otherName 2.16.76.1.3.1', () => {
    const a1 = createA1Certificate({
      cpf: '52998224725',
      name: 'FULANO',
      commonName: 'FULANO DE TAL',
      password: PASSWORD,
    });
    expect(readCertificateIdentity(a1.certPem)).toEqual({ subjectCN: 'FULANO DE TAL', cnpj: null, cpf: '52998224725' });
    const result = readPkcs12(a1.pfx, PASSWORD);
    expect(result.ok && result.value.cpf).toBe('52998224725');
  });

  it('reads the real ICP-Brasil certificate embedded in the official sample DPS signature', () => {
    // From shared/reference/national/samples (AC VALID RFB v5 e-CNPJ A1 of 11.905.971/0001-05).
    const b64 =
      'MIIIDDCCBfSgAwIBAgIIeDg696pMjPIwDQYJKoZIhvcNAQELBQAwdDELMAkGA1UEBhMCQlIxEzARBgNVBAoTCklDUC1CcmFzaWwxNjA0BgNVBAsTLVNlY3JldGFyaWEgZGEgUmVjZWl0YSBGZWRlcmFsIGRvIEJyYXNpbCAtIFJGQjEYMBYGA1UEAxMPQUMgVkFMSUQgUkZCIHY1MB4XDTI1MDYxNjIwMjc0MFoXDTI2MDYxNjIwMjc0MFowggE3MQswCQYDVQQGEwJCUjELMAkGA1UECBMCUkoxFzAVBgNVBAcTDlJJTyBERSBKQU5FSVJPMRMwEQYDVQQKEwpJQ1AtQnJhc2lsMTYwNAYDVQQLEy1TZWNyZXRhcmlhIGRhIFJlY2VpdGEgRmVkZXJhbCBkbyBCcmFzaWwgLSBSRkIxFjAUBgNVBAsTDVJGQiBlLUNOUEogQTExHjAcBgNVBAsTFUFSIFNFTkhBIERJR0lUQUwgUExVUzEZMBcGA1UECxMQVmlkZW9jb25mZXJlbmNpYTEXMBUGA1UECxMONDcxODIzNDIwMDAxMzMxSTBHBgNVBAMTQEdVSURJIFNJU1RFTUFTIEUgU0VSVklDT1MgRU0gVEVDTk9MT0dJQSBEQSBJTkZPUk06MTE5MDU5NzEwMDAxMDUwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQDX6Ng0waYnBDzzgyOJVNDL8MRcII9AugfEuuCGsNH4Apb1tQDablZeAHpzA4vlmJDusV7tAdrZA8W8vMESmPnNyD1QJQJKnY3Cip0h21CSxSbvj4PmNQYskj27mrI0X1OdqlxvcDG47QedGUlji+eAmSmu/AC7QSkA0W0FFOVuzMleSGNBMhjnbn5fnQAzVHP9uOYuVvYSeuqc2T1pvDvOqoLux8ySyY9v8dNBJMc+gu32WgtQzIBtrAVyRdmD8/9bfyh2PqE9IvUUzAgP3ki6QHUCkoPmzHpik4D2IDb1IsC0HkPUtloBh3nKPeiJLohCuxNvFvlZ90dTGHjSa6d9AgMBAAGjggLbMIIC1zCBnAYIKwYBBQUHAQEEgY8wgYwwVQYIKwYBBQUHMAKGSWh0dHA6Ly9pY3AtYnJhc2lsLnZhbGlkY2VydGlmaWNhZG9yYS5jb20uYnIvYWMtdmFsaWRyZmIvYWMtdmFsaWRyZmJ2NS5wN2IwMwYIKwYBBQUHMAGGJ2h0dHA6Ly9vY3NwdjUudmFsaWRjZXJ0aWZpY2Fkb3JhLmNvbS5icjAJBgNVHRMEAjAAMB8GA1UdIwQYMBaAFFPLpeR1UJlALL5bFUXJvsswqonFMHAGA1UdIARpMGcwZQYGYEwBAgElMFswWQYIKwYBBQUHAgEWTWh0dHA6Ly9pY3AtYnJhc2lsLnZhbGlkY2VydGlmaWNhZG9yYS5jb20uYnIvYWMtdmFsaWRyZmIvZHBjLWFjLXZhbGlkcmZidjUucGRmMIG2BgNVHR8Ega4wgaswU6BRoE+GTWh0dHA6Ly9pY3AtYnJhc2lsLnZhbGlkY2VydGlmaWNhZG9yYS5jb20uYnIvYWMtdmFsaWRyZmIvbGNyLWFjLXZhbGlkcmZidjUuY3JsMFSgUqBQhk5odHRwOi8vaWNwLWJyYXNpbDIudmFsaWRjZXJ0aWZpY2Fkb3JhLmNvbS5ici9hYy12YWxpZHJmYi9sY3ItYWMtdmFsaWRyZmJ2NS5jcmwwDgYDVR0PAQH/BAQDAgXgMB0GA1UdJQQWMBQGCCsGAQUFBwMCBggrBgEFBQcDBDCBrwYDVR0RBIGnMIGkgRJ2YW5kby5sZ0BnbWFpbC5jb22gOAYFYEwBAwSgLwQtMjMwMTE5ODUxMTQ4OTAwMzczODAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwoCAGBWBMAQMCoBcEFVZBTkRFUlNPTiBMT1BFUyBHVUlESaAZBgVgTAEDA6AQBA4xMTkwNTk3MTAwMDEwNaAXBgVgTAEDB6AOBAwwMDAwMDAwMDAwMDAwDQYJKoZIhvcNAQELBQADggIBAEYK80iMhlRHvuByCqGrfNKfeQLAAqBDjziqU2EZRYDZGDWjmUcyp0VOCYOj9GXuUJ0TZtyRmTDi3IQweHJh1LT0nngJ+k8AwWmN2H9BlSrOvzYWPQHg3OZ8GcpiN6YPfL9S9bwvfC026lVHifSp9breRM3dqhFRL0rDGKzt5IePhwFw+PVNcOx9mui/bRYNKMtCzl319v54xpgThKLXcckmI1N/bReLfATmUQT6en/kOb8187XKKsN2IzMgiWzrUi+PhbL25pQpxo1VhLHlQZv1TsFOuNRpQsYGg5l01D0FkUo/qMoQ2f2Qxpgy12BrTeI2SuuX2swRUcF6KiAkb3I9hce/vBhO4UL0VUcPWG7ZeRuvgy4INDY+nq6ZV23J1izi7hDr8oy14NNVmPugzOyFGn2l471qShSRH1NP68FK+1FfM/1eAFqqbv+6lTPTJUOpmKonSllWp+a6UlrR4CtKWFlANAESmwiGJD0TyghWJkv8UQ9YMPFcUKaKHDu2TT1urDoN5LaBuIwcPCKhLGrxreVFC+w1nCKq1zKhBuMIHZyvjEoEKZWYCqUKBSgasolDELp85Yw3Z9o7WYd07Tjzq8gUw0Q4ekDoJLIthnlUTrAHLAcihxbOzgxarGvZ2OPUIjCPRCe9IcrLOdIT4ds/aVbABoI+Z/jldv8XtWof';
    const identity = readCertificateIdentity(Buffer.from(b64, 'base64'));
    expect(identity.cnpj).toBe('11905971000105');
    expect(identity.subjectCN).toBe('GUIDI SISTEMAS E SERVICOS EM TECNOLOGIA DA INFORM:11905971000105');
    expect(identity.cpf).toBeNull();
  });
});
