import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * ISSLegal (Rede Municipal; 9 cities at `https://api.redemunicipal.com.br/serversoap/NfseWSService`, homologation
 * `http://200.251.30.48:8080/serversoap/NfseWSService`: the registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr
 * creates TACBrNFSeProviderISSLegal203). Public facts (ACBr `ISSLegal.Provider.pas`, TACBrNFSeXWebserviceISSLegal203
 * / TACBrNFSeProviderISSLegal203; `ISSLegal.GravarXml.pas`, TNFSeW_ISSLegal203):
 * - SOAP 1.1, the official `<nfse:<Op>Request>{nfseCabecMsg, nfseDadosMsg}` (unqualified, escaped strings) in
 *   `http://nfse.abrasf.org.br`, SOAPAction `http://nfse.abrasf.org.br/<Op>` for the ten official operations, answers
 *   in `outputXML`;
 * - the taxpayer's authorization key (RequerChaveAutorizacao) in the HTTP `Authorization` header, as is (no scheme);
 * - ABRASF 2.03 (`versao`/`versaoDados` 2.03, `versao` on LoteRps), the official writer with its defaults; the unit
 *   switches no signature on (ConfigAssinar keeps ACBr's defaults: nothing signed) and keeps the client certificate
 *   on TLS (UseCertificateHTTP default).
 * Readings: the official nfse_v203.xsd; GerarNfse synchronous; nothing signed (the XSD's Signature is optional);
 * the registry's traits for ISSLegal are the family default (certificate only): the project must also hold the
 * authorization key (`authorizationKey`), or a send fails with a missing credential.
 */
export const ISSLEGAL_CONFIG: AbrasfProviderConfig = {
  ...baselineConfig({
    provider: 'ISSLegal',
    version: '2.03',
    schema: 'abrasf203',
    sources: 'ACBr ISSLegal.Provider.pas (TACBrNFSeProviderISSLegal203), ISSLegal.GravarXml.pas; ABRASF nfse_v203.xsd',
  }),
  auth: 'header-token',
  presentsCertificate: true,
  signature: { rps: false, lote: false, cancel: false },
};
