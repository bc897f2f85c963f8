import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '../../src/xml/xsd.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * Fiorilli (IssWeb Nacional) over HTTP, as a user: a Simples project in Assis/SP (a layout-1.01 Fiorilli city)
 * is issued through Fiorilli's SOAP `recepcionarDPS` (certificate on TLS, synchronous, the NFS-e in the answer),
 * then cancelled through the provider's event service (`/nfse/{chave}/eventos`); a project without the
 * municipal user/password the registry asks for is refused at POST /emitir with a 400 naming them (spec 4.8), and
 * a project in a layout-1.00 Fiorilli city (Ji-Paraná/RO) is refused with 422 ENGINE_NOT_AVAILABLE (routing: this engine
 * does not serve that layout), naming `project.codigoMunicipio`.
 */

let t: TestService;

const ASSIS = {
  codigoMunicipio: '3504008',
  regimeTributario: '3',
  aliquotaSimples: 6,
  endereco: {
    logradouro: 'Avenida Rui Barbosa',
    numero: '926',
    bairro: 'Centro',
    cidade: 'Assis',
    uf: 'SP',
    cep: '19814000',
  },
};
const CREDENTIALS = { basicAuthUsuario: 'ws-usuario', basicAuthSenha: 'ws-senha' };

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through Fiorilli (sandbox), as a user', () => {
  it('issues, serves the NFS-e, and cancels a note in a Fiorilli city', async () => {
    const p = await onboardProject(t, { project: { ...ASSIS, ...CREDENTIALS } });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'fio-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.chNFSe).toMatch(/^\d{50}$/);
    expect(status.chNFSe.slice(0, 7)).toBe('3504008');

    const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml?type=emission`, {
      key: p.apiKey,
      redirect: 'follow',
    });
    expect(xml.status).toBe(200);
    expect(validateXml('NFSe', xml.text)).toEqual({ ok: true });

    const cancel = await t.request('POST', '/cancelar', {
      key: p.apiKey,
      body: { invoiceId: res.body.invoiceId, motivo: 'Serviço não prestado ao tomador' },
    });
    expect(cancel.status, cancel.text).toBeLessThan(300);
    const deadline = Date.now() + 15_000;
    let after = cancel.body;
    while (Date.now() < deadline) {
      after = (await t.request('GET', `/invoices/${res.body.invoiceId}/status`, { key: p.apiKey })).body;
      if (after.status === 'cancelled') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(after.status, JSON.stringify(after)).toBe('cancelled');
    // it went to Fiorilli's service, not to the national environment
    expect(t.service.sandbox?.issued().some((r) => r.chaveAcesso === status.chNFSe)).toBe(false);
  });

  it('refuses at POST /emitir a project without the municipal user/password, and a layout-1.00 city', async () => {
    const p = await onboardProject(t, { cnpj: '11222333000262', project: ASSIS });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['project.basicAuthUsuario', 'project.basicAuthSenha']));

    const jiParana = await onboardProject(t, {
      cnpj: '11222333000343',
      project: {
        ...ASSIS,
        ...CREDENTIALS,
        codigoMunicipio: '1100122',
        endereco: { ...ASSIS.endereco, cidade: 'Ji-Paraná', uf: 'RO', cep: '76900000' },
      },
    });
    const old = await t.request('POST', '/emitir', { key: jiParana.apiKey, body: invoiceBody() });
    expect(old.status, old.text).toBe(422);
    expect(old.body.code).toBe('ENGINE_NOT_AVAILABLE');
    expect(old.body.errors.map((e: { field: string }) => e.field)).toContain('project.codigoMunicipio');
  });
});
