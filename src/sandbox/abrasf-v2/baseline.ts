import type { SchemaName } from '../../xml/xsd.ts';
import { ABRASF_DATA_NS, ABRASF_V2_OPERATIONS, type AbrasfSandboxProfile } from './profiles.ts';

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
    operations: ABRASF_V2_OPERATIONS,
    signature: { rps: true, lote: true, cancel: true },
    clientCertificate: true,
    bodyCredentials: false,
    limits: { queryPage: 50, rpsPerLote: 50 },
  };
  return profile;
}

/**
 * GovDigital (ACBr.Net.NFSe Providers/GovDigital: the official contract): ABRASF 2.01 (ACBr's GovDigital201) and, in
 * its layout-2.00 cities (GovDigital200), the official nfse v2.00 XSD, chosen by the cabecalho's versaoDados.
 */
export const GOVDIGITAL_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'GovDigital', version: '2.01', schema: 'abrasf201' }),
  schemas: { '2.00': 'abrasf200', '2.01': 'abrasf201' },
};

/**
 * SH3 (nfiss: the official contract per city portal, `?WSDL`, `/soap/nfse_v202.xsd`): ABRASF 2.02, the official XSD,
 * GerarNfse/CancelarNfse signed, the client certificate required.
 */
export const SH3_PROFILE = baselineProfile({ provider: 'SH3', version: '2.02', schema: 'abrasf202' });

/**
 * Sintese (ACBr Sintese.Provider.pas): the official 2.04 message set with the operation element named after the
 * message root (`<GerarNfseEnvio>{nfseCabecMsg, nfseDadosMsg}`; only that wrapper is accepted), `outputXML` answers,
 * the official nfse_v204.xsd, RPS/lote/cancellation signed, the client certificate required.
 */
export const SINTESE_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Sintese', version: '2.04', schema: 'abrasf204' }),
  stringsWrapper: 'operation',
  operations: [
    'EnviarLoteRpsEnvio',
    'EnviarLoteRpsSincronoEnvio',
    'GerarNfseEnvio',
    'ConsultarLoteRpsEnvio',
    'ConsultarNfseRpsEnvio',
    'ConsultarNfseFaixaEnvio',
    'CancelarNfseEnvio',
    'SubstituirNfseEnvio',
  ],
  operationNames: {
    EnviarLoteRpsEnvio: 'RecepcionarLoteRps',
    EnviarLoteRpsSincronoEnvio: 'RecepcionarLoteRpsSincrono',
    GerarNfseEnvio: 'GerarNfse',
    ConsultarLoteRpsEnvio: 'ConsultarLoteRps',
    ConsultarNfseRpsEnvio: 'ConsultarNfsePorRps',
    ConsultarNfseFaixaEnvio: 'ConsultarNfsePorFaixa',
    CancelarNfseEnvio: 'CancelarNfse',
    SubstituirNfseEnvio: 'SubstituirNfse',
  },
};

/**
 * Prodata (ACBr Prodata.Provider.pas): the official 2.01 message set in the operation namespace
 * `http://services.nfse`, `outputXML` answers, the official nfse_v201.xsd, RPS/lote/cancellation signed, the client
 * certificate required.
 */
export const PRODATA_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Prodata', version: '2.01', schema: 'abrasf201' }),
  soap: { namespace: 'http://services.nfse', operationCase: 'pascal' },
};
