import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * SigCorp (meumunicipio.online; 7 cities in MA, MG and SP on ABRASF 2.04: Bacabal, Itapecuru Mirim, Barão de
 * Cocais, Ipatinga, Caraguatatuba, Franco da Rocha, Mogi Mirim). Sources: ACBr `SigCorp.Provider.pas`
 * (TACBrNFSeProviderSigCorp204 / TACBrNFSeXWebserviceSigCorp204) and `SigCorp.GravarXml.pas` (TNFSeW_SigCorp204),
 * frones/ACBr `Fontes/ACBrDFe/ACBrNFSeX/Provedores/`; the provider's XSD as ACBr ships it
 * (`Exemplos/ACBrDFe/Schemas/NFSe/SigCorp/2.04/nfse.xsd`, schemas/README.md); the per-city service data of
 * ACBrNFSeXServicos.ini carried by the registry (municipalities.json `soap` and `options.SubVersao`).
 * - SOAP 1.1; the operation element in the CITY's namespace (`ProNameSpace`/`HomNameSpace`, e.g.
 *   `https://abrasfipatinga.meumunicipio.online/ws`, training `https://testeipatingaabrasf.meumunicipio.online/ws`);
 *   SOAPAction = the city's SoapAction, or its namespace when the ini gives none, + `#` + the operation
 *   (GetSoapAction). A city without a namespace for the environment has no service there.
 * - two idioms by the city's `SubVersao` (a global of the unit, set from the city's parameter): 1 (Bacabal, Franco
 *   da Rocha) → `<ws:<Op>Request>{nfseCabecMsg, nfseDadosMsg}` (unqualified, escaped: XmlToStr) answered in
 *   `outputXML`; otherwise → `<ws:<Op>><xml>` with the message in CDATA (IncluirCDATA), unqualified, no cabecalho,
 *   answered in `<Op>Result`. The range query is `ConsultarNfseFaixa` in both.
 * - ConfigAssinar: Rps, LoteRps, CancelarNFSe, RpsGerarNFSe (and SubstituirNFSe); VersaoDados/VersaoAtrib 2.04; the
 *   official cabecalho (GetCabecalho); the client certificate on TLS (UseCertificateHTTP not turned off in 2.04; the
 *   registry's auth `mtls`); line breaks of Discriminacao as `|` (QuebradeLinha); Aliquota with two decimals as a
 *   percentage (FormatoAliq tcDe2, no DivAliq100); TomadorServico; NumeroNfseFinal filled in the range query.
 * - the XSD: the official ABRASF 2.04 with ItemListaServico a free string of 1–5 characters.
 * Readings: GerarNfse (synchronous) as the emission (ACBr leaves the mode to the application); ItemListaServico
 * `01.05` (the ABRASFv2 writer's default format); the cancellation answer read as the official RetCancelamento (the
 * 2.04 provider does not override the ABRASFv2 reading).
 */
const base = baselineConfig({
  provider: 'SigCorp',
  version: '2.04',
  schema: 'abrasf204SigCorp',
  sources: 'ACBr SigCorp.Provider.pas / SigCorp.GravarXml.pas (SigCorp204); SigCorp nfse.xsd 2.04; registry soap data',
});

export const SIGCORP_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: {
    ...base.soap,
    perCity: {
      soapAction: '{city}#{op}',
      bodyByOption: {
        option: 'SubVersao',
        values: { '1': { style: 'abrasfRequest', encoding: 'escaped', cabecalho: true } },
      },
    },
  },
  body: { style: 'stringParam', encoding: 'cdata', cabecalho: false, credentials: false, qualifiedStrings: false },
  formats: { ...base.formats, lineBreak: '|' },
  operations: { queryRange: { soapOperation: 'ConsultarNfseFaixa' } },
};
