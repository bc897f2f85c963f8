import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { certificates } from '../db/schema.ts';
import { SharedReads, type TableChanges } from '../db/table-changes.ts';
import { type A1Certificate, readPkcs12 } from './pkcs12.ts';
import { openSecret } from './vault.ts';

export type LoadedCertificate =
  | { ok: true; certificate: A1Certificate; id: string }
  | { ok: false; code: 'CERTIFICATE_MISSING' | 'CERTIFICATE_EXPIRED' | 'CERTIFICATE_UNREADABLE'; message: string };

/**
 * The project's active A1 certificate, decrypted from the vault and parsed once per certificate row
 * (node-forge parsing costs ~100 ms): cached by row id, which changes when the certificate is replaced.
 */
export type CertificateReadiness =
  | { ok: true }
  | { ok: false; code: 'CERTIFICATE_MISSING' | 'CERTIFICATE_EXPIRED'; message: string };

/** How long a valid certificate is remembered by the intake check (never past its expiry). */
const READY_CACHE_MS = 10_000;

export class CertificateStore {
  private readonly cache = new Map<string, A1Certificate>();
  /** the parses in flight, by certificate row id */
  private readonly opening = new Map<string, Promise<LoadedCertificate>>();
  private readonly ready = new Map<string, { until: number; validUntil: number }>();

  /** the active certificate's id and expiry per project, read for every note (db/table-changes.ts) */
  private readonly activeRows: SharedReads<{ id: string; validUntil: Date } | undefined>;

  constructor(
    private readonly db: Db,
    private readonly masterKey: Buffer,
    changes: TableChanges | null = null,
  ) {
    this.activeRows = new SharedReads(changes, ['certificates']);
  }

  /**
   * Whether the project has an active certificate valid at `now` (the intake's check before a credit or a number
   * is spent): one indexed query, its positive answer remembered for a few seconds (a certificate is only ever
   * replaced by a valid one, so a remembered valid answer cannot hide a missing certificate).
   */
  async readiness(projectId: string, now = new Date()): Promise<CertificateReadiness> {
    const t = now.getTime();
    const known = this.ready.get(projectId);
    if (known && known.until > t && known.validUntil > t) return { ok: true };
    const [row] = await this.db
      .select({ validUntil: certificates.validUntil })
      .from(certificates)
      .where(and(eq(certificates.projectId, projectId), eq(certificates.active, true)))
      .limit(1);
    if (!row) {
      this.ready.delete(projectId);
      return { ok: false, code: 'CERTIFICATE_MISSING', message: 'The project has no A1 certificate: upload one first' };
    }
    if (row.validUntil.getTime() <= t) {
      this.ready.delete(projectId);
      return {
        ok: false,
        code: 'CERTIFICATE_EXPIRED',
        message: `The project's A1 certificate expired on ${row.validUntil.toISOString()}: upload a valid one`,
      };
    }
    if (this.ready.size > 10_000) this.ready.clear();
    this.ready.set(projectId, { until: t + READY_CACHE_MS, validUntil: row.validUntil.getTime() });
    return { ok: true };
  }

  /**
   * `active`: the project's active certificate row (its id and expiry, null for none) when the caller read it
   * already, in the same statement as the rest of what it needed (the invoice jobs).
   */
  async forProject(
    projectId: string,
    now = new Date(),
    active?: { id: string; validUntil: Date } | null,
  ): Promise<LoadedCertificate> {
    // the sealed file is read only when this row is not parsed yet; the row itself is kept in memory on the
    // embedded database until the certificates table changes
    const row =
      active !== undefined
        ? active
        : await this.activeRows.get(projectId, () =>
            this.db
              .select({ id: certificates.id, validUntil: certificates.validUntil })
              .from(certificates)
              .where(and(eq(certificates.projectId, projectId), eq(certificates.active, true)))
              .limit(1)
              .then(([found]) => found),
          );
    if (!row) return { ok: false, code: 'CERTIFICATE_MISSING', message: 'The project has no A1 certificate' };
    if (row.validUntil.getTime() < now.getTime()) {
      return {
        ok: false,
        code: 'CERTIFICATE_EXPIRED',
        message: `The A1 certificate expired on ${row.validUntil.toISOString()}`,
      };
    }
    const cert = this.cache.get(row.id);
    if (cert) return { ok: true, certificate: cert, id: row.id };
    // the jobs that start together (a worker's first batch) wait for one parse instead of each making its own
    let opening = this.opening.get(row.id);
    if (!opening) {
      opening = this.open(row.id, now).finally(() => this.opening.delete(row.id));
      this.opening.set(row.id, opening);
    }
    return opening;
  }

  /** Reads, decrypts and parses a certificate row (node-forge: ~100 ms), and keeps the parsed certificate. */
  private async open(id: string, now: Date): Promise<LoadedCertificate> {
    const [sealed] = await this.db
      .select({ pfxSealed: certificates.pfxSealed, passwordSealed: certificates.passwordSealed })
      .from(certificates)
      .where(eq(certificates.id, id))
      .limit(1);
    if (!sealed) return { ok: false, code: 'CERTIFICATE_MISSING', message: 'The project has no A1 certificate' };
    let cert: A1Certificate;
    try {
      const pfx = openSecret(Buffer.from(sealed.pfxSealed, 'base64'), this.masterKey);
      const password = openSecret(Buffer.from(sealed.passwordSealed, 'base64'), this.masterKey).toString('utf8');
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
    this.cache.set(id, cert);
    return { ok: true, certificate: cert, id };
  }
}
