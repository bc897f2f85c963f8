import type { MunicipalSandbox } from '../municipal.ts';
import type { SandboxService } from '../kit/server.ts';
import { baselineProfile } from './baseline.ts';
import { createGenexusService, type GenexusIdiom } from './genexus.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import type { AbrasfSandboxOptions } from './service.ts';

/**
 * Coplan's ABRASF 2.01 GeneXus service (ACBr Coplan.Provider.pas, TACBrNFSeXWebserviceCoplan201; a PHP client,
 * Alves\NfseBrasil ToolsProviderBuilderCoplanTrait): `<trib:nfse_web_service.<OP>><trib:<Op>request>` in `Tributario`
 * with the CDATA strings `nfseCabecMsg`/`nfseDadosMsg` in `Tributario_PRODUCAO_FULL` (production) or
 * `TributarioGx16New` (homologation), SOAPAction `Tributarioaction/ANFSE_WEB_SERVICE.<OP>`; answers in
 * `<nfse_web_service.<OP>Response><Op>response><outputXML>` (escaped); the official nfse_v201.xsd; RPS, lote and
 * cancellation signed; the client certificate required (E182).
 */
export const COPLAN_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Coplan', version: '2.01', schema: 'abrasf201' }),
  soap: { namespace: 'Tributario', operationCase: 'pascal' },
};

const operation = (request: string, official: string) => ({
  request,
  official,
  answer: request.replace(/request$/, 'response'),
});

export const COPLAN_IDIOM: GenexusIdiom = {
  serviceNamespace: 'Tributario',
  operationPrefix: 'nfse_web_service.',
  actionPrefix: 'Tributarioaction/ANFSE_WEB_SERVICE.',
  operations: {
    RECEPCIONARLOTERPS: operation('Recepcionarloterpsrequest', 'RecepcionarLoteRps'),
    RECEPCIONARLOTERPSSINCRONO: operation('Recepcionarloterpssincronorequest', 'RecepcionarLoteRpsSincrono'),
    GERARNFSE: operation('Gerarnfserequest', 'GerarNfse'),
    CONSULTARLOTERPS: operation('Consultarloterpsrequest', 'ConsultarLoteRps'),
    CONSULTARNFSEPORRPS: operation('Consultarnfseporrpsrequest', 'ConsultarNfsePorRps'),
    CONSULTARNFSEFAIXA: operation('Consultarnfseporfaixarequest', 'ConsultarNfsePorFaixa'),
    CONSULTARNFSESERVICOPRESTADO: operation('Consultarnfseservicoprestadorequest', 'ConsultarNfseServicoPrestado'),
    CONSULTARNFSESERVICOTOMADO: operation('Consultarnfseservicotomadorequest', 'ConsultarNfseServicoTomado'),
    CANCELARNFSE: operation('Cancelarnfserequest', 'CancelarNfse'),
    SUBSTITUIRNFSE: operation('Substituirnfserequest', 'SubstituirNfse'),
  },
  strings: {
    kind: 'cabecalhoDados',
    namespaces: { producao: 'Tributario_PRODUCAO_FULL', producaorestrita: 'TributarioGx16New' },
  },
};

export function createCoplanAbrasfService(
  profile: AbrasfSandboxProfile,
  options: AbrasfSandboxOptions,
): SandboxService {
  return createGenexusService(COPLAN_IDIOM, profile, options);
}

export const coplanAbrasfSandbox: MunicipalSandbox = {
  engine: COPLAN_PROFILE.engine,
  slug: COPLAN_PROFILE.slug,
  create: (deps) => createCoplanAbrasfService(COPLAN_PROFILE, deps),
};
