import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject } from '../support/onboarding.ts';

/**
 * Over HTTP, as a user: a Simples Nacional provider in Maceió/AL (2704302, GISS ABRASF 2.04, asynchronous lote only)
 * issues — RecepcionarLoteRps, then ConsultarLoteRps polled through "still processing" (Situacao 2, E178) to
 * Situacao 4 — queries and cancels, through the generic engine (`abrasf-v2:giss`) and its sandbox
 * (`/municipal/abrasf-giss/…`); and one in Porto Velho/RO (1100205, EL ABRASF 2.04, `<Op><Op>Request>` with CDATA).
 */

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

async function waitForStatus(apiKey: string, invoiceId: string, done: (status: string) => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  const seen: string[] = [];
  for (;;) {
    const res = await t.request('GET', `/invoices/${invoiceId}/status`, { key: apiKey });
    if (seen.at(-1) !== res.body.status) seen.push(res.body.status);
    if (done(res.body.status) || Date.now() > deadline) return { ...res.body, seen };
    await new Promise((r) => setTimeout(r, 600));
  }
}

async function issueQueryCancel(apiKey: string, referencia: string) {
  const res = await t.request('POST', '/emitir', { key: apiKey, body: invoiceBody({ referencia }) });
  expect(res.status, res.text).toBe(202);
  const status = await waitForStatus(apiKey, res.body.invoiceId, (s) => ['issued', 'rejected', 'failed'].includes(s));
  expect(status.status, JSON.stringify(status)).toBe('issued');
  expect(status.numeroNfse).toMatch(/^\d+$/);
  const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml?type=emission`, { key: apiKey });
  const text = xml.status === 302 ? await (await fetch(xml.headers.get('location')!)).text() : xml.text;
  expect(text).toContain('CompNfse');
  const cancel = await t.request('POST', '/cancelar', {
    key: apiKey,
    body: { invoiceId: res.body.invoiceId, motivo: 'Serviço não prestado ao tomador' },
  });
  expect(cancel.status, cancel.text).toBeLessThan(300);
  const cancelled = await waitForStatus(apiKey, res.body.invoiceId, (s) => s === 'cancelled');
  expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');
  return status;
}

describe('issuing through GISS and EL (ABRASF 2.04), as a user', () => {
  it('issues in Maceió through the asynchronous lote, polled to issued, then queries and cancels', async () => {
    const p = await onboardProject(t, {
      project: { codigoMunicipio: '2704302', regimeTributario: '3', aliquotaSimples: 5, inscricaoMunicipal: '123456' },
    });
    await issueQueryCancel(p.apiKey, 'giss-1');
    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'abrasf-v2-giss', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('RecepcionarLoteRps');
    expect(exchanges).toContain('ConsultarLoteRps');
    expect(exchanges).toContain('E178');
    expect(exchanges).toContain('CancelarNfse');
    expect(exchanges).toContain('enviar-lote-rps-envio-v2_04.xsd');
  });

  it('issues, queries and cancels in Porto Velho through EL', async () => {
    const p = await onboardProject(t, {
      cnpj: '45723174000110',
      project: { codigoMunicipio: '1100205', regimeTributario: '3', aliquotaSimples: 5, inscricaoMunicipal: '654321' },
    });
    await issueQueryCancel(p.apiKey, 'el-1');
    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'abrasf-v2-el', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('GerarNfseRequest');
    expect(exchanges).toContain('CDATA');
  });
});
