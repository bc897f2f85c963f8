import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABRASF_V1_DEFINITIONS } from '../../src/engines/abrasf-v1/index.ts';
import { ISSNET_V1_CONFIG } from '../../src/engines/abrasf-v1/providers/issnet.ts';
import { buildLote, buildQueryByRps, buildRps, rpsFacts } from '../../src/engines/abrasf-v1/messages.ts';
import type { A1Certificate } from '../../src/certificates/pkcs12.ts';
import { ISSNET_V1_PROFILE } from '../../src/sandbox/abrasf-v1/issnet.ts';
import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { conformanceSandboxOptions, describeAbrasfV1Conformance } from './abrasf-v1-env.ts';
import { normalizedInvoice, postSoap11, startProviderSandbox } from './support.ts';
import type { ConformanceEnvironment } from './suite.ts';

/**
 * ISSNet on its legacy ABRASF 1.00 service (asmx `<Op xmlns="…/webservice/nfd"><xml>`, the escaped message with its
 * XML declaration, per-message namespaces, `CpfCnpj{Cnpj}` prestador, the lote and the cancellation signed, mutual
 * TLS) against its sandbox, in Caarapó/MS (5002407), a Simples Nacional provider. The sandbox holds a lote for
 * `holdMs` = 0 and checks each of its answers against ISSNet's schemas. The business rejection: a lote whose
 * prestador is not the certificate's holder (E157).
 */
const { project } = describeAbrasfV1Conformance({
  engine: 'abrasf-v1:issnet',
  project: { codigoMunicipio: '5002407' },
  slug: ISSNET_V1_PROFILE.slug,
  service: (options) => createAbrasfV1Service(ISSNET_V1_PROFILE, options),
});

const VSD = 'http://www.issnetonline.com.br/webserviceabrasf/vsd';
const NFD = 'http://www.issnetonline.com.br/webservice/nfd';

describe('ISSNet 1.00: the layout of its types', () => {
  const rps = (codigoMunicipio: string) => {
    const city = { ...project, codigoMunicipio };
    const invoice = normalizedInvoice(city);
    return buildRps(ISSNET_V1_CONFIG, {
      project: city,
      invoice: { ...invoice, iss: { ...invoice.iss, tribISSQN: 1, aliquota: 5 } },
      serie: 'A',
      number: 7,
      issuedAt: new Date(),
      certificate: {} as A1Certificate,
    }).xml;
  };

  it('writes CpfCnpj{Cnpj}, MunicipioPrestacaoServico, the item without the leading zero, lower-case id', () => {
    const xml = rps('5002407');
    expect(xml).toContain(`<Prestador><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj>`);
    expect(xml).toMatch(/<MunicipioPrestacaoServico>\d{7}<\/MunicipioPrestacaoServico><\/Servico>/);
    expect(xml).toMatch(/<ItemListaServico>[1-9]\d{2,3}<\/ItemListaServico>/);
    expect(xml).toContain('<InfRps id="rps7">');
    expect(xml).not.toContain('<Uf>');
    expect(rpsFacts(xml)).toMatchObject({ numero: '7', serie: 'A', cnpj: project.cnpj });
    const lote = buildLote(ISSNET_V1_CONFIG, xml);
    expect(lote).toContain(`<m:LoteRps id="Lote_7"><t:NumeroLote>7</t:NumeroLote><t:CpfCnpj><t:Cnpj>`);
    expect(validateXml('abrasf100ISSNet', lote)).toEqual({ ok: true });
    const query = buildQueryByRps(ISSNET_V1_CONFIG, rpsFacts(xml));
    expect(query).toContain(`xmlns:m="${VSD}/servico_consultar_nfse_rps_envio.xsd"`);
    expect(validateXml('abrasf100ISSNet', query)).toEqual({ ok: true });
  });

  it("sends the message escaped with its XML declaration in <Op><xml> of the nfd namespace, ISSNet's SOAPAction", () => {
    const query = ABRASF_V1_DEFINITIONS['abrasf-v1:issnet']!.operations.query;
    if (!('request' in query)) throw new Error('query is a request/parse operation');
    const request = query.request(
      { id: 'rps7', xml: rps('5002407') },
      {
        endpoints: { url: () => 'https://issnet.test/servicos.asmx' },
        ambiente: 1,
        municipality: '5002407',
        certificate: {} as A1Certificate,
      },
    );
    expect(request.body).toContain(
      `<ns:ConsultarNFSePorRPS xmlns:ns="${NFD}"><ns:xml>&lt;?xml version="1.0" encoding="UTF-8"?&gt;&lt;m:ConsultarNfseRpsEnvio`,
    );
    expect(JSON.stringify(request.headers)).toContain(`${NFD}/ConsultarNFSePorRPS`);
  });

  it('writes Aliquota as a fraction, and as the percentage where the city has NaoDividir100 (Barcarena)', () => {
    expect(rps('5002407')).toContain('<Aliquota>0.0500</Aliquota>');
    expect(rps('1501303')).toContain('<Aliquota>5.0000</Aliquota>');
  });
});

describe('ISSNet 1.00 sandbox: the asmx idiom and the answers in their own namespaces', () => {
  let env: ConformanceEnvironment;
  let agent: Agent;
  const situacao = (prestador: string) =>
    `<?xml version="1.0" encoding="UTF-8"?><ConsultarSituacaoLoteRpsEnvio xmlns="${VSD}/servico_consultar_situacao_lote_rps_envio.xsd" ` +
    `xmlns:tc="${VSD}/tipos_complexos.xsd"><Prestador>${prestador}<tc:InscricaoMunicipal>123456</tc:InscricaoMunicipal>` +
    '</Prestador><Protocolo>1</Protocolo></ConsultarSituacaoLoteRpsEnvio>';
  const escaped = (xml: string) => xml.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const post = (message: string, soapAction = `${NFD}/ConsultaSituacaoLoteRPS`) =>
    postSoap11(
      env.endpoints.url('emit', 2, project.codigoMunicipio),
      agent,
      `<ConsultaSituacaoLoteRPS xmlns="${NFD}"><xml>${escaped(message)}</xml></ConsultaSituacaoLoteRPS>`,
      soapAction,
    );
  beforeAll(async () => {
    env = await startProviderSandbox({
      slug: ISSNET_V1_PROFILE.slug,
      project,
      service: (deps) => createAbrasfV1Service(ISSNET_V1_PROFILE, conformanceSandboxOptions(deps)),
    });
    agent = new Agent({ connect: { ca: env.caPem, cert: env.certificate.certPem, key: env.certificate.keyPem } });
  });
  afterAll(async () => {
    await agent.close();
    await env.close();
  });

  it('answers E86 in ConsultaSituacaoLoteRPSResult, ListaMensagemRetorno in the answer namespace', async () => {
    const { status, text } = await post(situacao(`<tc:CpfCnpj><tc:Cnpj>${project.cnpj}</tc:Cnpj></tc:CpfCnpj>`));
    expect(status).toBe(200);
    expect(text).toContain(
      `<o:ConsultaSituacaoLoteRPSResult>&lt;ConsultarSituacaoLoteRpsResposta xmlns=&quot;${VSD}/servico_consultar_situacao_lote_rps_resposta.xsd&quot;`,
    );
    expect(text).toContain('&lt;ListaMensagemRetorno&gt;&lt;MensagemRetorno&gt;&lt;t:Codigo&gt;E86&lt;/t:Codigo&gt;');
  });

  it('refuses the official Prestador/Cnpj (E160) and the official operation names (fault)', async () => {
    const official = await post(situacao(`<tc:Cnpj>${project.cnpj}</tc:Cnpj>`));
    expect(official.text).toContain('&lt;t:Codigo&gt;E160&lt;/t:Codigo&gt;');
    const wrongAction = await post(situacao(''), `${NFD}/ConsultarSituacaoLoteRps`);
    expect(wrongAction.status).toBe(500);
    expect(wrongAction.text).toContain('SOAPAction');
  });
});
