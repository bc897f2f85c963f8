import type { MunicipalSandbox } from '../municipal.ts';
import { type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';
import { cabecalhoCheck, wsdlOperationTable } from './wsdl.ts';

/**
 * WebISS's legacy ABRASF 1.00 service (`NfseServices.svc`; its WSDL, reference/providers/webiss/
 * NfseServices.svc-v1-legacy.wsdl: WCF BasicHttpBinding in `http://tempuri.org/`, SOAPAction
 * `http://tempuri.org/INfseServices/<Op>`, client certificate required; ACBr WebISS.Provider.pas for the parameters
 * `cabec` and `msg`): each operation element holds the qualified strings `cabec` (the ABRASF 1.00 cabeçalho) and
 * `msg` (the message), the answer an escaped ABRASF message in `<Op>Result`. Messages in `http://www.abrasf.org.br/nfse`
 * validated with WebISS's 1.00 schemas (the published ones, and the ABRASF 1.00 model for the four that are not),
 * which also hold the answers (each answer is checked before it leaves); the lote signed on LoteRps; the cancellation
 * confirmed as WebISS's tcConfirmacaoCancelamento{Pedido, DataHora}, signed by the sandbox.
 */
const DATA_NS = 'http://www.abrasf.org.br/nfse';

export const WEBISS_V1_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:webiss',
  slug: 'webiss-v1',
  name: 'WebISS (ABRASF 1.00)',
  schema: 'abrasf100WebISS',
  dataNamespace: DATA_NS,
  soap: {
    namespace: 'http://tempuri.org/',
    qualifiedParameters: true,
    // the cabeçalho: versao and versaoDados 1.00, without namespace (ACBr) or in the messages' namespace
    header: { parameter: 'cabec', valid: cabecalhoCheck({ versao: '1.00', namespaces: [null, DATA_NS] }) },
    result: 'Result',
  },
  operations: wsdlOperationTable((element) => ({
    soapAction: `http://tempuri.org/INfseServices/${element}`,
    parameter: 'msg',
  })),
  answerSchema: () => 'abrasf100WebISS',
  note: { idAttribute: 'Id', competencia: 'dateTime', cancellation: 'official', confirmationDate: 'DataHora' },
  clientCertificate: true,
  signature: { rps: false, lote: true, queries: false, cancel: false },
};

export const webissV1Sandbox: MunicipalSandbox = {
  engine: WEBISS_V1_PROFILE.engine,
  slug: WEBISS_V1_PROFILE.slug,
  create: (deps) => createAbrasfV1Service(WEBISS_V1_PROFILE, deps),
};
