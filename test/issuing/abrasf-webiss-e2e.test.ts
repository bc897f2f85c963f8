import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { emissionXml, issueAndSettle, sandboxExchanges } from '../support/issuing-flow.ts';
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
    const { invoiceId, status } = await issueAndSettle(t, p.apiKey, invoiceBody({ referencia: 'webiss-1' }));
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const text = await emissionXml(t, p.apiKey, invoiceId);
    expect(text).toContain('<CompNfse');
    expect(text).toContain(`<Numero>${status.numeroNfse}</Numero>`);
    expect(text).toMatch(/<CodigoVerificacao>[^<]+<\/CodigoVerificacao>/);

    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId, motivo: 'Serviço não prestado ao tomador' },
    });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    const cancelled = await waitForInvoiceState(t, p.apiKey, invoiceId, (s) => s === 'cancelled');
    expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');

    // WebISS publishes a consultation page per note (homologation here): GET /pdf redirects there (spec 4.4)
    const pdf = await t.request('GET', `/invoices/${invoiceId}/pdf`, { key: p.apiKey });
    expect(pdf.status, pdf.text).toBe(302);
    expect(pdf.headers.get('location')).toBe(
      `https://homologacao.webiss.com.br/externo/nfse/visualizar/${p.cnpj}/${encodeURIComponent(status.codigoVerificacao)}/${status.numeroNfse}`,
    );

    const exchanges = await sandboxExchanges(t, 'abrasf-v2-webiss');
    expect(exchanges).toContain('GerarNfse');
    expect(exchanges).toContain('CancelarNfse');
  });
});
