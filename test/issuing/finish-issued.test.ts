import { randomUUID } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInvoiceRow } from '../../src/db/repositories/invoices.ts';
import { batches, events, invoices, webhookDeliveries, webhookEndpoints } from '../../src/db/schema.ts';
import type { IssuedDocument } from '../../src/engines/types.ts';
import { finishIssued } from '../../src/invoices/completion.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { insertInvoiceRow, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * The issue job's completion (`finishIssued(…, 'caller')`) is one statement where nothing else follows from it (no
 * subscribed endpoint, no batch), and the transaction of old otherwise: the row, the `nfse.issued` event (its data
 * with the row's `referencia`), the deliveries and the batch's completion come out the same either way.
 */
let t: TestService;
let plain: OnboardedProject;
let subscribed: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  plain = await onboardProject(t);
  subscribed = await onboardProject(t);
  await t.service.ctx.db.insert(webhookEndpoints).values({
    projectId: subscribed.projectId,
    url: 'https://127.0.0.1:9/hook',
    events: ['nfse.issued'],
    secret: 'whsec_test',
  });
});
afterAll(async () => {
  await t?.close();
});

/** An invoice row being processed, without its job (no worker picks it up). */
const processingInvoice = (
  project: OnboardedProject,
  extra: { referencia?: string | null; batchId?: string; protocol?: string } = {},
) => insertInvoiceRow(t, project, { status: 'processing', transmission: 'sending', ...extra });

function issuedDocument(overrides: Partial<IssuedDocument> = {}): IssuedDocument {
  return {
    chave: '3550308'.padEnd(50, '1'),
    numero: '42',
    verificationCode: 'ABC123',
    emittedAt: new Date('2026-11-20T12:34:56.000Z'),
    xml: '<NFSe xmlns="http://www.sped.fazenda.gov.br/nfse"><infNFSe Id="NFS1"/></NFSe>',
    ambiente: 2,
    ...overrides,
  };
}

const eventsOf = (invoiceId: string) =>
  t.service.ctx.db.select().from(events).where(eq(events.invoiceId, invoiceId)).orderBy(asc(events.createdAt));

describe('finishIssued', () => {
  it('issues the row and writes its event in one statement when nothing else follows from it', async () => {
    const id = await processingInvoice(plain, { referencia: 'pedido "7" \\ ç', protocol: 'LOTE-1' });
    await finishIssued(t.service.ctx, id, issuedDocument(), 'caller');
    const row = (await loadInvoiceRow(t.service.ctx.db, id))!;
    expect(row).toMatchObject({
      status: 'issued',
      transmission: 'done',
      accessKey: '3550308'.padEnd(50, '1'),
      numeroNfse: '42',
      verificationCode: 'ABC123',
      protocol: 'LOTE-1', // kept: the answer named no protocol
      nfseXml: issuedDocument().xml,
      errorCode: null,
      errors: null,
    });
    expect(row.emittedAt?.toISOString()).toBe('2026-11-20T12:34:56.000Z');
    const written = await eventsOf(id);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ type: 'nfse.issued', projectId: plain.projectId, batchId: null });
    expect(written[0]!.data).toEqual({
      invoiceId: id,
      chNFSe: '3550308'.padEnd(50, '1'),
      nNFSe: '42',
      codigoVerificacao: 'ABC123',
      referencia: 'pedido "7" \\ ç',
    });
    expect(written[0]!.dispatchedAt).not.toBeNull();
    // a second completion of the same note changes nothing and writes no second event
    await finishIssued(t.service.ctx, id, issuedDocument({ numero: '43' }), 'caller');
    expect((await loadInvoiceRow(t.service.ctx.db, id))!.numeroNfse).toBe('42');
    expect(await eventsOf(id)).toHaveLength(1);
  });

  it('writes a null referencia, no verification code, and the protocol the answer names', async () => {
    const id = await processingInvoice(plain, { protocol: 'LOTE-1' });
    await finishIssued(t.service.ctx, id, issuedDocument({ verificationCode: null, protocol: 'LOTE-2' }), 'caller');
    const row = (await loadInvoiceRow(t.service.ctx.db, id))!;
    expect(row.protocol).toBe('LOTE-2');
    expect(row.verificationCode).toBeNull();
    const [event] = await eventsOf(id);
    expect(event!.data).toEqual({ invoiceId: id, chNFSe: '3550308'.padEnd(50, '1'), nNFSe: '42', referencia: null });
  });

  it('leaves an ended note alone', async () => {
    const id = await processingInvoice(plain);
    await t.service.ctx.db.update(invoices).set({ status: 'error' }).where(eq(invoices.id, id));
    await finishIssued(t.service.ctx, id, issuedDocument(), 'caller');
    expect((await loadInvoiceRow(t.service.ctx.db, id))!.status).toBe('error');
    expect(await eventsOf(id)).toHaveLength(0);
    await finishIssued(t.service.ctx, randomUUID(), issuedDocument(), 'caller'); // no such note: nothing, no error
  });

  it('writes the deliveries of a subscribed project with the event, in the transaction', async () => {
    const id = await processingInvoice(subscribed, { referencia: 'R-1' });
    await finishIssued(t.service.ctx, id, issuedDocument(), 'caller');
    expect((await loadInvoiceRow(t.service.ctx.db, id))!.status).toBe('issued');
    const [event, ...more] = await eventsOf(id);
    expect(more).toHaveLength(0);
    expect(event!.data).toMatchObject({ invoiceId: id, referencia: 'R-1' });
    const deliveries = await t.service.ctx.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.eventId, event!.id));
    expect(deliveries).toHaveLength(1);
    const body = JSON.parse(deliveries[0]!.body);
    expect(body).toMatchObject({ event: 'nfse.issued', deliveryId: deliveries[0]!.id });
    expect(body.data).toEqual(event!.data);
  });

  it("completes a batch with its last note's completion", async () => {
    const batchId = randomUUID();
    await t.service.ctx.db.insert(batches).values({ id: batchId, projectId: plain.projectId, total: 1 });
    const id = await processingInvoice(plain, { batchId });
    await finishIssued(t.service.ctx, id, issuedDocument(), 'caller');
    expect((await loadInvoiceRow(t.service.ctx.db, id))!.status).toBe('issued');
    const [batch] = await t.service.ctx.db.select().from(batches).where(eq(batches.id, batchId));
    expect(batch!.completedAt).not.toBeNull();
    const batchEvents = await t.service.ctx.db.select().from(events).where(eq(events.batchId, batchId));
    expect(batchEvents.map((e) => [e.type, e.data])).toEqual([
      ['batch.completed', { batchId, total: 1, issued: 1, errors: 0 }],
    ]);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['nfse.issued']);
  });
});
