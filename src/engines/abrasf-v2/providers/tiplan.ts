import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Tiplan in its two ABRASF 2.03 cities (Angra dos Reis and Rio das Ostras, `https://<host>/nfse/WSNacional2/nfse.asmx`,
 * homologation for Angra: the registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr creates TACBrNFSeProviderTiplan203;
 * Tiplan's other cities are the `dps-provider:tiplan` engine). Public facts (ACBr `Tiplan.Provider.pas`,
 * TACBrNFSeXWebserviceTiplan203 / TACBrNFSeProviderTiplan203; `Tiplan.GravarXml.pas`, TNFSeW_Tiplan203):
 * - SOAP 1.1, `<nfse:<Op>Request>{nfseCabecMsg, nfseDadosMsg}` (unqualified, escaped strings) with `xmlns:nfse` =
 *   `http://nfse.abrasf.org.br/` (with the trailing slash), SOAPAction `http://nfse.abrasf.org.br/<Op>` for the ten
 *   official operations, answers in `outputXML`;
 * - ABRASF 2.03 (`versao`/`versaoDados` 2.03), data in `http://www.abrasf.org.br/nfse.xsd`; the lote, GerarNfse's RPS
 *   and the cancellation signed; line break `\s\n` (QuebradeLinha, written as the characters); the client
 *   certificate on TLS (ACBr's ABRASF v2 default).
 * Readings: the official nfse_v203.xsd (Tiplan's writer adds reform groups, CodigoNbs and SituacaoTributariaPISCOFINS
 * only when the note carries them: not sent yet); the RPS signed in the lote as well (one signed RPS is stored and
 * wrapped by every emission mode; the XSD allows it); GerarNfse synchronous.
 */
export const TIPLAN_CONFIG: AbrasfProviderConfig = {
  ...baselineConfig({
    provider: 'Tiplan',
    version: '2.03',
    schema: 'abrasf203',
    sources: 'ACBr Tiplan.Provider.pas (TACBrNFSeProviderTiplan203), Tiplan.GravarXml.pas; ABRASF nfse_v203.xsd',
  }),
  soap: {
    version: '1.1',
    namespace: 'http://nfse.abrasf.org.br/',
    operationCase: 'pascal',
    soapAction: 'http://nfse.abrasf.org.br/{op}',
  },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\\s\\n' },
};
