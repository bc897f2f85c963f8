import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { SIGCORP_CONFIG } from '../../src/engines/abrasf-v2/providers/sigcorp.ts';
import { abrasfRequest, cityConfig } from '../../src/engines/abrasf-v2/transport.ts';
import { type SendContext, UnknownEndpointError } from '../../src/engines/kit/family.ts';
import { createSigcorpService, SIGCORP_PROFILE } from '../../src/sandbox/abrasf-v2/sigcorp.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { strangerRejectionTarget } from './abrasf-env.ts';
import { startWrappedAbrasfSandbox } from './abrasf-wrapped-env.ts';
import { postSoap11 } from './support.ts';
import { type ConformanceEnvironment, describeConformance } from './suite.ts';

/**
 * SigCorp (ABRASF 2.04 on meumunicipio.online: the city's namespace and SOAPAction from the registry, the idiom by
 * the city's SubVersao) against its sandbox in two cities, a Simples Nacional prestador, synchronous (GerarNfse) and
 * through the asynchronous lote: Ipatinga/MG (3131307, `/ws`: `<Op><xml>` CDATA, `<Op>Result`, SOAPAction = the
 * namespace + `#Op`) and Franco da Rocha/SP (3516408, `/ws/nfs`, SubVersao 1: `<Op>Request` strings, `outputXML`,
 * SOAPAction `nfs#Op`). The business rejection: an RPS whose prestador is not the signer (E171; lote: E157).
 */
const SIGCORP = defineAbrasfProvider(SIGCORP_CONFIG);
const ASYNC = defineAbrasfProvider({ ...SIGCORP_CONFIG, emission: 'emitAsyncBatch' });

for (const city of ['3131307', '3516408']) {
  const project = fiscalProfile({
    ambiente: 2,
    codigoMunicipio: city,
    regimeTributario: '3',
    aliquotaSimples: 6,
    inscricaoMunicipal: '1234567',
  });
  const target = strangerRejectionTarget(project, 'E171', () =>
    startWrappedAbrasfSandbox(SIGCORP_PROFILE, project, (_profile, options) => createSigcorpService(options)),
  );
  describeConformance({ ...target, family: SIGCORP });
  describeConformance({ ...target, rejection: { ...target.rejection, code: 'E157' }, family: ASYNC });
}

const contextOf = (municipality: string, ambiente: 1 | 2) =>
  ({
    municipality,
    ambiente,
    endpoints: { url: () => 'https://sandbox.test/ws' },
    credentials: {},
  }) as unknown as SendContext;

describe('SigCorp: per-city service data from the registry', () => {
  it("takes each city's namespace and SOAPAction per environment, and its idiom by SubVersao", () => {
    const ipatinga = cityConfig(SIGCORP_CONFIG, contextOf('3131307', 2));
    expect(ipatinga.soap.namespace).toBe('https://testeipatingaabrasf.meumunicipio.online/ws');
    expect(ipatinga.soap.soapAction).toBe('https://testeipatingaabrasf.meumunicipio.online/ws#{op}');
    expect(ipatinga.body.style).toBe('stringParam');
    const franco = cityConfig(SIGCORP_CONFIG, contextOf('3516408', 1));
    expect(franco.soap.namespace).toBe('https://abrasffrancodarocha.meumunicipio.online/ws/nfs');
    expect(franco.soap.soapAction).toBe('nfs#{op}');
    expect(franco.body).toMatchObject({ style: 'abrasfRequest', encoding: 'escaped', cabecalho: true });
    // Barão de Cocais: the ini's SoapAction `ws`
    expect(cityConfig(SIGCORP_CONFIG, contextOf('3105400', 1)).soap.soapAction).toBe('ws#{op}');
    // a city without SigCorp service data has no service
    expect(() => cityConfig(SIGCORP_CONFIG, contextOf('3550308', 1))).toThrow(UnknownEndpointError);
  });

  it('writes the range query as ConsultarNfseFaixa with the unqualified CDATA `xml` parameter', () => {
    const sent = abrasfRequest(
      SIGCORP_CONFIG,
      'queryRange',
      '<ConsultarNfseFaixaEnvio/>',
      contextOf('3131307', 1),
      'query',
    );
    expect(sent.headers.soapaction ?? sent.headers.SOAPAction).toContain(
      'https://abrasfipatinga.meumunicipio.online/ws#ConsultarNfseFaixa',
    );
    expect(sent.body).toMatch(
      /<(\w+):ConsultarNfseFaixa xmlns:\1="https:\/\/abrasfipatinga\.meumunicipio\.online\/ws">/,
    );
    expect(sent.body).toContain('<xml><![CDATA[<ConsultarNfseFaixaEnvio/>]]></xml>');
  });
});

describe('SigCorp sandbox: the city service idiom is enforced', () => {
  let env: ConformanceEnvironment;
  let agent: Agent;
  const project = fiscalProfile({ ambiente: 2, codigoMunicipio: '3131307', inscricaoMunicipal: '1234567' });
  const NS = 'https://testeipatingaabrasf.meumunicipio.online/ws';
  const message =
    '<ConsultarLoteRpsEnvio xmlns="http://www.abrasf.org.br/nfse.xsd"><Prestador><CpfCnpj><Cnpj>' +
    project.cnpj +
    '</Cnpj></CpfCnpj><InscricaoMunicipal>1234567</InscricaoMunicipal></Prestador><Protocolo>1</Protocolo></ConsultarLoteRpsEnvio>';
  const post = (namespace: string, soapAction: string, inner = `<xml><![CDATA[${message}]]></xml>`) =>
    postSoap11(
      env.endpoints.url('poll', 2, project.codigoMunicipio),
      agent,
      `<ws:ConsultarLoteRps xmlns:ws="${namespace}">${inner}</ws:ConsultarLoteRps>`,
      soapAction,
    );
  beforeAll(async () => {
    env = await startWrappedAbrasfSandbox(SIGCORP_PROFILE, project, (_p, options) => createSigcorpService(options));
    agent = new Agent({ connect: { ca: env.caPem, cert: env.certificate.certPem, key: env.certificate.keyPem } });
  });
  afterAll(async () => {
    await agent.close();
    await env.close();
  });

  it('answers in the city namespace as <Op>Result (E86 for an unknown protocol)', async () => {
    const { status, text } = await post(NS, `${NS}#ConsultarLoteRps`);
    expect(status).toBe(200);
    expect(text).toContain(`<ConsultarLoteRpsResponse xmlns="${NS}"><ConsultarLoteRpsResult>`);
    expect(text).toContain('E86');
  });

  it('refuses a foreign or production namespace, a wrong SOAPAction and the other idiom', async () => {
    expect((await post('http://nfse.abrasf.org.br', `${NS}#ConsultarLoteRps`)).status).toBe(500);
    const production = 'https://abrasfipatinga.meumunicipio.online/ws';
    expect((await post(production, `${production}#ConsultarLoteRps`)).text).toContain('ambiente');
    const wrongAction = await post(NS, 'ConsultarLoteRps');
    expect(wrongAction.status).toBe(500);
    expect(wrongAction.text).toContain('SOAPAction');
    const strings = `<nfseCabecMsg>x</nfseCabecMsg><nfseDadosMsg>${message.replaceAll('<', '&lt;')}</nfseDadosMsg>`;
    expect((await post(NS, `${NS}#ConsultarLoteRps`, strings)).status).toBe(500);
  });
});
