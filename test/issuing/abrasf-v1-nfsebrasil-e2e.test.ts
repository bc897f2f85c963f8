import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import {
  emissionXml,
  expectCancellationNotOffered,
  issueAndSettle,
  sandboxExchanges,
} from '../support/issuing-flow.ts';
import { invoiceBody, onboardProject } from '../support/onboarding.ts';

/**
 * A provider in an NFSeBrasil city of Minas Gerais (3151404, not adherent to the national environment) issues and
 * queries over HTTP as a user, through `abrasf-v1:nfsebrasil` and its sandbox (`/municipal/nfsebrasil/…`):
 * importarLoteRPS (the project's access key as `hashValidador`, nothing signed, no client certificate) answers a
 * protocolo, the poll job asks consultarLoteRPS until the note is issued. The provider's cancellation is not offered
 * (its answer is not documented publicly): POST /cancelar ends CANCEL_NOT_SUPPORTED. A project without its access key
 * is refused at POST /emitir with a 400 naming project.cscToken.
 */
const CITY = {
  codigoMunicipio: '3151404',
  regimeTributario: '3',
  aliquotaSimples: 3,
  inscricaoMunicipal: '3810',
  cnae: '6201501',
};

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through NFSeBrasil (ABRASF 1.00 own schema, asynchronous lotes), as a user', () => {
  it('issues (pending → polled → issued), serves the note, and is told the cancellation is not offered', async () => {
    const p = await onboardProject(t, { project: { ...CITY, cscToken: '09e59b2c979ebf8d009a48c2043eee94' } });
    const { invoiceId, status } = await issueAndSettle(t, p.apiKey, invoiceBody({ referencia: 'nfsebrasil-1' }));
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const text = await emissionXml(t, p.apiKey, invoiceId);
    expect(text).toContain('<CompNfse');
    expect(text).toContain(`<Numero>${status.numeroNfse}</Numero>`);

    await expectCancellationNotOffered(t, p.apiKey, invoiceId);

    const exchanges = await sandboxExchanges(t, 'abrasf-v1-nfsebrasil');
    for (const operation of ['importarLoteRPS', 'consultarLoteRPS']) expect(exchanges).toContain(operation);
    expect(exchanges).toContain('hashValidador');
  });

  it('refuses at POST /emitir, with a 400 naming project.cscToken, a project without its access key', async () => {
    const p = await onboardProject(t, { cnpj: '45723174000110', project: CITY });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('project.cscToken');
  });
});
