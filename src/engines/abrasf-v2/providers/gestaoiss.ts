import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * GestaoISS (9 cities; homologation `https://homologacao.gestaoiss.com.br/ws/nfse.asmx`, production per city: the
 * registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr creates TACBrNFSeProviderGestaoISS202). Public facts
 * (ACBr `GestaoISS.Provider.pas`, TACBrNFSeXWebserviceGestaoISS202 / TACBrNFSeProviderGestaoISS202) show the
 * official message set, the WebISS platform's (`nfse.asmx`, briefs/providers-abrasf.md §3):
 * - SOAP 1.1, `<nfse:<Op>Request>{nfseCabecMsg, nfseDadosMsg}` (unqualified, escaped strings) in
 *   `http://nfse.abrasf.org.br`, SOAPAction `http://nfse.abrasf.org.br/<Op>` for the ten official operations, answers
 *   in `outputXML`;
 * - ABRASF 2.02 (`versao`/`versaoDados` 2.02), the official cabecalho; RPS, lote, GerarNfse's RPS, cancellation and
 *   substitution signed; the client certificate on TLS (ACBr's ABRASF v2 default, nothing provider-specific).
 * Readings: the official nfse_v202.xsd (the WebISS platform's is byte-identical); GerarNfse synchronous.
 */
export const GESTAOISS_CONFIG: AbrasfProviderConfig = baselineConfig({
  provider: 'GestaoISS',
  version: '2.02',
  schema: 'abrasf202',
  sources: 'ACBr GestaoISS.Provider.pas (TACBrNFSeProviderGestaoISS202); ABRASF nfse_v202.xsd',
});
