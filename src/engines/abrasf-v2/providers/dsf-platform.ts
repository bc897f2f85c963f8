import type { AbrasfProviderConfig } from '../config.ts';
import { DSF_CONFIG } from './dsf.ts';

/**
 * The DSF ABRASF 2.03 platform (`notafiscal-abrasfv203-ws/NotaFiscalSoap`) under the names ACBr gives it in two
 * cities, each its own ACBr provider with a 2.03 unit on the DSF contract (dsf.ts, briefs/providers-abrasf.md §9):
 * - ISSCampinas: Campinas/SP at `https://novanfse.campinas.sp.gov.br/notafiscal-abrasfv203-ws/NotaFiscalSoap`,
 *   homologation `https://homol-rps.ima.sp.gov.br/…` (registry). ACBr `ISSCampinas.Provider.pas`
 *   (TACBrNFSeXWebserviceISSCampinas203 / TACBrNFSeProviderISSCampinas203): `<nfse:<Op> xmlns:nfse=
 *   "http://nfse.abrasf.org.br">` with the message inline (no cabecalho), SOAPAction "", ConsultarNfseFaixa, answers
 *   inline; `versao` 2.03; no data namespace (SetXmlNameSpace('')); RPS, lote, every query (ConsultarLoteRps
 *   included), cancellation and substitution signed; a line break is written `\s\n` (QuebradeLinha, as Tinus).
 * - ISSDSF: Campo Grande/MS at `https://nfselote.campogrande.ms.gov.br/notafiscal-abrasfv203-ws/NotaFiscalSoap`,
 *   homologation `https://nfselote-r.campogrande.ms.gov.br/…` (registry). ACBr `ISSDSF.Provider.pas`
 *   (TACBrNFSeXWebserviceISSDSF203 / TACBrNFSeProviderISSDSF203): the same request idiom and signatures; the message
 *   roots written without a namespace; ConsultarLoteRps with Prestador and Protocolo, ConsultarNfseFaixaEnvio with
 *   Prestador, Faixa and Pagina.
 * Readings: DSF's XSD (OpenAC DSF/2.03/nfse.xsd: the same vendor's contract at the same path) and its CNAE rules;
 * Campo Grande's line break as DSF's (ACBr sets none for it); GerarNfse synchronous.
 */
export const ISSCAMPINAS_CONFIG: AbrasfProviderConfig = {
  ...DSF_CONFIG,
  provider: 'ISSCampinas',
  formats: { ...DSF_CONFIG.formats, lineBreak: '\\s\\n' },
  sources: 'ACBr ISSCampinas.Provider.pas (TACBrNFSeProviderISSCampinas203); OpenAC DSF/2.03/nfse.xsd',
};

export const ISSDSF_CONFIG: AbrasfProviderConfig = {
  ...DSF_CONFIG,
  provider: 'ISSDSF',
  sources: 'ACBr ISSDSF.Provider.pas (TACBrNFSeProviderISSDSF203); OpenAC DSF/2.03/nfse.xsd',
};
