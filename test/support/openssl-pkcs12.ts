import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Exports a key and certificate to PKCS#12 with the `openssl` command line, as real-world A1 files are
 * made: `legacy: true` gives the old RC2-40/3DES + SHA-1 MAC format (`openssl pkcs12 -export -legacy`)
 * that Node's OpenSSL 3 cannot open; `legacy: false` gives OpenSSL 3's default (AES-256-CBC, PBKDF2,
 * SHA-256 MAC).
 */
export function exportPkcs12WithOpenssl(options: {
  keyPem: string;
  certPem: string;
  password: string;
  legacy: boolean;
  extraCertsPem?: string;
}): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'pfx-'));
  try {
    writeFileSync(join(dir, 'key.pem'), options.keyPem, { mode: 0o600 });
    writeFileSync(join(dir, 'cert.pem'), options.certPem);
    const args = [
      'pkcs12',
      '-export',
      '-inkey',
      'key.pem',
      '-in',
      'cert.pem',
      '-out',
      'out.pfx',
      '-passout',
      'env:PFX_PASS',
    ];
    if (options.legacy) args.push('-legacy', '-certpbe', 'PBE-SHA1-RC2-40', '-keypbe', 'PBE-SHA1-3DES');
    if (options.extraCertsPem) {
      writeFileSync(join(dir, 'chain.pem'), options.extraCertsPem);
      args.push('-certfile', 'chain.pem');
    }
    const run = spawnSync('openssl', args, {
      cwd: dir,
      env: { ...process.env, PFX_PASS: options.password },
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`openssl pkcs12 failed: ${run.stderr}`);
    return readFileSync(join(dir, 'out.pfx'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The encryption algorithms `openssl pkcs12 -info` reports for a file (to prove what a test produced). */
export function describePkcs12WithOpenssl(pfx: Buffer, password: string, legacy: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'pfx-'));
  try {
    writeFileSync(join(dir, 'in.pfx'), pfx);
    const args = ['pkcs12', '-info', '-in', 'in.pfx', '-noout', '-passin', 'env:PFX_PASS'];
    if (legacy) args.push('-legacy');
    const run = spawnSync('openssl', args, {
      cwd: dir,
      env: { ...process.env, PFX_PASS: password },
      encoding: 'utf8',
    });
    return `${run.stdout}\n${run.stderr}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
