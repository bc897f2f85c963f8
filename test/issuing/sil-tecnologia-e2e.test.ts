import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '../../src/xml/xsd.ts';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * A Simples Nacional provider in Vila Velha/ES (SIL/TBW, not adherent to the national environment) issues, queries
 * and cancels through SIL's `NotaFiscalNacional` SOAP service (the sandbox's `/municipal/siltecnologia/…`), over
 * HTTP as a user; a project without NBS is refused at POST /emitir (SIL/TBW requires it).
 */

const VILA_VELHA = '3205200';
const SIMPLES = { codigoMunicipio: VILA_VELHA, regimeTributario: '3', aliquotaSimples: 6 };

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t, { project: SIMPLES });
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through SIL/TBW (SOAP string <xml>), as a user', () => {
  it('issues, queries and cancels a note in a SIL/TBW city', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'sil-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.chNFSe).toMatch(/^\d{50}$/);
    expect(status.chNFSe.slice(0, 7)).toBe(VILA_VELHA);
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

    // it went to SIL's service, not to the national environment
    expect(t.service.sandbox?.issued().some((r) => r.chaveAcesso === status.chNFSe)).toBe(false);
    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'dps-provider-siltecnologia', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('NotaFiscalNacionalGerar');
    expect(exchanges).toContain('NotaFiscalNacionalCancelar');
  });

  it('refuses at POST /emitir, with a 400 naming servico.nbs, a SIL/TBW invoice without NBS', async () => {
    const other = await onboardProject(t, {
      cnpj: '11222333000262',
      project: {
        ...SIMPLES,
        // no NBS and no IBS/CBS framing defaults (Simples in 2026 need not declare IBS/CBS): nothing gives a cNBS
        defaultNbs: null,
        defaultIndicadorOperacao: null,
        defaultClassificacaoTributaria: null,
        defaultCstIbscbs: null,
      },
    });
    const res = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('servico.nbs');
  });
});
