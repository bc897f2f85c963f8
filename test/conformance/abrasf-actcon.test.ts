import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cityDataNamespaceOf } from '../../src/engines/abrasf-v2/city-namespace.ts';
import { ABRASF_V2_DEFINITIONS } from '../../src/engines/abrasf-v2/index.ts';
import { ACTCON_CONFIG } from '../../src/engines/abrasf-v2/providers/actcon.ts';
import { abrasfRequest } from '../../src/engines/abrasf-v2/transport.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import type { SendContext } from '../../src/engines/kit/family.ts';
import { ACTCON_PROFILE, createActconService } from '../../src/sandbox/abrasf-v2/actcon.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized } from './abrasf-env.ts';
import { startWrappedAbrasfSandbox } from './abrasf-wrapped-env.ts';
import { type ConformanceEnvironment, describeConformance } from './suite.ts';

/**
 * Actcon (ABRASF 2.02 on portalfacil.com.br: every message in the city's data namespace for the environment, the
 * city's operation namespace and SOAPAction, `<Op>Request` strings answered in `outputXML`, the asynchronous lote and
 * the cancellation signed, mutual TLS) in Além Paraíba/MG (3101508), production, the one city and environment whose
 * public schema declares the registry's namespace, against its sandbox: a Simples Nacional prestador through the
 * lote. The business rejection: a lote whose prestador is not the signer (E157).
 */
const ALEM_PARAIBA = '3101508';
const DATA_NS = 'http://nfse-mg-alemparaiba.portalfacil.com.br/nfseserv/schema/nfse_v202.xsd';
const OPERATION_NS = 'http://nfse-mg-alemparaiba.portalfacil.com.br/nfseserv/webservice/nfse.wsdl';
const ACTCON = ABRASF_V2_DEFINITIONS['abrasf-v2:actcon']!;

const project = fiscalProfile({
  ambiente: 1,
  codigoMunicipio: ALEM_PARAIBA,
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '1234567',
});
const stranger = { ...project, cnpj: '45723174000110' };
const start = () =>
  startWrappedAbrasfSandbox(ACTCON_PROFILE, project, (_profile, options) => createActconService(options));

describeConformance({
  project,
  invoice: () => normalized(project),
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E157' },
  start,
  family: ACTCON,
});

const contextOf = (municipality: string, ambiente: 1 | 2) =>
  ({
    municipality,
    ambiente,
    endpoints: { url: () => 'https://sandbox.test/nfseserv/webservice/servicos' },
    credentials: {},
  }) as unknown as SendContext;

describe('Actcon: the city data namespace and the cities the public schemas cover', () => {
  it('serves Além Paraíba only (Araçuaí: its schemas declare another namespace; the others: no schema)', () => {
    expect(ACTCON.serves?.(ALEM_PARAIBA)).toBe(true);
    for (const other of ['3103405', '3116001', '3121803', '3131158', '3136108', '3140308', '3170057'])
      expect(ACTCON.serves?.(other)).toBe(false);
    expect(cityDataNamespaceOf(ALEM_PARAIBA, 1)).toBe(DATA_NS);
    expect(cityDataNamespaceOf('3103405', 1)).toBe(
      'http://nfsearacuai.portalfacil.com.br/nfseserv/schema/nfse_v202.xsd',
    );
  });

  it('refuses the homologation project before building (no public schema for it)', () => {
    const problems = ACTCON.check({ ...project, ambiente: 2 }, normalized(project));
    expect(problems.map((p) => p.field)).toContain('project.ambiente');
    expect(ACTCON.check(project, normalized(project)).map((p) => p.field)).not.toContain('project.ambiente');
  });

  it('writes and signs the RPS in the city namespace, the cabecalho as versao 1.00 over versaoDados 2.02', async () => {
    const env = await start();
    try {
      const engine = createEngine(ACTCON, {
        http: undefined as never,
        endpoints: env.endpoints,
        signatureAlgorithm: 'rsa-sha1',
        validateBeforeSend: true,
      });
      const prepared = engine.prepare({
        project,
        invoice: normalized(project),
        serie: project.serieNfse,
        number: 77,
        issuedAt: new Date(Date.now() - 60_000),
        certificate: env.certificate,
      });
      expect(prepared.kind).toBe('ok');
      if (prepared.kind !== 'ok') return;
      expect(prepared.value.xml.startsWith(`<Rps xmlns="${DATA_NS}">`)).toBe(true);
      expect(prepared.value.xml).toMatch(/<DataEmissao>\d{4}-\d\d-\d\d<\/DataEmissao>/);
      // DivAliq100: the Aliquota as a fraction (2 % → 0.0200)
      expect(prepared.value.xml).toMatch(/<Aliquota>0\.\d{4}<\/Aliquota>/);
      expect(prepared.value.xml).toContain('<Tomador>');
    } finally {
      await env.close();
    }
    const sent = abrasfRequest(
      ACTCON_CONFIG,
      'queryRange',
      '<ConsultarNfseFaixaEnvio/>',
      contextOf(ALEM_PARAIBA, 1),
      'query',
    );
    expect(JSON.stringify(sent.headers)).toContain(
      'http://nfse-mg-alemparaiba.portalfacil.com.br/nfseserv/webservice/servicos#ConsultarNfsePorFaixa',
    );
    expect(sent.body).toMatch(/<(\w+):ConsultarNfsePorFaixaRequest xmlns:\1="http:\/\/nfse-mg-alemparaiba\./);
    expect(sent.body).toContain(`&lt;cabecalho versao="1.00" xmlns="${DATA_NS}"&gt;&lt;versaoDados&gt;2.02`);
  });
});

describe('Actcon sandbox: the city service idiom is enforced', () => {
  let env: ConformanceEnvironment;
  let agent: Agent;
  const cabecalho = `<cabecalho versao="1.00" xmlns="${DATA_NS}"><versaoDados>2.02</versaoDados></cabecalho>`;
  const consulta = (ns: string) =>
    `<ConsultarLoteRpsEnvio xmlns="${ns}"><Prestador><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj>` +
    '<InscricaoMunicipal>1234567</InscricaoMunicipal></Prestador><Protocolo>1</Protocolo></ConsultarLoteRpsEnvio>';
  const escaped = (xml: string) => xml.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const post = async (namespace: string, soapAction: string, message = consulta(DATA_NS), ambiente: 1 | 2 = 1) => {
    const body =
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>' +
      `<nfse:ConsultarLoteRpsRequest xmlns:nfse="${namespace}"><nfseCabecMsg>${escaped(cabecalho)}</nfseCabecMsg>` +
      `<nfseDadosMsg>${escaped(message)}</nfseDadosMsg></nfse:ConsultarLoteRpsRequest></s:Body></s:Envelope>`;
    const answer = await request(env.endpoints.url('poll', ambiente, ALEM_PARAIBA), {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${soapAction}"` },
      body,
    });
    return { status: answer.statusCode, text: await answer.body.text() };
  };
  const ACTION = 'http://nfse-mg-alemparaiba.portalfacil.com.br/nfseserv/webservice/servicos#ConsultarLoteRps';
  beforeAll(async () => {
    env = await start();
    agent = new Agent({ connect: { ca: env.caPem, cert: env.certificate.certPem, key: env.certificate.keyPem } });
  });
  afterAll(async () => {
    await agent.close();
    await env.close();
  });

  it('answers in outputXML, in the city data namespace (E86 for an unknown protocol)', async () => {
    const { status, text } = await post(OPERATION_NS, ACTION);
    expect(status).toBe(200);
    expect(text).toContain('outputXML');
    expect(text).toContain(`&lt;ConsultarLoteRpsResposta xmlns=&quot;${DATA_NS}&quot;&gt;`);
    expect(text).toContain('E86');
  });

  it('refuses another namespace, the other environment, a wrong SOAPAction and the ABRASF data namespace', async () => {
    expect((await post('http://nfse.abrasf.org.br', ACTION)).status).toBe(500);
    expect((await post(OPERATION_NS, ACTION, consulta(DATA_NS), 2)).text).toContain('ambiente');
    const wrongAction = await post(OPERATION_NS, 'ConsultarLoteRps');
    expect(wrongAction.status).toBe(500);
    expect(wrongAction.text).toContain('ActionNotSupported');
    const official = await post(OPERATION_NS, ACTION, consulta('http://www.abrasf.org.br/nfse.xsd'));
    expect(official.text).toContain('E160');
  });
});
