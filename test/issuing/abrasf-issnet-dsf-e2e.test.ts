import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * Simples Nacional providers in Brasília/DF (5300108, ISSNet ABRASF 2.04, CNAE required) and Belém/PA (1501402, DSF
 * ABRASF 2.03 in no namespace) issue, query and cancel over HTTP as users, through the generic ABRASF engine
 * (`abrasf-v2:issnet`, `abrasf-v2:dsf`) and its sandboxes; in Brasília, what spec 4.8 requires is refused at
 * POST /emitir with a 400 naming the field.
 */

const SIMPLES = { regimeTributario: '3', aliquotaSimples: 6, cnae: '6201501' };
const BRASILIA_SERVICE = {
  servico: { descricao: 'Desenvolvimento de software', codigo: '010101', codigoTributacaoMunicipal: '001' },
};

let t: TestService;
let brasilia: OnboardedProject;
let belem: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  brasilia = await onboardProject(t, { project: { ...SIMPLES, codigoMunicipio: '5300108' } });
  belem = await onboardProject(t, { cnpj: '45723174000110', project: { ...SIMPLES, codigoMunicipio: '1501402' } });
});
afterAll(async () => {
  await t?.close();
});

async function waitForStatus(key: string, invoiceId: string, done: (status: string) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request('GET', `/invoices/${invoiceId}/status`, { key });
    if (done(res.body.status) || Date.now() > deadline) return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function issueQueryCancel(p: OnboardedProject, body: Record<string, unknown>) {
  const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody(body) });
  expect(res.status, res.text).toBe(202);
  const status = await waitForStatus(p.apiKey, res.body.invoiceId, (s) => ['issued', 'rejected', 'failed'].includes(s));
  expect(status.status, JSON.stringify(status)).toBe('issued');
  expect(status.numeroNfse).toMatch(/^\d+$/);
  const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml?type=emission`, { key: p.apiKey });
  const text = xml.status === 302 ? await (await fetch(xml.headers.get('location')!)).text() : xml.text;
  expect(text).toContain(`<Numero>${status.numeroNfse}</Numero>`);
  const cancel = await t.request('POST', '/cancelar', {
    key: p.apiKey,
    body: { invoiceId: res.body.invoiceId, motivo: 'Erro na emissão' },
  });
  expect(cancel.status, cancel.text).toBeLessThan(300);
  const cancelled = await waitForStatus(p.apiKey, res.body.invoiceId, (s) => s === 'cancelled');
  expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');
  await t.service.sandbox?.flushExchanges();
  return { invoiceId: res.body.invoiceId as string, numeroNfse: status.numeroNfse as string };
}

/** The PDF rendered here: 200 inline, or, once the documents job has stored it, 302 to our own stored copy. */
async function localPdf(key: string, invoiceId: string): Promise<Buffer> {
  const res = await t.request('GET', `/invoices/${invoiceId}/pdf`, { key });
  if (res.status === 302) {
    const location = res.headers.get('location')!;
    expect(location).not.toMatch(/belem\.pa\.gov\.br/);
    return Buffer.from(await (await fetch(location)).arrayBuffer());
  }
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/pdf');
  return res.bytes;
}

describe('issuing through ISSNet (Brasília) and DSF (Belém), as a user', () => {
  it('issues, queries and cancels a note in Brasília (ISSNet, CNAE, URI="" signatures)', async () => {
    const note = await issueQueryCancel(brasilia, { ...BRASILIA_SERVICE, referencia: 'issnet-1' });
    // Brasília publishes no PDF nor consultation link: a DANFSe-like PDF rendered from the ABRASF NFS-e (spec 4.4)
    expect((await localPdf(brasilia.apiKey, note.invoiceId)).subarray(0, 5).toString()).toBe('%PDF-');
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'abrasf-v2-issnet', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('GerarNfse');
    expect(exchanges).toContain('<CodigoCnae>6201501</CodigoCnae>');
    expect(exchanges).toContain('CancelarNfse');
  });

  it('refuses at POST /emitir, with a 400 naming each field, a Brasília note without what spec 4.8 requires', async () => {
    const res = await t.request('POST', '/emitir', {
      key: brasilia.apiKey,
      body: invoiceBody({ tomador: { cnpj: '11444777000161', nome: 'Cliente Tomador SA' } }),
    });
    expect(res.status, res.text).toBe(400);
    const text = JSON.stringify(res.body);
    expect(text).toContain('servico.codigoTributacaoMunicipal');
    expect(text).toContain('tomador.endereco');
  });

  it('issues, queries and cancels a note in Belém (DSF, no namespace)', async () => {
    const note = await issueQueryCancel(belem, { referencia: 'dsf-1' });
    // Belém publishes a consultation page for production notes only: a homologation note is rendered here
    expect((await localPdf(belem.apiKey, note.invoiceId)).subarray(0, 5).toString()).toBe('%PDF-');
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'abrasf-v2-dsf', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('GerarNfseEnvio');
    expect(exchanges).toContain('CancelarNfse');
  });
});
