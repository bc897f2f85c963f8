import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Actcon (portalfacil.com.br; 8 cities in MG on ABRASF 2.02). Sources: ACBr `Actcon.Provider.pas`
 * (TACBrNFSeProviderActcon201/202, TACBrNFSeXWebserviceActcon200) and `Actcon.GravarXml.pas` (TNFSeW_Actcon202),
 * frones/ACBr `Fontes/ACBrDFe/ACBrNFSeX/Provedores/`; the per-city, per-environment schemas ACBr ships
 * (`Exemplos/ACBrDFe/Schemas/NFSe/Actcon/2.02/<IBGE>/<Producao|Homologacao>/nfse_v202.xsd`, schemas/README.md); the
 * per-city service data of ACBrNFSeXServicos.ini carried by the registry (municipalities.json `soap`).
 * - every message in the CITY's data namespace for the environment (SetXmlNameSpace of `Pro/HomXMLNameSpace`, e.g.
 *   `http://nfse-mg-alemparaiba.portalfacil.com.br/nfseserv/schema/nfse_v202.xsd`), the cabecalho too (GetCabecalho),
 *   validated by that city's schema for that environment (GetSchemaPath: `<IBGE>\Producao\`, `<IBGE>\Homologacao\`);
 * - SOAP 1.1, `<nfse:<Op>Request xmlns:nfse="<the city's Pro/HomNameSpace>">{nfseCabecMsg, nfseDadosMsg}` unqualified
 *   and escaped (XmlToStr), answered in `outputXML`; SOAPAction = the city's SoapAction (which ends in `#`) + the
 *   official operation (`RecepcionarLoteRps`, `ConsultarNfsePorFaixa`, …);
 * - the asynchronous lote (ModoEnvio meLoteAssincrono), LoteRps versao = VersaoDados 2.02, the cabecalho's `versao`
 *   VersaoAtrib 1.00 over versaoDados 2.02; ConfigAssinar LoteRps and CancelarNFSe (the RPS itself only in GerarNfse,
 *   not used), on mutual TLS;
 * - Aliquota as a fraction (TNFSeW_Actcon202: DivAliq100, no city with NaoDividir100 in the ini), Tomador (TagTomador).
 * Cities served: those whose namespace's schema is public and agrees with the ini, i.e. Além Paraíba (3101508) in
 * production only (ACBr ships no homologation schema for it). Its schema types DataEmissao as xsd:date (the base's
 * 2.02 RPS), although TNFSeW_Actcon202 writes a date-time unless the city has `DataEmissao=Date`: the city's schema
 * decides. Araçuaí's two schemas declare `http://nfearacuai…` while the ini's namespaces are `http://nfsearacuai…`
 * (one of them is wrong; not guessed); the other six cities have no public schema. They are refused (`serves`).
 */
const ALEM_PARAIBA_PRODUCTION = 'http://nfse-mg-alemparaiba.portalfacil.com.br/nfseserv/schema/nfse_v202.xsd';

const base = baselineConfig({
  provider: 'Actcon',
  version: '2.02',
  schema: 'abrasf202ActconAlemParaibaProducao',
  sources: "ACBr Actcon.Provider.pas / Actcon.GravarXml.pas (Actcon202); the cities' nfse_v202.xsd (ACBr copies)",
});

export const ACTCON_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { ...base.soap, perCity: { soapAction: '{city}{op}' } },
  body: { ...base.body, cabecalhoAttribute: '1.00' },
  cityDataNamespace: { schemas: { [ALEM_PARAIBA_PRODUCTION]: 'abrasf202ActconAlemParaibaProducao' } },
  dataNamespace: ALEM_PARAIBA_PRODUCTION,
  signature: { rps: false, lote: true, cancel: true },
  formats: { ...base.formats, aliquota: 'fraction' },
  emission: 'emitAsyncBatch',
  capabilities: { ...base.capabilities, mode: 'async', homologation: false },
};
