import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * A Simples Nacional provider in Guarulhos/SP (GINFES, ABRASF 1.0 "v3") issues, queries and cancels through the
 * GINFES sandbox (`/municipal/ginfes/…`) over HTTP as a user: RecepcionarLoteRpsV3 answers a Protocolo, the poll job
 * asks ConsultarSituacaoLoteRpsV3 / ConsultarLoteRpsV3 until the note is issued; the PDF is a 302 to GINFES's
 * report; a Guarulhos project without its CNAE is refused at POST /emitir with a 400 naming `project.cnae`.
 */
const GUARULHOS = '3518800';
const SIMPLES = {
  codigoMunicipio: GUARULHOS,
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
  cnae: '6201501',
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

async function waitForStatus(invoiceId: string, done: (status: string) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request('GET', `/invoices/${invoiceId}/status`, { key: p.apiKey });
    if (done(res.body.status) || Date.now() > deadline) return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('issuing through GINFES (rpc/literal SOAP, asynchronous lotes), as a user in Guarulhos', () => {
  it('issues (pending → polled → issued), redirects the PDF to GINFES and cancels a note', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'ginfes-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForStatus(res.body.invoiceId, (s) => s === 'issued' || s === 'rejected' || s === 'failed');
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const pdf = await t.request('GET', `/invoices/${res.body.invoiceId}/pdf`, { key: p.apiKey });
    expect(pdf.status, pdf.text).toBe(302);
    const location = pdf.headers.get('location') ?? '';
    expect(location).toContain('https://visualizar.ginfesh.com.br/report/consultarNota?__report=nfs_ver4');
    expect(location).toContain(`numNota=${status.numeroNfse}`);

    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId: res.body.invoiceId, motivo: 'Serviço não prestado ao tomador' },
    });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    const cancelled = await waitForStatus(res.body.invoiceId, (s) => s === 'cancelled');
    expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');

    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'ginfes', 'exchanges.jsonl'), 'utf8');
    for (const operation of [
      'RecepcionarLoteRpsV3',
      'ConsultarSituacaoLoteRpsV3',
      'ConsultarLoteRpsV3',
      'CancelarNfseV3',
    ]) {
      expect(exchanges).toContain(operation);
    }
    expect(exchanges).toContain('<arg1>&lt;EnviarLoteRpsEnvio');
  });

  it('refuses at POST /emitir, with a 400 naming the project field, a Guarulhos project without its CNAE', async () => {
    const other = await onboardProject(t, {
      cnpj: '45723174000110',
      project: { ...SIMPLES, cnae: null },
    });
    const res = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('project.cnae');
  });
});
