import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * A Simples Nacional provider in Ariquemes/RO (1100023, Fiorilli ABRASF 2.00/2.01) issues, queries and cancels over
 * HTTP as a user, through the generic ABRASF engine (`abrasf-v2:fiorilli`) and its sandbox
 * (`/municipal/abrasf-fiorilli/…`): gerarNfse with the portal credentials of the project (basicAuthUsuario /
 * basicAuthSenha) after the message, the NFS-e known by number and CodigoVerificacao, then cancelarNfse.
 */

const ARIQUEMES = '1100023';
const SIMPLES = {
  codigoMunicipio: ARIQUEMES,
  regimeTributario: '3',
  aliquotaSimples: 6,
  basicAuthUsuario: '11222333000181',
  basicAuthSenha: 'senha-do-portal',
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

describe('issuing through Fiorilli (ABRASF 2.01, SOAP with body credentials), as a user', () => {
  it('issues, queries and cancels a note in Ariquemes', async () => {
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'fiorilli-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoiceState(t, p.apiKey, res.body.invoiceId, (s) =>
      ['issued', 'rejected', 'failed'].includes(s),
    );
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);
    expect(status.chNFSe ?? null).toBeNull();

    const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml?type=emission`, { key: p.apiKey });
    const text = xml.status === 302 ? await (await fetch(xml.headers.get('location')!)).text() : xml.text;
    expect(text).toContain('<CompNfse');
    expect(text).toContain(`<Numero>${status.numeroNfse}</Numero>`);
    expect(text).toMatch(/<CodigoVerificacao>\w+<\/CodigoVerificacao>/);

    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId: res.body.invoiceId, motivo: 'Serviço não prestado ao tomador' },
    });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    const cancelled = await waitForInvoiceState(t, p.apiKey, res.body.invoiceId, (s) => s === 'cancelled');
    expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');

    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'abrasf-v2-fiorilli', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('gerarNfse');
    expect(exchanges).toContain('<username>11222333000181</username>');
    expect(exchanges).toContain('cancelarNfse');
    expect(exchanges).toContain('<CodigoCancelamento>2</CodigoCancelamento>');
  });

  it('refuses at POST /emitir, with a 400 naming the credential, a Fiorilli project without its portal password', async () => {
    const other = await onboardProject(t, {
      cnpj: '45723174000110',
      project: { ...SIMPLES, basicAuthUsuario: '45723174000110', basicAuthSenha: undefined },
    });
    const res = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(JSON.stringify(res.body.errors)).toMatch(/municipalPassword|basicAuthSenha/);
  });

  it('still refuses a Simples project in Itatiba with 422 ENGINE_NOT_AVAILABLE (fintelISS is not implemented)', async () => {
    const campinas = await onboardProject(t, {
      cnpj: '11222333000262',
      project: { codigoMunicipio: '3523404', regimeTributario: '3', aliquotaSimples: 6 },
    });
    const res = await t.request('POST', '/emitir', { key: campinas.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('ENGINE_NOT_AVAILABLE');
  });
});
