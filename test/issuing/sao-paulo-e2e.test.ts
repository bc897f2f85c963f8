import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * A Simples Nacional provider in the city of São Paulo issues, queries and cancels through the city's own layout
 * (NF-e Paulistana v02, `lotenfe.asmx`: the sandbox's `/municipal/isssaopaulo/…`) over HTTP as a user; its PDF is a
 * 302 to the city portal; a project without `codigoServicoSp` is refused at POST /emitir with a 400 naming it (the
 * registry's projectFields; the engine's own check names `servico.codigoServico` when the invoice has no code).
 */
const SAO_PAULO = '3550308';
const ADDRESS = {
  logradouro: 'Rua Boa Vista',
  numero: '100',
  bairro: 'Centro',
  cidade: 'São Paulo',
  uf: 'SP',
  cep: '01014000',
};
const SIMPLES = {
  codigoMunicipio: SAO_PAULO,
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '31000000',
  codigoServicoSp: '02658',
  endereco: ADDRESS,
};

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t, { project: SIMPLES });
});
afterAll(async () => {
  await t?.close();
});

async function waitForStatus(invoiceId: string, done: (status: string) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request('GET', `/invoices/${invoiceId}/status`, { key: p.apiKey });
    if (done(res.body.status) || Date.now() > deadline) return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('issuing in the city of São Paulo (NF-e Paulistana v02), as a user', () => {
  it('issues, queries, redirects the PDF to the city portal and cancels', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'sp-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const pdf = await t.request('GET', `/invoices/${res.body.invoiceId}/pdf`, { key: p.apiKey });
    expect(pdf.status, pdf.text).toBe(302);
    expect(pdf.headers.get('location')).toMatch(
      new RegExp(
        `^https://nfe\\.prefeitura\\.sp\\.gov\\.br/nfe\\.aspx\\?ccm=31000000&nf=${status.numeroNfse}&cod=\\w{8}$`,
      ),
    );

    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId: res.body.invoiceId, motivo: 'Serviço não prestado ao tomador' },
    });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    const cancelled = await waitForStatus(res.body.invoiceId, (s) => s === 'cancelled');
    expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');

    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'sao-paulo-isssaopaulo', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('EnvioRPSRequest');
    expect(exchanges).toContain('CancelamentoNFeRequest');
  });

  it('refuses at POST /emitir, with a 400 naming the service code, when the project has none (spec 4.8)', async () => {
    const other = await onboardProject(t, { cnpj: '11222333000262', project: { ...SIMPLES, codigoServicoSp: null } });
    const res = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('project.codigoServicoSp');
  });
});
