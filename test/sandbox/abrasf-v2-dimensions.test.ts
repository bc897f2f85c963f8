import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AbrasfOperation, AbrasfProviderConfig } from '../../src/engines/abrasf-v2/config.ts';
import { buildCancelamento, buildConsultarPorRps } from '../../src/engines/abrasf-v2/messages.ts';
import { FISCO_CONFIG } from '../../src/engines/abrasf-v2/providers/fisco.ts';
import { SAATRI_CONFIG } from '../../src/engines/abrasf-v2/providers/saatri.ts';
import { TRIBUTUS_CONFIG } from '../../src/engines/abrasf-v2/providers/tributus.ts';
import { abrasfRequest } from '../../src/engines/abrasf-v2/transport.ts';
import type { SendContext } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import type { AbrasfSandboxProfile } from '../../src/sandbox/abrasf-v2/index.ts';
import { FISCO_PROFILE } from '../../src/sandbox/abrasf-v2/fisco.ts';
import { SAATRI_PROFILE } from '../../src/sandbox/abrasf-v2/saatri.ts';
import { TRIBUTUS_PROFILE } from '../../src/sandbox/abrasf-v2/tributus.ts';
import { startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The configuration dimensions of Tributus, Saatri and Fisco on raw requests to their sandbox profiles: what the
 * sandbox refuses (a missing `tokenAuth`, the official `Id` where Tributus writes `id`, a missing WS-Security
 * header, a SOAPAction without `/Infse/`, a missing client certificate) and what it reads (an unqualified Fisco
 * message, a qualified one too).
 */
const project = fiscalProfile({ ambiente: 2, codigoMunicipio: '2900801', inscricaoMunicipal: '3344' });
// an RPS the sandbox does not know: a query that passes every check answers E4
const rpsXml = `<Rps><InfDeclaracaoPrestacaoServico><Rps><IdentificacaoRps><Numero>987654</Numero><Serie>1</Serie><Tipo>1</Tipo></IdentificacaoRps></Rps><Prestador><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>3344</InscricaoMunicipal></Prestador></InfDeclaracaoPrestacaoServico></Rps>`;
/** the message codes of an answer, wherever the idiom puts the message (an escaped `outputXML` / `<op>Result`) */
const codes = (xml: string) =>
  [
    ...xml
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .matchAll(/<Codigo>(\w+)<\/Codigo>/g),
  ].map((m) => m[1]);

function harness(profile: AbrasfSandboxProfile) {
  const state: { env?: Awaited<ReturnType<typeof startAbrasfSandbox>>; http?: GovernmentHttpClient } = {};
  beforeAll(async () => {
    state.env = await startAbrasfSandbox(profile, project);
    state.http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, state.env.caPem);
  });
  afterAll(async () => {
    await state.http?.close();
    await state.env?.close();
  });
  const context = (credentials: SendContext['credentials']) =>
    ({
      ambiente: 2,
      municipality: project.codigoMunicipio,
      endpoints: { url: () => `${state.env!.url}/municipal/${profile.slug}/producaorestrita` },
      credentials,
    }) as unknown as SendContext;
  return async function send(
    config: AbrasfProviderConfig,
    operation: AbrasfOperation,
    message: string,
    options: { credentials?: SendContext['credentials']; certificate?: boolean } = {},
  ) {
    const request = abrasfRequest(config, operation, message, context(options.credentials ?? {}), 'query');
    const answer = await state.http!.send(
      options.certificate === false ? null : state.env!.certificate,
      'POST',
      request.url,
      { headers: request.headers, body: request.body ?? '' },
    );
    if (answer.kind !== 'response') throw new Error(answer.reason);
    return { ...answer, request: request.body ?? '' };
  };
}

describe('Tributus: the authorization key in the URL and the lowercase id', () => {
  const send = harness(TRIBUTUS_PROFILE);
  const query = buildConsultarPorRps(TRIBUTUS_CONFIG, 'ConsultarNfseRpsEnvio', rpsXml);

  it('answers a query with tokenAuth, and refuses one without it (E179)', async () => {
    const ok = await send(TRIBUTUS_CONFIG, 'queryByRps', query, { credentials: { authorizationKey: 'chave' } });
    expect(codes(ok.body)).toEqual(['E4']);
    const bare = { ...TRIBUTUS_CONFIG, urlCredential: undefined };
    expect(codes((await send(bare, 'queryByRps', query)).body)).toEqual(['E179']);
  });

  it('refuses the official Id on InfPedidoCancelamento (E160) and reads the lowercase id (then: unsigned, E180)', async () => {
    const note = { numero: '1', cnpj: project.cnpj, inscricaoMunicipal: '3344', codigoMunicipio: '2107407', code: '1' };
    const credentials = { authorizationKey: 'chave' };
    const official = buildCancelamento({ ...TRIBUTUS_CONFIG, idAttribute: 'Id' }, 'CancelarNfseEnvio', note).xml;
    const official2 = await send(TRIBUTUS_CONFIG, 'cancel', official, { credentials });
    expect(codes(official2.body)).toEqual(['E160']);
    const lower = buildCancelamento(TRIBUTUS_CONFIG, 'CancelarNfseEnvio', note).xml;
    expect(lower).toContain('<InfPedidoCancelamento id="');
    expect(codes((await send(TRIBUTUS_CONFIG, 'cancel', lower, { credentials })).body)).toEqual(['E180']);
  });
});

describe('Saatri: WS-Security and the WCF SOAPAction', () => {
  const send = harness(SAATRI_PROFILE);
  const query = buildConsultarPorRps(SAATRI_CONFIG, 'ConsultarNfseRpsEnvio', rpsXml);
  const credentials = { municipalUser: project.cnpj, municipalPassword: 'senha-ws' };

  it('reads the UsernameToken, and refuses a request without it (E179) or with the credentials in the body', async () => {
    expect(codes((await send(SAATRI_CONFIG, 'queryByRps', query, { credentials, certificate: false })).body)).toEqual([
      'E4',
    ]);
    const noHeader = { ...SAATRI_CONFIG, soap: { ...SAATRI_CONFIG.soap, security: undefined } };
    expect(codes((await send(noHeader, 'queryByRps', query, { certificate: false })).body)).toEqual(['E179']);
    const inBody = { ...noHeader, body: { ...noHeader.body, credentials: true } };
    expect(codes((await send(inBody, 'queryByRps', query, { credentials })).body)).toEqual(['E179']);
  });

  it('faults a SOAPAction without /Infse/ (ActionNotSupported)', async () => {
    const plain = { ...SAATRI_CONFIG, soap: { ...SAATRI_CONFIG.soap, soapAction: 'http://nfse.abrasf.org.br/{op}' } };
    const res = await send(plain, 'queryByRps', query, { credentials });
    expect(res.status).toBe(500);
    expect(res.body).toContain('ActionNotSupported');
  });
});

describe('Fisco: the `xml` parameter, unqualified messages and mutual TLS', () => {
  const send = harness(FISCO_PROFILE);
  const query = buildConsultarPorRps(FISCO_CONFIG, 'ConsultarNfseRpsEnvio', rpsXml);

  it('reads the unqualified message in <op><xml> and answers in <op>Result; a qualified one too', async () => {
    const res = await send(FISCO_CONFIG, 'queryByRps', query);
    expect(res.request).toContain('<ns:xml><![CDATA[<ConsultarNfseRpsEnvio><');
    expect(res.body).toMatch(/<consultarNfsePorRpsResponse [^>]*><consultarNfsePorRpsResult>/);
    expect(codes(res.body)).toEqual(['E4']);
    const qualified = { ...FISCO_CONFIG, hooks: undefined };
    expect(codes((await send(qualified, 'queryByRps', query)).body)).toEqual(['E4']);
  });

  it('refuses a request without the client certificate (E182)', async () => {
    expect(codes((await send(FISCO_CONFIG, 'queryByRps', query, { certificate: false })).body)).toEqual(['E182']);
  });
});
