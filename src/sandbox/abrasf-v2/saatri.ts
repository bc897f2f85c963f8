import { baselineProfile } from './baseline.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';

/**
 * Saatri 2.03 (ACBr Saatri.Provider.pas; the CONMAC production client's notes): the official message set as
 * `<Op>Request{nfseCabecMsg, nfseDadosMsg}` (only that wrapper) in `http://nfse.abrasf.org.br` behind a WCF service
 * (SOAPAction `http://nfse.abrasf.org.br/Infse/<Op>`, else ActionNotSupported), `outputXML` answers, the official
 * nfse_v203.xsd, RPS/lote/cancellation signed, the credentials in a WS-Security UsernameToken, no client
 * certificate.
 */
export const SAATRI_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Saatri', version: '2.03', schema: 'abrasf203' }),
  stringsWrapper: 'request',
  soapActionPrefix: 'http://nfse.abrasf.org.br/Infse/',
  clientCertificate: false,
  bodyCredentials: true,
  wsSecurity: true,
};
