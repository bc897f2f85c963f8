import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '../../src/xml/xsd.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * ABase over HTTP, as a user: a project in Santo Ângelo/RS (an ABase city) carrying its Bearer credential
 * (`cscToken`) is issued through ABase's own transport (raw signed DPS + Bearer + certificate on TLS, asynchronous:
 * the invoice waits on its protocol and the poll job ends it issued), queried, and cancelled; a project without the
 * credential is refused at POST /emitir with a 400 naming project.cscToken (spec 4.8).
 */

let t: TestService;

const SANTO_ANGELO = {
  codigoMunicipio: '4317509',
  regimeTributario: '3',
  aliquotaSimples: 6,
  endereco: {
    logradouro: 'Rua Marechal Floriano',
    numero: '1000',
    bairro: 'Centro',
    cidade: 'Santo Ângelo',
    uf: 'RS',
    cep: '98801000',
  },
};

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

async function waitFor(apiKey: string, invoiceId: string, done: (s: { status: string }) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await t.request('GET', `/invoices/${invoiceId}/status`, { key: apiKey });
    if (done(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`invoice ${invoiceId}: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('issuing through ABase (sandbox), as a user', () => {
  it('issues asynchronously (protocol → poll), serves the NFS-e, and cancels it', async () => {
    const p = await onboardProject(t, { project: { ...SANTO_ANGELO, cscToken: 'abase-chave-de-acesso' } });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ referencia: 'abase-1' }) });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId, 20_000);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.chNFSe).toMatch(/^\d{50}$/);
    expect(status.chNFSe.slice(0, 7)).toBe('4317509');
    expect(status.numeroNfse).toMatch(/^\d+$/);

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
    expect(cancel.status, cancel.text).toBe(202);
    const cancelled = await waitFor(p.apiKey, res.body.invoiceId, (s) => s.status === 'cancelled');
    expect(cancelled.chNFSe).toBe(status.chNFSe);
  });

  it('refuses at POST /emitir, with 400 naming project.cscToken, a project without the Bearer credential', async () => {
    const p = await onboardProject(t, { cnpj: '11222333000262', project: SANTO_ANGELO });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('project.cscToken');
  });
});
