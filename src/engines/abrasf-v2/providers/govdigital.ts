import { baselineConfig, onlyLayout } from './baseline.ts';

/**
 * GovDigital (nfe-cidades; 23 cities in MG, 18 on ABRASF 2.00 and 5 on 2.01, at
 * `https://ws.nfe-cidades.com.br/ws/<city>`, homologation `https://ws.homolog.nfe-cidades.com.br/ws/<city>`: the
 * registry, from ACBr's ACBrNFSeXServicos.ini). Public facts show the official message set:
 * - ACBr.Net.NFSe `Providers/GovDigital/IGovDigitalService.cs`: ServiceContract namespace `http://nfse.abrasf.org.br`,
 *   Action `http://nfse.abrasf.org.br/<Op>` for the ten official operations; `GovDigitalServiceClient.cs` sends
 *   (cabec, msg) to each, answered with the response string;
 * - `ProviderGovDigital.cs`: ProviderABRASF2 (RPS, lote and cancellation signed), data namespace
 *   `http://www.abrasf.org.br/nfse.xsd`; ACBr has GovDigital200 and GovDigital201 units (ACBrNFSeXProviderManager).
 * Readings: the official 2.01 XSD and `versao` 2.01 (ACBr.Net's cabecalho writes 2.02, a client choice not taken
 * here); client certificate on TLS (the registry's auth `mtls`). The 18 cities on 2.00 need the 2.00 layout (no Id
 * on InfDeclaracaoPrestacaoServico, DataEmissao/Competencia as dateTime), which this base does not write yet: they are
 * refused at the API edge (`onlyLayout`, field `project.codigoMunicipio`) rather than sent a layout they may not take.
 */
export const GOVDIGITAL_CONFIG = {
  ...baselineConfig({
    provider: 'GovDigital',
    version: '2.01',
    schema: 'abrasf201',
    sources: 'ACBr.Net.NFSe Providers/GovDigital (IGovDigitalService.cs, ProviderGovDigital.cs); ABRASF nfse_v201.xsd',
  }),
  check: onlyLayout('GovDigital', '2.01'),
};
