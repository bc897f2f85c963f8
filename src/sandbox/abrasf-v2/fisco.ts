import { baselineProfile } from './baseline.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';

/**
 * Fisco 2.03 (ACBr Fisco.Provider.pas): an ASMX service on SOAP 1.2 with camelCase operations in
 * `https://www.fisco.net.br/wsnfseabrasf/ServicosNFSEAbrasf.asmx`, the message in the one string parameter `xml`
 * (CDATA), without the ABRASF namespace, answered in `<op>Result`; the official nfse_v203.xsd; no XML signature
 * (a signature present on an RPS is still verified), the client certificate required (E182) and its holder the
 * message's prestador (E157); NumeroNfseFinal required in ConsultarNfsePorFaixa.
 */
export const FISCO_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Fisco', version: '2.03', schema: 'abrasf203' }),
  soap: { namespace: 'https://www.fisco.net.br/wsnfseabrasf/ServicosNFSEAbrasf.asmx', operationCase: 'camel' },
  request: 'inline',
  stringParameter: 'xml',
  unqualifiedMessages: true,
  response: 'result',
  signature: { rps: false, lote: false, cancel: false },
  rangeNeedsEnd: true,
  certificateHolder: true,
};
