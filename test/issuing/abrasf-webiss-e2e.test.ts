import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * A Simples Nacional provider in Aracaju/SE (2800308, WebISS ABRASF 2.02, the textbook official WSDL) issues,
 * queries and cancels over HTTP as a user, through the generic ABRASF engine (`abrasf-v2:webiss`) and its sandbox
 * (`/municipal/abrasf-webiss/…`): GerarNfse signed on the RPS with the client certificate on TLS, the NFS-e known by
 * number and CodigoVerificacao, then CancelarNfse signed on its Pedido.
 */

const ARACAJU = '2800308';

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t, {
    project: { codigoMunicipio: ARACAJU, regimeTributario: '3', aliquotaSimples: 6, inscricaoMunicipal: '123456' },
  });
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through WebISS (ABRASF 2.02) in Aracaju, as a user', () => {
  it('issues, queries and cancels a note', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'webiss-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoiceState(t, p.apiKey, res.body.invoiceId, (s) =>
      ['issued', 'rejected', 'failed'].includes(s),
    );
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml?type=emission`, { key: p.apiKey });
    const text = xml.status === 302 ? await (await fetch(xml.headers.get('location')!)).text() : xml.text;
    expect(text).toContain('<CompNfse');
    expect(text).toContain(`<Numero>${status.numeroNfse}</Numero>`);
    expect(text).toMatch(/<CodigoVerificacao>[^<]+<\/CodigoVerificacao>/);

    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId: res.body.invoiceId, motivo: 'Serviço não prestado ao tomador' },
    });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    const cancelled = await waitForInvoiceState(t, p.apiKey, res.body.invoiceId, (s) => s === 'cancelled');
    expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');

    // WebISS publishes a consultation page per note (homologation here): GET /pdf redirects there (spec 4.4)
    const pdf = await t.request('GET', `/invoices/${res.body.invoiceId}/pdf`, { key: p.apiKey });
    expect(pdf.status, pdf.text).toBe(302);
    expect(pdf.headers.get('location')).toBe(
      `https://homologacao.webiss.com.br/externo/nfse/visualizar/${p.cnpj}/${encodeURIComponent(status.codigoVerificacao)}/${status.numeroNfse}`,
    );

    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'abrasf-v2-webiss', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('GerarNfse');
    expect(exchanges).toContain('CancelarNfse');
  });
});
