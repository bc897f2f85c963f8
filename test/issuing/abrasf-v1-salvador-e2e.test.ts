import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import {
  emissionXml,
  expectCancellationNotOffered,
  issueAndSettle,
  sandboxExchanges,
} from '../support/issuing-flow.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * A Simples Nacional provider in Salvador/BA (2927408, ISSSalvador: ABRASF 1.00 on WCF, asynchronous lotes) issues,
 * queries and asks to cancel over HTTP as a user, through the generic ABRASF 1.0 engine (`abrasf-v1:isssalvador`)
 * and its sandbox (`/municipal/isssalvador/…`): EnviarLoteRPS (RPS and lote signed, client certificate on TLS)
 * answers a Protocolo, the poll job asks ConsultarSituacaoLoteRPS / ConsultarLoteRPS until the note is issued.
 * Salvador cancels only by administrative process: POST /cancelar ends CANCEL_NOT_SUPPORTED and the note stays
 * issued. A Salvador invoice without its IBS/CBS framing (NBS, cClassTrib, cIndOp, required by Salvador's schema)
 * is refused at POST /emitir with a 400.
 */
const SALVADOR = {
  codigoMunicipio: '2927408',
  regimeTributario: '3',
  aliquotaSimples: 5,
  inscricaoMunicipal: '1234567',
  cnae: '6201501',
};
/** the IBS/CBS framing as project defaults (the onboarding's); `NO_FRAMING` drops them */
const FRAMING = {
  defaultNbs: '115021000',
  defaultIndicadorOperacao: '100301',
  defaultCstIbscbs: '000',
  defaultClassificacaoTributaria: '000001',
};
const NO_FRAMING = Object.fromEntries(Object.keys(FRAMING).map((k) => [k, undefined]));

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t, { project: { ...SALVADOR, ...FRAMING } });
});
afterAll(async () => {
  await t?.close();
});

describe('issuing through ISSSalvador (ABRASF 1.00, asynchronous lotes), as a user in Salvador', () => {
  it('issues (pending → polled → issued), finds the note, and is told the cancellation is not offered', async () => {
    const { invoiceId, status } = await issueAndSettle(t, p.apiKey, invoiceBody({ referencia: 'salvador-1' }));
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.numeroNfse).toMatch(/^\d+$/);

    const text = await emissionXml(t, p.apiKey, invoiceId);
    expect(text).toContain('<CompNfse');
    expect(text).toContain(`<Numero>${status.numeroNfse}</Numero>`);
    expect(text).toContain('<NBS>115021000</NBS>');

    await expectCancellationNotOffered(t, p.apiKey, invoiceId);

    const exchanges = await sandboxExchanges(t, 'abrasf-v1-isssalvador');
    for (const operation of ['EnviarLoteRPS', 'ConsultarSituacaoLoteRPS', 'ConsultarLoteRPS']) {
      expect(exchanges).toContain(operation);
    }
  });

  it('refuses at POST /emitir, with a 400, a Salvador invoice without its IBS/CBS framing', async () => {
    const other = await onboardProject(t, { cnpj: '45723174000110', project: { ...SALVADOR, ...NO_FRAMING } });
    const res = await t.request('POST', '/emitir', { key: other.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toContain('valores.ibscbs');
  });
});
