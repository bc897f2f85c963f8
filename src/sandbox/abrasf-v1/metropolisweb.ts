import type { MunicipalSandbox } from '../municipal.ts';
import { type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';
import { cabecalhoCheck, wsdlOperationTable } from './wsdl.ts';

/**
 * MetropolisWeb (ACBr MetropolisWeb.Provider.pas; the provider's nfse.xsd as ACBr ships it): operations in
 * `http://endpoint.nfse.ws.webservicenfse.edza.com.br/` holding `<{Op}Request>{nfseCabecMsg, nfseDadosMsg}`
 * (unqualified, escaped), SOAPAction empty, the answer in `outputXML`; official ABRASF 1.00 messages validated with
 * the provider's schema, which also holds the answers (each answer is checked against it); the RPS, the lote and the
 * cancellation signed (`id` attributes), no client certificate; the cancellation confirmed in the official shape
 * (Confirmacao{Pedido, DataHoraCancelamento} signed by the sandbox).
 */
const ABRASF = 'http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd';

export const METROPOLISWEB_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:metropolisweb',
  slug: 'metropolisweb',
  name: 'MetropolisWeb',
  schema: 'abrasf100MetropolisWeb',
  dataNamespace: ABRASF,
  soap: {
    namespace: 'http://endpoint.nfse.ws.webservicenfse.edza.com.br/',
    qualifiedParameters: false,
    requestWrapper: true,
    header: { parameter: 'nfseCabecMsg', valid: cabecalhoCheck({ versao: '1.00', namespaces: [ABRASF] }) },
    result: 'outputXML',
  },
  operations: wsdlOperationTable(() => ({ soapAction: '', parameter: 'nfseDadosMsg' })),
  answerSchema: () => 'abrasf100MetropolisWeb',
  note: { idAttribute: 'id', competencia: 'dateTime', cancellation: 'official' },
  clientCertificate: false,
  signature: { rps: true, lote: true, queries: false, cancel: true },
};

export const metropoliswebSandbox: MunicipalSandbox = {
  engine: METROPOLISWEB_PROFILE.engine,
  slug: METROPOLISWEB_PROFILE.slug,
  create: (deps) => createAbrasfV1Service(METROPOLISWEB_PROFILE, deps),
};
