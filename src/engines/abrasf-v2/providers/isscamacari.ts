import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * ISSCamacari (Camaçari/BA at `https://nfse.camacari.ba.gov.br/nfse/ws`, homologation `http://201.18.232.29/nfse/ws`:
 * the registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr creates TACBrNFSeProviderISSCamacari201). Public facts
 * (ACBr `ISSCamacari.Provider.pas`, TACBrNFSeXWebserviceISSCamacari201 / TACBrNFSeProviderISSCamacari201) show the
 * official message set:
 * - SOAP 1.1, `<nfse:<Op>Request>{nfseCabecMsg, nfseDadosMsg}` (unqualified, escaped strings) in
 *   `http://nfse.abrasf.org.br`, SOAPAction `http://nfse.abrasf.org.br/<Op>` for the ten official operations, answers
 *   in `outputXML` (CDATA removed by the client);
 * - ABRASF 2.01 (`versao`/`versaoDados` 2.01, `versao` on LoteRps), the official cabecalho; RPS, lote, GerarNfse's
 *   RPS, cancellation and the substitution's RPS signed; the client certificate on TLS (ACBr's ABRASF v2 default).
 * Readings: the official nfse_v201.xsd; GerarNfse synchronous.
 */
export const ISSCAMACARI_CONFIG: AbrasfProviderConfig = baselineConfig({
  provider: 'ISSCamacari',
  version: '2.01',
  schema: 'abrasf201',
  sources: 'ACBr ISSCamacari.Provider.pas (TACBrNFSeProviderISSCamacari201); ABRASF nfse_v201.xsd',
});
