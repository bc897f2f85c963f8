import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AbrasfProviderConfig } from '../../src/engines/abrasf-v2/config.ts';
import { COPLAN_CONFIG } from '../../src/engines/abrasf-v2/providers/coplan.ts';
import { ERECEITA_CONFIG } from '../../src/engines/abrasf-v2/providers/ereceita.ts';
import { SISTEMAS4R_CONFIG } from '../../src/engines/abrasf-v2/providers/sistemas4r.ts';
import { SUDOESTE_CONFIG } from '../../src/engines/abrasf-v2/providers/sudoeste.ts';
import { SYSISS_CONFIG } from '../../src/engines/abrasf-v2/providers/sysiss.ts';
import { abrasfRequest, readAbrasfAnswer } from '../../src/engines/abrasf-v2/transport.ts';
import type { AbrasfOperation } from '../../src/engines/abrasf-v2/config.ts';
import type { OperationName } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { ERECEITA_PROFILE, SUDOESTE_PROFILE } from '../../src/sandbox/abrasf-v2/baseline-providers.ts';
import { COPLAN_PROFILE, createCoplanAbrasfService } from '../../src/sandbox/abrasf-v2/coplan.ts';
import { createSistemas4rService, SISTEMAS4R_PROFILE } from '../../src/sandbox/abrasf-v2/sistemas4r.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import type { ConformanceEnvironment } from '../conformance/suite.ts';
import { startWrappedAbrasfSandbox } from '../conformance/abrasf-wrapped-env.ts';

/**
 * The base's per-environment and per-operation data (issue #12): the request each environment gets (namespaces,
 * SOAPActions, element names, endpoint files), the provider error entries read as errors, and the sandboxes refusing
 * a production idiom sent to homologation.
 */
const project = fiscalProfile({
  ambiente: 2,
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '1234567',
});
const QUERY = `<ConsultarNfseRpsEnvio xmlns="http://www.abrasf.org.br/nfse.xsd"><IdentificacaoRps><Numero>991</Numero><Serie>1</Serie><Tipo>1</Tipo></IdentificacaoRps><Prestador><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>1234567</InscricaoMunicipal></Prestador></ConsultarNfseRpsEnvio>`;

let env: ConformanceEnvironment;
let http: GovernmentHttpClient;
beforeAll(async () => {
  env = await startAbrasfSandbox(ERECEITA_PROFILE, project);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

function request(
  config: AbrasfProviderConfig,
  ambiente: 1 | 2,
  url = 'https://example.gov.br/ws',
  operation: AbrasfOperation = 'queryByRps',
  kit: OperationName = 'query',
) {
  const context = { endpoints: { url: () => url }, ambiente, municipality: null, certificate: env.certificate };
  return abrasfRequest(config, operation, QUERY, context, kit);
}

/** Sends the request built for `built` to the sandbox's homologation endpoint; true when a SOAP fault answers. */
async function faults(sandbox: ConformanceEnvironment, built: 1 | 2, config: AbrasfProviderConfig): Promise<boolean> {
  const url = sandbox.endpoints.url('query', 2, null);
  const req = request(config, built, url);
  const client =
    sandbox === env ? http : new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, sandbox.caPem);
  try {
    const answer = await client.send(sandbox.certificate, 'POST', req.url, {
      headers: req.headers,
      body: req.body ?? '',
    });
    if (answer.kind !== 'response') throw new Error(answer.reason);
    return /<(?:\w+:)?Fault>/.test(answer.body);
  } finally {
    if (client !== http) await client.close();
  }
}

describe('per-environment data', () => {
  it('eReceita: the operation namespace and SOAPAction of each environment, the strings qualified', () => {
    const production = request(ERECEITA_CONFIG, 1);
    expect(production.headers.soapaction).toBe('"https://www.ereceita.net.br/ConsultarNfsePorRps"');
    expect(production.body).toContain('xmlns:ns="http://webservice.ereceita.net.br/soap/NfseWebService"');
    expect(production.body).toContain('<ns:ConsultarNfsePorRpsRequest');
    expect(production.body).toContain('<ns:nfseDadosMsg>&lt;ConsultarNfseRpsEnvio');
    const homologation = request(ERECEITA_CONFIG, 2);
    expect(homologation.headers.soapaction).toBe('"https://www3.ereceita.net.br/ConsultarNfsePorRps"');
    expect(homologation.body).toContain('xmlns:ns="http://www3.ereceita.net.br/soap/NfseWebService"');
    expect(request(ERECEITA_CONFIG, 2, undefined, 'queryRange').headers.soapaction).toBe(
      '"https://www3.ereceita.net.br/ConsultarNfseFaixa"',
    );
  });

  it('Coplan: the strings in Tributario_PRODUCAO_FULL or TributarioGx16New, CDATA, the GeneXus SOAPAction', () => {
    const production = request(COPLAN_CONFIG, 1);
    expect(production.headers.soapaction).toBe('"Tributarioaction/ANFSE_WEB_SERVICE.CONSULTARNFSEPORRPS"');
    expect(production.body).toContain(
      '<trib:nfse_web_service.CONSULTARNFSEPORRPS xmlns:trib="Tributario" xmlns:trib1="Tributario_PRODUCAO_FULL"><trib:Consultarnfseporrpsrequest><trib1:nfseCabecMsg><![CDATA[<cabecalho versao="2.01"',
    );
    expect(request(COPLAN_CONFIG, 2).body).toContain('xmlns:trib1="TributarioGx16New"');
  });

  it('Sistemas4R: one endpoint file per operation and environment, `h` elements and AH SOAPActions in homologation', () => {
    const prod = 'http://igarata.jlsoft.com.br/abrasf/aconsultarloterps.aspx';
    const cancel = request(SISTEMAS4R_CONFIG, 1, prod, 'cancel', 'cancel');
    expect(cancel.url).toBe('http://igarata.jlsoft.com.br/abrasf/acancelarnfse.aspx');
    expect(cancel.headers.soapaction).toBe('"Abrasf2action/ACANCELARNFSE.Execute"');
    expect(cancel.body).toContain('<CancelarNfse.Execute xmlns="Abrasf2"><Entrada>&lt;ConsultarNfseRpsEnvio');
    const hom = 'http://igarata.jlsoft.com.br/abrasf/ahconsultarloterps.aspx';
    const emit = request(SISTEMAS4R_CONFIG, 2, hom, 'emitSyncBatch', 'emit');
    expect(emit.url).toBe('http://igarata.jlsoft.com.br/abrasf/ahrecepcionarloterpssincrono.aspx');
    expect(emit.headers.soapaction).toBe('"Abrasf2action/AHRECEPCIONARLOTERPSSINCRONO.Execute"');
    const poll = request(SISTEMAS4R_CONFIG, 2, hom, 'queryBatch', 'poll');
    expect(poll.body).toContain('<hConsultarLoteRps.Execute xmlns="AbrasfNFSe">');
    expect(poll.headers.soapaction).toBe('"AbrasfNFSeactionAHCONSULTARLOTERPS.Execute"');
    // a URL that is not one of the provider's files (a sandbox mount) is kept
    expect(request(SISTEMAS4R_CONFIG, 2, 'https://localhost/x/producaorestrita', 'cancel').url).toBe(
      'https://localhost/x/producaorestrita',
    );
  });

  it('SysISS: `<ws:ws.<OP>><ws:<Op>in>` escaped, SOAPAction wsaction/AWS.<OP>', () => {
    const req = request(SYSISS_CONFIG, 2);
    expect(req.headers.soapaction).toBe('"wsaction/AWS.CONSULTARNFSERPS"');
    expect(req.body).toContain(
      '<ws:ws.CONSULTARNFSERPS xmlns:ws="ws"><ws:Consultarnfserpsin>&lt;ConsultarNfseRpsEnvio',
    );
  });
});

describe('provider error entries (Sudoeste)', () => {
  it('the engine sends `<def:<Op>>{Nfsecabecmsg, Nfsedadosmsg}` and reads Erro{ErroID, ErroMensagem, ErroSolucao}', () => {
    const req = request(SUDOESTE_CONFIG, 1);
    expect(req.headers.soapaction).toBe('""');
    expect(req.body).toContain('<ns:ConsultarNfsePorRps xmlns:ns="http://DefaultNamespace"><Nfsecabecmsg>');
    expect(req.body).toContain('<Nfsedadosmsg>&lt;ConsultarNfseRpsEnvio');
    const inner =
      '<ConsultarNfseRpsResposta xmlns="http://www.abrasf.org.br/nfse.xsd"><ListaMensagemRetorno><Erro><ErroID>E160</ErroID><ErroMensagem>Arquivo em desacordo</ErroMensagem><ErroSolucao>Veja o XSD</ErroSolucao></Erro></ListaMensagemRetorno></ConsultarNfseRpsResposta>';
    const body = `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><ConsultarNfsePorRpsResponse xmlns="http://DefaultNamespace"><ConsultarNfsePorRpsReturn>${inner.replaceAll('<', '&lt;').replaceAll('>', '&gt;')}</ConsultarNfsePorRpsReturn></ConsultarNfsePorRpsResponse></soap:Body></soap:Envelope>`;
    const roots = ['ConsultarNfseRpsResposta'];
    const read = readAbrasfAnswer(
      { kind: 'response', status: 200, headers: {}, body },
      roots,
      SUDOESTE_CONFIG.answerMessages,
    );
    expect('errors' in read && read.errors).toEqual([
      { Codigo: 'E160', Descricao: 'Arquivo em desacordo', Complemento: 'Veja o XSD' },
    ]);
    // the official reader ignores them
    const official = readAbrasfAnswer({ kind: 'response', status: 200, headers: {}, body }, roots);
    expect('errors' in official && official.errors).toEqual([]);
    expect(SUDOESTE_PROFILE.errorEntries).toBe('erro');
  });
});

describe('the sandboxes refuse the other environment’s idiom', () => {
  it('eReceita: the production SOAPAction at the homologation endpoint is a SOAP Client fault', async () => {
    expect(await faults(env, 2, ERECEITA_CONFIG)).toBe(false);
    expect(await faults(env, 1, ERECEITA_CONFIG)).toBe(true);
  });

  it('Coplan: the production parameter namespace at the homologation endpoint is a SOAP Client fault', async () => {
    const coplan = await startWrappedAbrasfSandbox(COPLAN_PROFILE, project, createCoplanAbrasfService);
    try {
      expect(await faults(coplan, 2, COPLAN_CONFIG)).toBe(false);
      expect(await faults(coplan, 1, COPLAN_CONFIG)).toBe(true);
    } finally {
      await coplan.close();
    }
  });

  it('Sistemas4R: a production element (no `h`) at the homologation endpoint is a SOAP Client fault', async () => {
    const s4r = await startWrappedAbrasfSandbox(SISTEMAS4R_PROFILE, project, createSistemas4rService);
    try {
      expect(await faults(s4r, 2, SISTEMAS4R_CONFIG)).toBe(false);
      expect(await faults(s4r, 1, SISTEMAS4R_CONFIG)).toBe(true);
    } finally {
      await s4r.close();
    }
  });
});
