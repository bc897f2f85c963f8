import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProjectRow, toFiscalProfile } from '../../src/db/repositories/project-profile.ts';
import { type Acceptance, InvoiceIntake, newInvoiceId } from '../../src/invoices/intake.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * Group commit isolates its members (issue 9, item 1). Concurrent POST /emitir and /emitir/batch requests share
 * one intake transaction; when the database refuses one member's rows, the others must still be accepted.
 *
 * The failure is injected in the database, not in our code: a CHECK constraint (added NOT VALID, so existing
 * rows are not checked) that refuses every invoice row of organization B. B's requests pass every check of the
 * API and fail only at the insert, inside the group transaction they share with A's requests. Runs on PGlite
 * and, with DATABASE_URL, on PostgreSQL. Over HTTP the groups mix tenants on PostgreSQL (parallel connections);
 * PGlite serializes every query, so its groups rarely mix: the second test builds a mixed group for certain by
 * handing the intake several acceptances at once.
 */

let t: TestService;
let a: OnboardedProject;
let b: OnboardedProject;

const count = async (query: ReturnType<typeof sql>) => {
  const result = (await t.service.ctx.db.execute(query)) as unknown as { rows: { n: number | string }[] };
  return Number(result.rows[0]!.n);
};

beforeAll(async () => {
  t = await startTestService();
  a = await onboardProject(t, { rateLimitPerMinute: 600 });
  b = await onboardProject(t, { rateLimitPerMinute: 600 });
  await t.service.ctx.db.execute(
    sql.raw(`alter table invoices add constraint test_poison_org_b check (org_id <> '${b.orgId}') not valid`),
  );
});
afterAll(async () => {
  await t?.close();
});

describe('group commit', () => {
  it("accepts every valid request of A when B's requests, committed in the same groups, are refused by the database", async () => {
    const valid: Promise<{ status: number; text: string; ids: string[] }>[] = [];
    const poisoned: Promise<{ status: number; text: string }>[] = [];
    // interleaved and all in flight at once, so the intake groups mix both organizations
    for (let i = 0; i < 24; i++) {
      valid.push(
        t
          .request('POST', '/emitir', { key: a.apiKey, body: invoiceBody({ referencia: `a-${i}` }) })
          .then((r) => ({ status: r.status, text: r.text, ids: r.body?.invoiceId ? [r.body.invoiceId] : [] })),
      );
      poisoned.push(t.request('POST', '/emitir', { key: b.apiKey, body: invoiceBody({ referencia: `b-${i}` }) }));
      if (i % 6 === 0) {
        valid.push(
          t
            .request('POST', '/emitir/batch', {
              key: a.apiKey,
              body: { items: [0, 1, 2].map((k) => invoiceBody({ referencia: `a-batch-${i}-${k}` })) },
            })
            .then((r) => ({ status: r.status, text: r.text, ids: [] })),
        );
        poisoned.push(
          t.request('POST', '/emitir/batch', {
            key: b.apiKey,
            body: { items: [0, 1].map((k) => invoiceBody({ referencia: `b-batch-${i}-${k}` })) },
          }),
        );
      }
    }
    const accepted = await Promise.all(valid);
    const refused = await Promise.all(poisoned);

    for (const res of accepted) expect(res.status, res.text).toBe(202);
    // B's requests fail alone (the database refused them: an internal error, not a validation one)
    for (const res of refused) expect(res.status, res.text).toBe(500);

    // A's work is committed in full (24 singles + 4 batches of 3), with its credits; nothing of B is
    expect(await count(sql`select count(*) as n from invoices where org_id = ${a.orgId}`)).toBe(24 + 4 * 3);
    expect(await count(sql`select count(*) as n from invoices where org_id = ${b.orgId}`)).toBe(0);
    expect(await count(sql`select count(*) as n from batches where project_id = ${a.projectId}`)).toBe(4);
    expect(await count(sql`select credits_used as n from organizations where id = ${a.orgId}`)).toBe(24 + 4 * 3);
    expect(await count(sql`select credits_used as n from organizations where id = ${b.orgId}`)).toBe(0);

    // and each accepted invoice has its job: a sample is issued end to end
    const sample = accepted.flatMap((r) => r.ids).slice(0, 3);
    for (const id of sample) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const status = await t.request('GET', `/invoices/${id}/status`, { key: a.apiKey });
        expect(status.status).toBe(200);
        if (!['queued', 'processing'].includes(status.body.status)) {
          expect(status.body.status, status.text).toBe('issued');
          break;
        }
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  });

  it('commits the valid members of one mixed group and fails only the members the database refuses', async () => {
    const intake = new InvoiceIntake(t.service.ctx);
    const acceptance = async (project: OnboardedProject, request: Record<string, unknown>): Promise<Acceptance> => {
      const row = await loadProjectRow(t.service.ctx.db, project.projectId);
      const profile = toFiscalProfile(row!);
      return {
        orgId: project.orgId,
        projectId: project.projectId,
        engine: 'national',
        ambiente: profile.ambiente,
        drafts: [{ id: newInvoiceId(), request, referencia: String(request.referencia), warnings: [] }],
      };
    };
    const members: { valid: boolean; acceptance: Acceptance }[] = [];
    for (let i = 0; i < 12; i++) {
      members.push({ valid: true, acceptance: await acceptance(a, invoiceBody({ referencia: `g-a-${i}` })) });
      if (i % 3 === 1) {
        // refused by the CHECK constraint
        members.push({ valid: false, acceptance: await acceptance(b, invoiceBody({ referencia: `g-b-${i}` })) });
      }
      if (i % 4 === 2) {
        // an A acceptance whose jsonb PostgreSQL cannot store (what the API edge now refuses with a 400)
        const bad = await acceptance(a, invoiceBody({ referencia: `g-nul-${i}`, discriminacao: 'a\u0000b' }));
        members.push({ valid: false, acceptance: bad });
      }
    }
    const before = await count(sql`select count(*) as n from invoices where org_id = ${a.orgId}`);
    // handed over in the same tick: after the first (or, on PostgreSQL, the first two) transaction(s) start,
    // every other acceptance waits and is committed in one shared group
    const outcomes = await Promise.allSettled(members.map((m) => intake.accept(m.acceptance)));
    for (const [i, outcome] of outcomes.entries()) {
      if (members[i]!.valid) expect(outcome, `member ${i}`).toEqual({ status: 'fulfilled', value: { ok: true } });
      else expect(outcome.status, `member ${i}`).toBe('rejected');
    }
    const validCount = members.filter((m) => m.valid).length;
    expect(await count(sql`select count(*) as n from invoices where org_id = ${a.orgId}`)).toBe(before + validCount);
    expect(await count(sql`select count(*) as n from invoices where org_id = ${b.orgId}`)).toBe(0);
    for (const [i, m] of members.entries()) {
      const id = m.acceptance.drafts[0]!.id;
      const jobs = await count(
        sql`select count(*) as n from pgboss.job where name = 'invoice.issue' and data->>'invoiceId' = ${id}`,
      );
      expect(jobs, `job of member ${i}`).toBe(m.valid ? 1 : 0);
    }
  });

  it("accepts a group's members while its organization's hard limit allows, and refuses the rest whole", async () => {
    // the group's total is refused when its credits are taken (last, before the COMMIT): the group is written again
    // with its credits taken first, member by member, so exactly the members that fit are accepted, each in full
    const free = await onboardProject(t, { plan: 'free', cnpj: '11222333000343', rateLimitPerMinute: 600 });
    await t.service.ctx.db.execute(sql`update organizations set credits_used = 44 where id = ${free.orgId}`);
    const profile = toFiscalProfile((await loadProjectRow(t.service.ctx.db, free.projectId))!);
    const intake = new InvoiceIntake(t.service.ctx);
    // six single notes and a batch of two: 8 credits asked, 6 left (the free plan's limit is 50)
    const members: Acceptance[] = [1, 1, 2, 1, 1, 1, 1].map((size, m) => ({
      orgId: free.orgId,
      projectId: free.projectId,
      engine: 'national',
      ambiente: profile.ambiente,
      drafts: Array.from({ length: size }, (_, i) => ({
        id: newInvoiceId(),
        request: invoiceBody({ referencia: `limit-${m}-${i}` }),
        referencia: `limit-${m}-${i}`,
        warnings: [],
      })),
    }));
    const results = await Promise.all(members.map((m) => intake.accept(m)));
    const accepted = members.filter((_, i) => results[i]!.ok);
    const acceptedNotes = accepted.reduce((n, m) => n + m.drafts.length, 0);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'credits')).toBe(true);
    expect(acceptedNotes).toBe(6);
    expect(await count(sql`select credits_used as n from organizations where id = ${free.orgId}`)).toBe(50);
    expect(await count(sql`select count(*) as n from invoices where org_id = ${free.orgId}`)).toBe(6);
    for (const [i, m] of members.entries()) {
      for (const draft of m.drafts) {
        const rows = await count(sql`select count(*) as n from invoices where id = ${draft.id}`);
        const jobs = await count(
          sql`select count(*) as n from pgboss.job where name = 'invoice.issue' and data->>'invoiceId' = ${draft.id}`,
        );
        expect([rows, jobs], `member ${i}`).toEqual(results[i]!.ok ? [1, 1] : [0, 0]);
      }
    }
  });
});
