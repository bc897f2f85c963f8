import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coplanFamily } from '../../src/engines/dps-provider/coplan.ts';
import { coplanSandbox } from '../../src/sandbox/soap-string/coplan.ts';
import { signXml } from '../../src/xml/sign.ts';
import { normalized, startMunicipalSandbox } from '../conformance/soap-string-support.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The Coplan sandbox's own rules, over raw SOAP: the GeneXus two-namespace envelope (the data namespace follows the
 * environment), the cabeçalho, SOAPAction, and answers escaped in `<Outputxml>`.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3300407',
  ...IBS_CBS_FRAMING,
});

let env: Awaited<ReturnType<typeof startMunicipalSandbox>>;
let agent: Agent;
let number = 800_000 + (Date.now() % 100_000);

beforeAll(async () => {
  env = await startMunicipalSandbox(coplanSandbox, project);
  agent = new Agent({ connect: { ca: env.caPem, key: env.certificate.keyPem, cert: env.certificate.certPem } });
});
afterAll(async () => {
  await agent?.close();
  await env?.close();
});

function signedDps(): string {
  const { xml } = coplanFamily.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: ++number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  return signXml(xml, {
    elementName: 'infDPS',
    key: { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem },
  });
}

const CABECALHO =
  '<cabecalho xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><versaoDados>1.01</versaoDados></cabecalho>';

async function gerar(options: { dataNs?: string; cabecalho?: string; action?: string } = {}) {
  const dados = `<GerarNfseEnvio xmlns="http://www.sped.fazenda.gov.br/nfse">${signedDps()}</GerarNfseEnvio>`;
  const body =
    '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:trib="Tributario" ' +
    `xmlns:trib1="${options.dataNs ?? 'Tributario_HOMOLOGACAO_FULL'}"><soapenv:Body><trib:nfse_web.GERARNFSE><trib:Gerarnfserequest>` +
    `<trib1:nfseCabecMsg><![CDATA[${options.cabecalho ?? CABECALHO}]]></trib1:nfseCabecMsg>` +
    `<trib1:nfseDadosMsg><![CDATA[${dados}]]></trib1:nfseDadosMsg>` +
    '</trib:Gerarnfserequest></trib:nfse_web.GERARNFSE></soapenv:Body></soapenv:Envelope>';
  const res = await request(`${env.url}/municipal/coplan/producaorestrita`, {
    method: 'POST',
    dispatcher: agent,
    headers: {
      'content-type': 'text/xml; charset=utf-8',
      soapaction: `"${options.action ?? 'Tributarioaction/ANFSE_WEB.GERARNFSE'}"`,
    },
    body,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

describe('Coplan sandbox', () => {
  it('issues from GerarNfseEnvio{DPS}, answering GerarNfseResposta escaped in Outputxml', async () => {
    const res = await gerar();
    expect(res.status).toBe(200);
    expect(res.text).toContain(
      '<nfse_web.GERARNFSEResponse xmlns="Tributario"><Gerarnfseresponse><Outputxml>&lt;GerarNfseResposta',
    );
    expect(res.text).toContain('&lt;Protocolo&gt;');
    expect(res.text).toMatch(/infNFSe Id=&quot;NFS\d{50}&quot;/);
  });

  it('refuses the production data namespace in homologation, another cabeçalho and a wrong SOAPAction', async () => {
    expect((await gerar({ dataNs: 'Tributario_PRODUCAO_FULL' })).text).toContain('Tributario_HOMOLOGACAO_FULL');
    expect((await gerar({ cabecalho: '<cabecalho/>' })).text).toContain('nfseCabecMsg');
    expect((await gerar({ action: 'Tributarioaction/ANFSE_WEB.CANCELARNFSE' })).text).toContain(
      '<faultcode>soap:Client</faultcode>',
    );
  });
});
