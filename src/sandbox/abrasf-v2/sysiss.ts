import type { MunicipalSandbox } from '../municipal.ts';
import type { SandboxService } from '../kit/server.ts';
import { baselineProfile } from './baseline.ts';
import { createGenexusService, type GenexusIdiom } from './genexus.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import type { AbrasfSandboxOptions } from './service.ts';

/**
 * SysISS (ACBr SysISS.Provider.pas, TACBrNFSeXWebserviceSysISS202): a GeneXus `aws` servlet, `<ws:ws.<OP>>` in `ws`
 * holding the escaped message as `<ws:<Op>in>` (no cabecalho), SOAPAction `wsaction/AWS.<OP>`, the answer as the
 * escaped string `<ws.<OP>Response><Op>out>`; the official nfse_v202.xsd; the lote signed (its ConfigAssinar; a
 * signature on the RPS or the Pedido, which the XSD allows, is verified when present), NumeroNfseFinal required in
 * the range query; plain http (no client certificate).
 */
export const SYSISS_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'SysISS', version: '2.02', schema: 'abrasf202' }),
  soap: { namespace: 'ws', operationCase: 'pascal' },
  signature: { rps: false, lote: true, cancel: false, cancelWhenPresent: true },
  rangeNeedsEnd: true,
  clientCertificate: false,
};

const operation = (op: string, official: string) => {
  const name = `${op.charAt(0)}${op.slice(1).toLowerCase()}`;
  return { request: `${name}in`, official, answer: `${name}out` };
};

export const SYSISS_IDIOM: GenexusIdiom = {
  serviceNamespace: 'ws',
  operationPrefix: 'ws.',
  actionPrefix: 'wsaction/AWS.',
  operations: {
    ENVIARLOTERPS: operation('ENVIARLOTERPS', 'RecepcionarLoteRps'),
    ENVIARLOTERPSSINCRONO: operation('ENVIARLOTERPSSINCRONO', 'RecepcionarLoteRpsSincrono'),
    GERARNFSE: operation('GERARNFSE', 'GerarNfse'),
    CONSULTARLOTERPS: operation('CONSULTARLOTERPS', 'ConsultarLoteRps'),
    CONSULTARNFSERPS: operation('CONSULTARNFSERPS', 'ConsultarNfsePorRps'),
    CONSULTARNFSEFAIXA: operation('CONSULTARNFSEFAIXA', 'ConsultarNfsePorFaixa'),
    CONSULTARNFSESERVICOPRESTADO: operation('CONSULTARNFSESERVICOPRESTADO', 'ConsultarNfseServicoPrestado'),
    CONSULTARNFSESERVICOTOMADO: operation('CONSULTARNFSESERVICOTOMADO', 'ConsultarNfseServicoTomado'),
    CANCELARNFSE: operation('CANCELARNFSE', 'CancelarNfse'),
    SUBSTITUIRNFSE: operation('SUBSTITUIRNFSE', 'SubstituirNfse'),
  },
  strings: { kind: 'single' },
};

export function createSysissService(profile: AbrasfSandboxProfile, options: AbrasfSandboxOptions): SandboxService {
  return createGenexusService(SYSISS_IDIOM, profile, options);
}

export const sysissSandbox: MunicipalSandbox = {
  engine: SYSISS_PROFILE.engine,
  slug: SYSISS_PROFILE.slug,
  create: (deps) => createSysissService(SYSISS_PROFILE, deps),
};
