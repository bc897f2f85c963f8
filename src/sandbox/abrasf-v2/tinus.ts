import { composeNationalNfse } from './national-nfse.ts';
import { ABRASF_DATA_NS, type AbrasfSandboxProfile } from './profiles.ts';

/**
 * Tinus 2.03 (OpenAC Tinus/2.03/nfse.xsd with the reform fields; ACBr TACBrNFSeXWebserviceTinus203): the Envio is the
 * body; the XSD declares each answer as `<Envio root>Response{…Resposta}` in the ABRASF namespace; RPS, lote and
 * cancellation signed; client certificate; the NFS-e in the national layout inside CompNfse/Nfse
 * (national-nfse.ts). Only the six messages the XSD has.
 */
export const TINUS_PROFILE: AbrasfSandboxProfile = {
  provider: 'Tinus',
  engine: 'abrasf-v2:tinus',
  slug: 'abrasf-tinus',
  family: 'abrasf-v2-tinus',
  version: '2.03',
  schema: 'abrasf203Tinus',
  dataNamespace: ABRASF_DATA_NS,
  soap: { namespace: ABRASF_DATA_NS, operationCase: 'pascal' },
  request: 'bare',
  response: 'rootResponse',
  operations: [
    'RecepcionarLoteRps',
    'RecepcionarLoteRpsSincrono',
    'GerarNfse',
    'CancelarNfse',
    'ConsultarLoteRps',
    'ConsultarNfsePorRps',
  ],
  signature: { rps: true, lote: true, cancel: true },
  clientCertificate: true,
  bodyCredentials: false,
  composeNfse: composeNationalNfse,
  limits: { queryPage: 50, rpsPerLote: 50 },
};
