import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForInvoiceState } from '../documents-flow/support.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject } from '../support/onboarding.ts';

/**
 * IPM's own layout over HTTP, as a user: a Simples Nacional provider in Rio do Sul/SC (IPM 1.01, TOM 8291) carrying
 * its Atende.Net Basic credentials (`basicAuthUsuario` / `basicAuthSenha`, sealed with the project) issues, gets the
 * provider's PDF from the note's public link as 200 application/pdf inline (spec 4.4), sees a failing link as 502
 * PORTAL_ERROR (never a 500), and cancels, through the IPM sandbox (multipart + Basic); a provider in Penha/SC (legacy
 * IPM 1.00: the credentials as form fields) issues and gets its PDF the same way; a project without the credentials
 * is refused at POST /emitir with a 400 naming them (spec 4.8).
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
  it('issues, serves the provider PDF inline (502 when its link fails), and cancels a note in an IPM city', async () => {
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
    expect(pdf.status, pdf.text).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toMatch(/^inline; filename="nfse-\d+\.pdf"$/);
    expect(pdf.text.startsWith('%PDF-')).toBe(true);

    // the provider's link unreachable (the project's endpoint override, spec 4.8.3, points nowhere): 502, not 500
    const project = `/org/projects/${p.projectId}`;
    const nowhere = { endpointOverride: 'https://127.0.0.1:9/ipm' };
    expect((await t.request('PATCH', project, { key: p.orgToken, body: nowhere })).status).toBe(200);
    const failing = await t.request('GET', `/invoices/${res.body.invoiceId}/pdf`, { key: p.apiKey });
    expect(failing.status, failing.text).toBe(502);
    expect(failing.body.code).toBe('PORTAL_ERROR');
    const restored = { endpointOverride: null };
    expect((await t.request('PATCH', project, { key: p.orgToken, body: restored })).status).toBe(200);

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

  it('issues in a legacy IPM 1.00 city (credentials as form fields) and serves its PDF', async () => {
    const p = await onboardProject(t, {
      cnpj: '11444777000161',
      project: {
        ...RIO_DO_SUL,
        codigoMunicipio: '4212502',
        endereco: { ...RIO_DO_SUL.endereco, cidade: 'Penha', uf: 'SC', cep: '88385000' },
        basicAuthUsuario: '11444777000161',
        basicAuthSenha: 'senha-atende',
      },
    });
    const res = await t.request('POST', '/emitir', {
      key: p.apiKey,
      body: invoiceBody({ tomador: { cpf: '52998224725', nome: 'Fulano de Tal' } }),
    });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoiceState(
      t,
      p.apiKey,
      res.body.invoiceId,
      (s) => s === 'issued' || s === 'rejected' || s === 'failed',
    );
    expect(status.status, JSON.stringify(status)).toBe('issued');
    const pdf = await t.request('GET', `/invoices/${res.body.invoiceId}/pdf`, { key: p.apiKey });
    expect(pdf.status, pdf.text).toBe(200);
    expect(pdf.text.startsWith('%PDF-')).toBe(true);

    await t.service.sandbox?.flushExchanges();
    const exchanges = readFileSync(join(t.dataDir, 'sandbox', 'ipm', 'exchanges.jsonl'), 'utf8');
    expect(exchanges).toContain('eletron=1');
    expect(exchanges).toContain('name=\\"f1\\"');
  });
});
