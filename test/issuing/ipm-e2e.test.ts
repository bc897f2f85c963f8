import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject } from '../support/onboarding.ts';

/**
 * IPM's own layout over HTTP, as a user: a Simples Nacional provider in Rio do Sul/SC (IPM 1.01, TOM 8291) carrying
 * its Atende.Net Basic credentials (`basicAuthUsuario` / `basicAuthSenha`, sealed with the project) issues, gets the
 * PDF as a redirect to IPM's public note page, and cancels, through the IPM sandbox (multipart + Basic); a project
 * without the credentials is refused at POST /emitir with a 400 naming them (spec 4.8), and a project in an IPM city
 * whose TOM code the shipped table lacks with 422 ENGINE_NOT_AVAILABLE (routing: not served) naming
 * `project.codigoMunicipio`.
 */

const RIO_DO_SUL = {
  codigoMunicipio: '4214805',
  inscricaoMunicipal: '123456',
  regimeTributario: '3',
  aliquotaSimples: 6,
  endereco: {
    logradouro: 'Rua XV de Novembro',
    numero: '100',
    bairro: 'Centro',
    cidade: 'Rio do Sul',
    uf: 'SC',
    cep: '89160000',
  },
};

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through IPM (own layout, Basic auth), as a user', () => {
  it('issues, redirects the PDF to the provider, and cancels a note in an IPM city', async () => {
    const p = await onboardProject(t, {
      project: { ...RIO_DO_SUL, basicAuthUsuario: '11222333000181', basicAuthSenha: 'senha-atende' },
    });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'ipm-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoiceState(
      t,
      p.apiKey,
      res.body.invoiceId,
      (s) => s === 'issued' || s === 'rejected' || s === 'failed',
    );
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const pdf = await t.request('GET', `/invoices/${res.body.invoiceId}/pdf`, { key: p.apiKey });
    expect(pdf.status, pdf.text).toBe(302);
    expect(pdf.headers.get('location')).toMatch(/^http:\/\/sync\.nfs-e\.net\/.*codauten=\d{14}$/);

    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId: res.body.invoiceId, motivo: 'Serviço não prestado ao tomador' },
    });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    const cancelled = await waitForInvoiceState(t, p.apiKey, res.body.invoiceId, (s) => s === 'cancelled');
    expect(cancelled.status, JSON.stringify(cancelled)).toBe('cancelled');

    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'ipm', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('multipart/form-data');
    expect(exchanges).toContain('<identificador>11222333000181-');
    expect(exchanges).toContain('<situacao>C</situacao>');
  });

  it('refuses at POST /emitir, with 400 naming the Basic credentials, a project without them', async () => {
    const p = await onboardProject(t, { cnpj: '11222333000262', project: RIO_DO_SUL });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['project.basicAuthUsuario', 'project.basicAuthSenha']));
  });

  it('refuses at POST /emitir, with 422 naming the municipality, an IPM city with no TOM code in the shipped table', async () => {
    const p = await onboardProject(t, {
      cnpj: '11444777000161',
      project: {
        ...RIO_DO_SUL,
        codigoMunicipio: '3107406',
        endereco: { ...RIO_DO_SUL.endereco, cidade: 'Bom Despacho', uf: 'MG', cep: '35600000' },
        basicAuthUsuario: '11444777000161',
        basicAuthSenha: 'senha-atende',
      },
    });
    const res = await t.request('POST', '/emitir', {
      key: p.apiKey,
      body: invoiceBody({ tomador: { cpf: '52998224725', nome: 'Fulano de Tal' } }),
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('ENGINE_NOT_AVAILABLE');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('project.codigoMunicipio');
  });
});
