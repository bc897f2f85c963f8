import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '../../src/xml/xsd.ts';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * A Simples Nacional provider in Acrelândia/AC (Betha, not adherent to the national emitter) issues, queries and
 * cancels through Betha's asynchronous SOAP service (the sandbox's `/municipal/betha/…`), over HTTP as a user:
 * RecepcionarDps answers a protocol, the invoice.poll job asks ConsultarStatusDps until the note is issued.
 * A MEI in the same city goes to the national environment instead.
 */

const ACRELANDIA = '1200013';
const SIMPLES = { codigoMunicipio: ACRELANDIA, regimeTributario: '3', aliquotaSimples: 6 };

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t, { project: SIMPLES });
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through Betha (SOAP, asynchronous), as a user', () => {
  it('issues (pending → polled → issued), queries and cancels a note in a Betha city', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'betha-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoiceState(
      t,
      p.apiKey,
      res.body.invoiceId,
      (s) => s === 'issued' || s === 'rejected' || s === 'failed',
    );
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.chNFSe).toMatch(/^\d{50}$/);
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml?type=emission`, { key: p.apiKey });
    const text = xml.status === 302 ? await (await fetch(xml.headers.get('location')!)).text() : xml.text;
    expect(text).toContain(`Id="NFS${status.chNFSe}"`);
    expect(validateXml('NFSe', text)).toEqual({ ok: true });

    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId: res.body.invoiceId, motivo: 'Serviço não prestado ao tomador' },
    });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    const cancelled = await waitForInvoiceState(t, p.apiKey, res.body.invoiceId, (s) => s === 'cancelled');
    expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');

    // it went to Betha's SOAP service (DPS in Betha's namespace, lowercase id), not to Sefin Nacional
    expect(t.service.sandbox?.issued().some((r) => r.chaveAcesso === status.chNFSe)).toBe(false);
    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'dps-provider-betha', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('RecepcionarDpsEnvio');
    expect(exchanges).toContain('ConsultarStatusDpsEnvio');
    expect(exchanges).toContain('RecepcionarEventoCancelamentoEnvio');
    expect(exchanges).toContain('<infDPS id=\\"DPS');
  });

  it('sends a MEI of a Betha city to the national environment', async () => {
    const mei = await onboardProject(t, {
      cnpj: '11222333000262',
      project: { codigoMunicipio: ACRELANDIA, regimeTributario: '2' },
    });
    const res = await t.request('POST', '/emitir', { key: mei.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, mei.apiKey, res.body.invoiceId);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(t.service.sandbox?.issued().some((r) => r.chaveAcesso === status.chNFSe)).toBe(true);
  });

  it('refuses at POST /emitir, with a 400 naming the project field, a Betha project without its municipal registration', async () => {
    const other = await onboardProject(t, {
      cnpj: '45723174000110',
      project: { ...SIMPLES, inscricaoMunicipal: null },
    });
    const res = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('project.inscricaoMunicipal');
  });
});
