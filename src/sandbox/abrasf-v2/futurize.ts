import { ABRASF_DATA_NS, ABRASF_V2_OPERATIONS, type AbrasfSandboxProfile } from './profiles.ts';

/**
 * Futurize 2.02 (briefs/providers-abrasf.md §7; ACBr Futurize.Provider.pas and Futurize.GravarXml.pas: no WSDL or
 * XSD was published): the official `<Op>Request{nfseCabecMsg, nfseDadosMsg}` in `http://nfse.abrasf.org.br`
 * (escaped strings; CDATA read too), `outputXML` answers, the ten official operations.
 * - no client certificate on TLS (ACBr `UseCertificateHTTP := False`): none is asked for;
 * - signatures: the RPS and the cancellation; the lote is not signed (a lote signature is not checked);
 * - RecepcionarLoteRpsSincrono takes `EnviarLoteRpsEnvio` and answers `EnviarLoteRpsResposta`; the official
 *   `EnviarLoteRpsSincronoEnvio` is answered with a SOAP Client fault ("método não disponível", as ACBr reports);
 * - the RPS's Servico carries CTribNac and cNBS instead of ItemListaServico: schemas/abrasf/nfse_v202-futurize.xsd
 *   (derived from ACBr's generator; strict: an ItemListaServico is refused with E160).
 */
export const FUTURIZE_PROFILE: AbrasfSandboxProfile = {
  provider: 'Futurize',
  engine: 'abrasf-v2:futurize',
  slug: 'abrasf-futurize',
  family: 'abrasf-v2-futurize',
  version: '2.02',
  schema: 'abrasf202Futurize',
  dataNamespace: ABRASF_DATA_NS,
  soap: { namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal' },
  request: 'strings',
  response: 'outputXML',
  operations: ABRASF_V2_OPERATIONS,
  signature: { rps: true, lote: false, cancel: true },
  clientCertificate: false,
  bodyCredentials: false,
  limits: { queryPage: 50, rpsPerLote: 50 },
  syncBatch: { requestRoot: 'EnviarLoteRpsEnvio', responseRoot: 'EnviarLoteRpsResposta' },
};
