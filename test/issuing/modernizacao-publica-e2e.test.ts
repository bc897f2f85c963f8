import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '../../src/xml/xsd.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { expectCancellationNotOffered } from '../support/issuing-flow.ts';
import { invoiceBody, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * Modernização Pública over HTTP, as a user: a project in Belford Roxo/RJ carrying its Basic credentials
 * (`basicAuthUsuario` / `basicAuthSenha`) is issued through the provider's own transport (raw signed DPS + Basic +
 * certificate on TLS, synchronous); its cancellation is refused (no cancellation service is documented for this
 * provider) and the note stays issued; a project without the credentials is refused at POST /emitir with a 400
 * naming them (spec 4.8).
 */

let t: TestService;

const BELFORD_ROXO = {
  codigoMunicipio: '3300456',
  regimeTributario: '3',
  aliquotaSimples: 6,
  endereco: {
    logradouro: 'Avenida Retiro da Imprensa',
    numero: '800',
    bairro: 'Centro',
    cidade: 'Belford Roxo',
    uf: 'RJ',
    cep: '26113340',
  },
};

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through Modernização Pública (sandbox), as a user', () => {
  it('issues, serves the NFS-e, and refuses the cancellation it cannot send', async () => {
    const p = await onboardProject(t, {
      project: { ...BELFORD_ROXO, basicAuthUsuario: 'ws-usuario', basicAuthSenha: 'ws-senha' },
    });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'mp-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.chNFSe).toMatch(/^\d{50}$/);
    expect(status.chNFSe.slice(0, 7)).toBe('3300456');

    const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml?type=emission`, {
      key: p.apiKey,
      redirect: 'follow',
    });
    expect(xml.status).toBe(200);
    expect(validateXml('NFSe', xml.text)).toEqual({ ok: true });

    await expectCancellationNotOffered(t, p.apiKey, res.body.invoiceId);
  });

  it('refuses at POST /emitir, with 400 naming the Basic credentials, a project without them', async () => {
    const p = await onboardProject(t, { cnpj: '11222333000262', project: BELFORD_ROXO });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['project.basicAuthUsuario', 'project.basicAuthSenha']));
  });
});
