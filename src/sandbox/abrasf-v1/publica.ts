import type { MunicipalSandbox } from '../municipal.ts';
import { type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';
import { wsdlOperationTable } from './wsdl.ts';

/**
 * Publica (ACBr Publica.Provider.pas; the provider's nfse.xsd as ACBr ships it): operations in
 * `http://service.nfse.integracao.ws.publica/` holding one unqualified `<XML>` (the message, CDATA or escaped),
 * SOAPAction empty, the answer in `return`; messages in `http://www.publica.inf.br` validated with the provider's
 * schema, which also holds every answer (each answer is checked against it before it leaves).
 * - signed: the lote (LoteRps), each consultation whole (the schema requires its Signature) and the cancellation
 *   (InfPedidoCancelamento), all by the prestador (E1 / E157); no client certificate.
 * - the note query is ConsultarNfseFaixaEnvio → ConsultarNfseFaixaResposta; ConsultarNfsePorRps is answered with
 *   ConsultarNfseResposta{ListaNfse}; NFS-e numbers of 15 digits, Competencia a gYearMonth, the NFS-e unsigned
 *   (tcNfse holds InfNfse only); the cancellation confirmed in the official shape (Confirmacao{Pedido,
 *   DataHoraCancelamento} signed by the sandbox).
 */

export const PUBLICA_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:publica',
  slug: 'publica',
  name: 'Publica',
  schema: 'abrasf100Publica',
  dataNamespace: 'http://www.publica.inf.br',
  soap: {
    namespace: 'http://service.nfse.integracao.ws.publica/',
    qualifiedParameters: false,
    result: 'return',
  },
  operations: wsdlOperationTable(() => ({ soapAction: '', parameter: 'XML' }), { consultarNfse: 'ConsultarNfseFaixa' }),
  requestRoots: { consultarNfse: 'ConsultarNfseFaixaEnvio' },
  answerRoots: { consultarPorRps: 'ConsultarNfseResposta', consultarNfse: 'ConsultarNfseFaixaResposta' },
  answerSchema: () => 'abrasf100Publica',
  note: { idAttribute: 'id', competencia: 'gYearMonth', numberDigits: 15, unsigned: true, cancellation: 'official' },
  clientCertificate: false,
  signature: { rps: false, lote: true, queries: true, cancel: true },
};

export const publicaSandbox: MunicipalSandbox = {
  engine: PUBLICA_PROFILE.engine,
  slug: PUBLICA_PROFILE.slug,
  create: (deps) => createAbrasfV1Service(PUBLICA_PROFILE, deps),
};
