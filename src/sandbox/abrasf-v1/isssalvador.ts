import type { MunicipalSandbox } from '../municipal.ts';
import { type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';

/**
 * Salvador's ABRASF 1.00 WCF services (ACBr ISSSalvador.Provider.pas; the prefeitura's nfse.xsd as ACBr ships it):
 * `http://tempuri.org/` operations EnviarLoteRPS / ConsultarSituacaoLoteRPS / ConsultarLoteRPS (parameter
 * `loteXML`) and ConsultarNfseRPS / ConsultarNfse (parameter `consultaxml`), SOAPAction
 * `http://tempuri.org/I<Service>/<Operation>`; the RPS and the lote signed, consultations not; no cancellation by web
 * service. Live, each operation has its own `.svc`; the sandbox serves them all at its mount.
 */
const op = (
  service: string,
  operation: AbrasfV1SandboxProfile['operations'][string]['operation'],
  parameter: string,
  element: string,
) => ({
  [element]: { operation, parameter, soapAction: `http://tempuri.org/I${service}/${element}` },
});

export const ISSSALVADOR_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:isssalvador',
  slug: 'isssalvador',
  name: 'ISS Salvador',
  schema: 'abrasf100Salvador',
  dataNamespace: 'http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd',
  soap: { namespace: 'http://tempuri.org/', qualifiedParameters: true, result: 'Result' },
  operations: {
    ...op('EnvioLoteRPS', 'recepcionar', 'loteXML', 'EnviarLoteRPS'),
    ...op('ConsultaSituacaoLoteRPS', 'consultarSituacao', 'loteXML', 'ConsultarSituacaoLoteRPS'),
    ...op('ConsultaLoteRPS', 'consultarLote', 'loteXML', 'ConsultarLoteRPS'),
    ...op('ConsultaNfseRPS', 'consultarPorRps', 'consultaxml', 'ConsultarNfseRPS'),
    ...op('ConsultaNfse', 'consultarNfse', 'consultaxml', 'ConsultarNfse'),
  },
  answerSchema: () => 'abrasf100Salvador',
  note: { idAttribute: 'id', competencia: 'dateTime' },
  clientCertificate: true,
  signature: { rps: true, lote: true, queries: false, cancel: false },
};

export const isssalvadorSandbox: MunicipalSandbox = {
  engine: ISSSALVADOR_PROFILE.engine,
  slug: ISSSALVADOR_PROFILE.slug,
  create: (deps) => createAbrasfV1Service(ISSSALVADOR_PROFILE, deps),
};
