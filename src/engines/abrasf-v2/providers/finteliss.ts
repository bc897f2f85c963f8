import { municipalityRegistry } from '../../routing/municipality-registry.ts';
import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * fintelISS, the layout of ACBr's TACBrNFSeProviderfintelISS200: Juiz de Fora/MG (`https://nfse.pjf.mg.gov.br:4431/
 * WebService.asmx`, homologation `https://nfse.homologacao.pjf.mg.gov.br:4432/WebService.asmx`; the registry's
 * version 2.00 for the city, from ACBrNFSeXServicos.ini). Sources: ACBr `fintelISS.Provider.pas`
 * (TACBrNFSeXWebservicefintelISS200, TACBrNFSeProviderfintelISS200) and `fintelISS.GravarXml.pas`
 * (TNFSeW_fintelISS200), frones/ACBr `Fontes/ACBrDFe/ACBrNFSeX/Provedores/`; Juiz de Fora's schema as ACBr ships it
 * (`Exemplos/ACBrDFe/Schemas/NFSe/fintelISS/2.00/3136702/nfseV202.xsd`: the official nfse_v202.xsd plus an optional
 * DataPagamento last in InfDeclaracaoPrestacaoServico; schemas/README.md).
 * - SOAP 1.1: `<web:<Op>>{web:cabecalho, web:xml}` in `http://www.fintel.com.br/WebService` (both strings qualified
 *   and escaped: XmlToStr), SOAPAction `http://www.fintel.com.br/WebService/<Op>`, the answer as the `<Op>Result`
 *   string; the range query is `ConsultarNfseFaixa`.
 * - ABRASF 2.02 data (VersaoDados/VersaoAtrib 2.02, `versao` on LoteRps) in `http://www.abrasf.org.br/nfse.xsd`, the
 *   official cabecalho; ConfigAssinar: Rps, LoteRps, CancelarNFSe, RpsGerarNFSe; the client certificate on TLS
 *   (UseCertificateHTTP not turned off; the registry's auth `mtls`).
 * Served: only the cities of that layout (the registry's version 2.00). Paracambi and Itatiba (ACBr fintelISS202: a
 * city-specific data namespace, the RPS as `ListaServicos/Servico` items with `ValoresServico`, unsigned RPS) and
 * Ourinhos (fintelISS204: the official `nfse:` idiom on `Nfse204.asmx`, whose unit marks most operations "not
 * tested") are other layouts, not configured here.
 * Readings: GerarNfse (synchronous) as the emission; Aliquota as a percentage and ItemListaServico `01.05` (the
 * ABRASFv2 writer's defaults; the XSD takes up to 4 decimals and 5 characters); the optional Aliquota, CodigoPais and
 * DataPagamento are written as the base writes them (ACBr's writer always writes the first two).
 */
const base = baselineConfig({
  provider: 'fintelISS',
  version: '2.02',
  schema: 'abrasf202FintelISS',
  sources: "ACBr fintelISS.Provider.pas / GravarXml (fintelISS200); Juiz de Fora's nfseV202.xsd (ACBr copy)",
});

const WEB = 'http://www.fintel.com.br/WebService';

export const FINTELISS_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { ...base.soap, namespace: WEB, soapAction: `${WEB}/{op}` },
  body: {
    ...base.body,
    style: 'opParams',
    qualifiedStrings: true,
    stringNames: { cabecalho: 'cabecalho', dados: 'xml' },
  },
  operations: { queryRange: { soapOperation: 'ConsultarNfseFaixa' } },
};

/** The cities of this layout: the registry's fintelISS cities on version 2.00 (ACBr's fintelISS200 class). */
export function servesFintelIss200(municipality: string): boolean {
  const route = municipalityRegistry().find(municipality);
  return route?.provider === 'fintelISS' && route.version === '2.00';
}
