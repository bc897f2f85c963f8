import { baselineProfile } from './baseline.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';

/**
 * Tributus 2.04 (ACBr Tributus.Provider.pas): the official message set as `<Op>Request{nfseCabecMsg, nfseDadosMsg}`
 * in `https://tributosmunicipais.com.br/nfse/api/` (only that wrapper; the strings in CDATA or escaped), `outputXML`
 * answers, the official nfse_v204.xsd with the signed elements' Id attribute written `id`, RPS/lote/cancellation
 * signed, the taxpayer's authorization key in the URL (`?tokenAuth=`) instead of a TLS client certificate.
 */
export const TRIBUTUS_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Tributus', version: '2.04', schema: 'abrasf204' }),
  soap: { namespace: 'https://tributosmunicipais.com.br/nfse/api/', operationCase: 'pascal' },
  stringsWrapper: 'request',
  idAttribute: 'id',
  urlToken: 'tokenAuth',
  clientCertificate: false,
};
