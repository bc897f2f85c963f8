import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '../../src/xml/xsd.ts';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * A Simples Nacional provider in Patrocínio/MG (SimplISS, not adherent to the national environment) issues, queries
 * and cancels through SimplISS's Sefin-clone REST API (the sandbox's `/municipal/simpliss/…`), over HTTP as a user.
 */

const PATROCINIO = '3148103';
const SIMPLES = { codigoMunicipio: PATROCINIO, regimeTributario: '3', aliquotaSimples: 6 };

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t, { project: SIMPLES });
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through SimplISS (Sefin-clone REST), as a user', () => {
  it('issues, queries and cancels a note in a SimplISS city', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'simpliss-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.chNFSe).toMatch(/^\d{50}$/);
    expect(status.chNFSe.slice(0, 7)).toBe(PATROCINIO);
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

    // it went to SimplISS's service, not to the national environment
    expect(t.service.sandbox?.issued().some((r) => r.chaveAcesso === status.chNFSe)).toBe(false);
    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'dps-provider-simpliss', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('/municipal/simpliss/producaorestrita/nfse');
    expect(exchanges).toContain(`/municipal/simpliss/producaorestrita/nfse/${status.chNFSe}/eventos`);
  });

  it('refuses at POST /emitir, with a 400 naming the project field, a SimplISS project without its municipal registration', async () => {
    const other = await onboardProject(t, {
      cnpj: '11222333000262',
      project: { ...SIMPLES, inscricaoMunicipal: null },
    });
    const res = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('project.inscricaoMunicipal');
  });
});
