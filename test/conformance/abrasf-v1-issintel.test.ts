import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issIntelRps, issIntelService } from '../../src/engines/abrasf-v1/providers/issintel.ts';
import { UnknownEndpointError } from '../../src/engines/kit/family.ts';
import { createIssIntelService, ISSINTEL_PROFILE } from '../../src/sandbox/abrasf-v1/issintel.ts';
import { normalizedInvoice, postSoap11, startProviderSandbox } from './support.ts';
import type { ConformanceEnvironment } from './suite.ts';
import { describeAbrasfV1Conformance } from './abrasf-v1-env.ts';

/**
 * ISSIntel (BH's ABRASF 1.00 schema with CodigoServicoNacional and the PIS/COFINS group; the message inline in the
 * city's namespace; lote and cancellation signed; mutual TLS) against its sandbox, in São Francisco/MG (3161106),
 * whose training namespace the registry holds, for a Simples Nacional provider. The sandbox holds a lote for
 * `holdMs` = 0 and checks each of its answers against the provider's schema. The business rejection: a lote whose
 * prestador is not the certificate's holder (E157, refused at reception).
 */
const { project } = describeAbrasfV1Conformance({
  engine: 'abrasf-v1:issintel',
  project: { codigoMunicipio: '3161106' },
  slug: ISSINTEL_PROFILE.slug,
  service: createIssIntelService,
});

describe('ISSIntel: per-city service and layout details', () => {
  it("takes each city's namespace and SOAPAction from the registry, per environment", () => {
    expect(issIntelService('3161106', 2)).toEqual({
      namespace: 'http://saofrancisco-mg.treino-issintegra.com.br/webservices/abrasf/api',
      action: 'http://saofrancisco-mg.treino-issintegra.com.br/webservices/abrasf/api/',
    });
    expect(issIntelService('3304904', 1).namespace).toBe(
      'https://saogoncalo-rj.issintegra.com.br/webservices/abrasf/api',
    );
    // São Gonçalo has no training service in ACBr's list: homologation there is an unknown endpoint
    expect(() => issIntelService('3304904', 2)).toThrow(UnknownEndpointError);
  });

  it('writes the item without the leading zero, CodigoServicoNacional and TpRetPisCofins', () => {
    const invoice = normalizedInvoice(project);
    const xml = issIntelRps(
      '<Servico><Valores><ValorServicos>1.00</ValorServicos><IssRetido>2</IssRetido><BaseCalculo>1.00</BaseCalculo></Valores>' +
        '<ItemListaServico>01.07</ItemListaServico><Discriminacao>x</Discriminacao></Servico>',
      invoice,
    );
    expect(xml).toContain('<ItemListaServico>1.07</ItemListaServico><CodigoServicoNacional>');
    expect(xml).toContain('<BaseCalculo>1.00</BaseCalculo><Aliquota>0.0000</Aliquota>');
    expect(xml).toMatch(/<TpRetPisCofins>\d<\/TpRetPisCofins>.*<\/Valores>/);
  });
});

describe('ISSIntel sandbox: the city service idiom is enforced', () => {
  let env: ConformanceEnvironment;
  let agent: Agent;
  const NS = 'http://saofrancisco-mg.treino-issintegra.com.br/webservices/abrasf/api';
  const message =
    '<ConsultarSituacaoLoteRpsEnvio xmlns="http://www.abrasf.org.br/nfse.xsd"><Prestador><Cnpj>' +
    project.cnpj +
    '</Cnpj><InscricaoMunicipal>123456</InscricaoMunicipal></Prestador><Protocolo>1</Protocolo></ConsultarSituacaoLoteRpsEnvio>';
  const post = (namespace: string, soapAction: string) =>
    postSoap11(
      env.endpoints.url('emit', 2, project.codigoMunicipio),
      agent,
      `<c:ConsultarSituacaoLoteRps xmlns:c="${namespace}">${message}</c:ConsultarSituacaoLoteRps>`,
      soapAction,
    );
  beforeAll(async () => {
    env = await startProviderSandbox({
      slug: ISSINTEL_PROFILE.slug,
      project,
      service: ({ signer, dataDir }) =>
        createIssIntelService({ signer, now: () => new Date(), logger: { info: () => {}, warn: () => {} }, dataDir }),
    });
    agent = new Agent({
      connect: { ca: env.caPem, cert: env.certificate.certPem, key: env.certificate.keyPem },
    });
  });
  afterAll(async () => {
    await agent.close();
    await env.close();
  });

  it('answers the message inline in the city namespace (E86 for an unknown protocol)', async () => {
    const { status, text } = await post(NS, `${NS}/ConsultarSituacaoLoteRps`);
    expect(status).toBe(200);
    expect(text).toContain(`<ns:ConsultarSituacaoLoteRpsResponse xmlns:ns="${NS}"><ConsultarSituacaoLoteRpsResposta`);
    expect(text).toContain('<t:Codigo>E86</t:Codigo>');
  });

  it('refuses a foreign namespace and a SOAPAction that is not the city one', async () => {
    expect((await post('http://www.abrasf.org.br/nfse.xsd', '')).status).toBe(500);
    const wrongAction = await post(NS, 'ConsultarSituacaoLoteRps');
    expect(wrongAction.status).toBe(500);
    expect(wrongAction.text).toContain('SOAPAction');
  });
});
