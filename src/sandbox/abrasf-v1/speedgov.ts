import type { MunicipalSandbox } from '../municipal.ts';
import { type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';
import { cabecalhoCheck, wsdlOperationTable } from './wsdl.ts';

/**
 * SpeedGov 1.00 (ACBr SpeedGov.Provider.pas; SpeedGov's v1 schemas as ACBr ships them): operations in
 * `http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd` with unqualified `header` (cabeçalho v1, versao 1) and
 * `parameters`, SOAPAction empty, the answer in `return`; messages in per-message namespaces validated with the v1
 * schemas; nothing signed and no client certificate: a lote of a prestador the municipality does not know is E43.
 * Answers: each root in `http://ws.speedgov.com.br/<message>_resposta_v1.xsd` (the one resposta schema published,
 * consultar_nfse_rps_resposta_v1.xsd, names them so), ListaMensagemRetorno and the NFS-e in the types' namespace.
 */
const TIPOS = 'http://ws.speedgov.com.br/tipos_v1.xsd';
const CABECALHO = 'http://ws.speedgov.com.br/cabecalho_v1.xsd';
const snake = (root: string) => root.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();

export const SPEEDGOV_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:speedgov',
  slug: 'speedgov',
  name: 'SpeedGov',
  schema: 'abrasf100SpeedGov',
  dataNamespace: TIPOS,
  answerNamespace: (root) => `http://ws.speedgov.com.br/${snake(root)}_v1.xsd`,
  soap: {
    namespace: 'http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd',
    qualifiedParameters: false,
    header: { parameter: 'header', valid: cabecalhoCheck({ versao: '1', namespaces: [CABECALHO] }) },
    result: 'return',
  },
  operations: wsdlOperationTable(() => ({ soapAction: '', parameter: 'parameters' })),
  answerSchema: (root) => (root === 'ConsultarNfseRpsResposta' ? 'abrasf100SpeedGovRpsResposta' : null),
  note: { idAttribute: 'Id', competencia: 'date', cancellation: 'inf' },
  clientCertificate: false,
  signature: { rps: false, lote: false, queries: false, cancel: false },
};

export const speedgovSandbox: MunicipalSandbox = {
  engine: SPEEDGOV_PROFILE.engine,
  slug: SPEEDGOV_PROFILE.slug,
  create: (deps) => createAbrasfV1Service(SPEEDGOV_PROFILE, deps),
};
