import type { SchemaName } from '../../xml/xsd.ts';
import { ABRASF_DATA_NS, type AbrasfSandboxProfile } from './profiles.ts';

/**
 * The sandbox profile of a provider on the official ABRASF 2.0x baseline (briefs/providers-abrasf.md §0;
 * nfse-v2_0x.wsdl): the ten official operations as `<Op>Request{nfseCabecMsg, nfseDadosMsg}` in
 * `http://nfse.abrasf.org.br` (escaped, CDATA or raw strings read), `outputXML` answers, RPS, lote and cancellation
 * signatures verified, the client certificate required (E182), the official XSD of the provider's version.
 */
export function baselineProfile(options: { provider: string; version: string; schema: SchemaName }) {
  const key = options.provider.toLowerCase();
  const profile: AbrasfSandboxProfile = {
    ...options,
    engine: `abrasf-v2:${key}`,
    slug: `abrasf-${key}`,
    family: `abrasf-v2-${key}`,
    dataNamespace: ABRASF_DATA_NS,
    soap: { namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal' },
    request: 'strings',
    response: 'outputXML',
    operations: [
      'RecepcionarLoteRps',
      'RecepcionarLoteRpsSincrono',
      'GerarNfse',
      'CancelarNfse',
      'SubstituirNfse',
      'ConsultarLoteRps',
      'ConsultarNfsePorRps',
      'ConsultarNfseServicoPrestado',
      'ConsultarNfseServicoTomado',
      'ConsultarNfsePorFaixa',
    ],
    signature: { rps: true, lote: true, cancel: true },
    clientCertificate: true,
    bodyCredentials: false,
    limits: { queryPage: 50, rpsPerLote: 50 },
  };
  return profile;
}

/** GovDigital (ACBr.Net.NFSe Providers/GovDigital: the official contract; ABRASF 2.01, as ACBr's GovDigital201). */
export const GOVDIGITAL_PROFILE = baselineProfile({ provider: 'GovDigital', version: '2.01', schema: 'abrasf201' });
