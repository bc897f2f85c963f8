import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInvoiceRow } from '../../src/db/repositories/invoices.ts';
import { loadProjectRow, toFiscalProfile } from '../../src/db/repositories/project-profile.ts';
import { numbering } from '../../src/db/schema.ts';
import type { JobSubject } from '../../src/invoices/job-subject.ts';
import { takeNumber } from '../../src/invoices/issue-job.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { insertInvoiceRow, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * The declaration number (issue job, step 1) is taken in one statement: the invoice's row is locked while it has no
 * number, the project's next number is taken only then. Attempts racing on one invoice take one number between
 * them and all continue from the same row; numbers of different invoices never repeat.
 */
let t: TestService;
let project: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  project = await onboardProject(t, { rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t?.close();
});

/** An invoice row without its job (no worker picks it up), as intake writes it. */
const queuedInvoice = () => insertInvoiceRow(t, project);

async function subjectOf(invoiceId: string): Promise<JobSubject> {
  const invoice = (await loadInvoiceRow(t.service.ctx.db, invoiceId))!;
  const row = (await loadProjectRow(t.service.ctx.db, project.projectId))!;
  return { invoice, project: toFiscalProfile(row) } as JobSubject;
}

async function lastNumber(): Promise<number> {
  const [row] = await t.service.ctx.db
    .select({ lastNumber: numbering.lastNumber })
    .from(numbering)
    .where(and(eq(numbering.projectId, project.projectId), eq(numbering.kind, 'nfse')));
  return row?.lastNumber ?? 0;
}

describe('takeNumber', () => {
  it('numbers an invoice once, however many attempts race on it', async () => {
    const before = await lastNumber();
    const id = await queuedInvoice();
    const subject = await subjectOf(id); // every attempt read the row before any of them numbered it
    const taken = await Promise.all(Array.from({ length: 6 }, () => takeNumber(t.service.ctx, subject)));
    expect(new Set(taken.map((r) => r.declarationNumber))).toEqual(new Set([before + 1]));
    expect(taken.every((r) => r.status === 'processing' && r.serie === subject.project.serieNfse)).toBe(true);
    expect(await lastNumber()).toBe(before + 1);
    const stored = (await loadInvoiceRow(t.service.ctx.db, id))!;
    expect(stored.declarationNumber).toBe(before + 1);
    expect(stored.status).toBe('processing');
    // a later attempt keeps the number and takes none
    expect((await takeNumber(t.service.ctx, await subjectOf(id))).declarationNumber).toBe(before + 1);
    expect(await lastNumber()).toBe(before + 1);
  });

  it('gives invoices numbered at the same time distinct, consecutive numbers', async () => {
    const before = await lastNumber();
    const ids = await Promise.all(Array.from({ length: 8 }, () => queuedInvoice()));
    const subjects = await Promise.all(ids.map(subjectOf));
    const taken = await Promise.all(subjects.map((s) => takeNumber(t.service.ctx, s)));
    expect(taken.map((r) => r.declarationNumber).sort((a, b) => a! - b!)).toEqual(
      Array.from({ length: 8 }, (_, i) => before + 1 + i),
    );
  });
});
