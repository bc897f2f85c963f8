import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { emissionXml, issueAndSettle, sandboxExchanges } from '../support/issuing-flow.ts';
import { invoiceBody, onboardProject } from '../support/onboarding.ts';

/**
 * A provider of Rondonópolis/MT (5107602, Agili) issues and cancels over HTTP as a user, through `own-layout:agili`
 * and its sandbox (`/municipal/agili/…`): GerarNfse with the project's digital key (`cscToken` → `ChaveDigital`) and
 * its city hall's CNPJ (`cnpjPrefeitura` → `UnidadeGestora`), validated by the sandbox against the provider's schema;
 * CancelarNfse, read back by ConsultarNfseFaixa.
 */
const KEY = '5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d';
const CITY = {
  codigoMunicipio: '5107602',
  regimeTributario: '1',
  inscricaoMunicipal: '3810',
  cscToken: KEY,
  cnpjPrefeitura: '03.347.101/0001-21',
};

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through Agili (own XML layout 1.00, UnidadeGestora and ChaveDigital), as a user', () => {
  it('issues, serves the note with the key masked, and cancels', async () => {
    const p = await onboardProject(t, { project: CITY });
    const { invoiceId, status } = await issueAndSettle(t, p.apiKey, invoiceBody({ referencia: 'agili-1' }));
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const text = await emissionXml(t, p.apiKey, invoiceId);
    expect(text).toContain('<Nfse');
    expect(text).toContain(`<Numero>${status.numeroNfse}</Numero>`);
    expect(text).not.toContain(KEY);

    const cancel = await t.request('POST', '/cancelar', { key: p.apiKey, body: { invoiceId } });
    expect([200, 202]).toContain(cancel.status);
    const cancelled = await waitForInvoiceState(t, p.apiKey, invoiceId, (s) =>
      ['cancelled', 'failed', 'rejected'].includes(s),
    );
    expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');

    const exchanges = await sandboxExchanges(t, 'agili');
    for (const operation of ['GerarNfse', 'CancelarNfse', '03347101000121']) expect(exchanges).toContain(operation);
  });
});
