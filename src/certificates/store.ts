import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { certificates } from '../db/schema.ts';
import { type A1Certificate, readPkcs12 } from './pkcs12.ts';
import { openSecret } from './vault.ts';

export type LoadedCertificate =
  | { ok: true; certificate: A1Certificate; id: string }
  | { ok: false; code: 'CERTIFICATE_MISSING' | 'CERTIFICATE_EXPIRED' | 'CERTIFICATE_UNREADABLE'; message: string };

/**
 * The project's active A1 certificate, decrypted from the vault and parsed once per certificate row
 * (node-forge parsing costs ~100 ms): cached by row id, which changes when the certificate is replaced.
 */
export class CertificateStore {
  private readonly cache = new Map<string, A1Certificate>();

  constructor(
    private readonly db: Db,
    private readonly masterKey: Buffer,
  ) {}

  async forProject(projectId: string, now = new Date()): Promise<LoadedCertificate> {
    const [row] = await this.db
      .select()
      .from(certificates)
      .where(and(eq(certificates.projectId, projectId), eq(certificates.active, true)))
      .limit(1);
    if (!row) return { ok: false, code: 'CERTIFICATE_MISSING', message: 'The project has no A1 certificate' };
    if (row.validUntil.getTime() < now.getTime()) {
      return {
        ok: false,
        code: 'CERTIFICATE_EXPIRED',
        message: `The A1 certificate expired on ${row.validUntil.toISOString()}`,
      };
    }
    let cert = this.cache.get(row.id);
    if (!cert) {
      try {
        const pfx = openSecret(Buffer.from(row.pfxSealed, 'base64'), this.masterKey);
        const password = openSecret(Buffer.from(row.passwordSealed, 'base64'), this.masterKey).toString('utf8');
        const parsed = readPkcs12(pfx, password, now);
        if (!parsed.ok) return { ok: false, code: 'CERTIFICATE_UNREADABLE', message: parsed.error.message };
        cert = parsed.value;
      } catch (err) {
        return {
          ok: false,
          code: 'CERTIFICATE_UNREADABLE',
          message: `The stored certificate cannot be opened: ${(err as Error).message}`,
        };
      }
      if (this.cache.size > 1000) this.cache.clear();
      this.cache.set(row.id, cert);
    }
    return { ok: true, certificate: cert, id: row.id };
  }
}
