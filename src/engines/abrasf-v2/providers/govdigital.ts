import { municipalityRegistry } from '../../routing/municipality-registry.ts';
import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * GovDigital (nfe-cidades; 23 cities in MG, 18 on ABRASF 2.00 and 5 on 2.01, at
 * `https://ws.nfe-cidades.com.br/ws/<city>`, homologation `https://ws.homolog.nfe-cidades.com.br/ws/<city>`: the
 * registry, from ACBr's ACBrNFSeXServicos.ini). Public facts show the official message set:
 * - ACBr.Net.NFSe `Providers/GovDigital/IGovDigitalService.cs`: ServiceContract namespace `http://nfse.abrasf.org.br`,
 *   Action `http://nfse.abrasf.org.br/<Op>` for the ten official operations; `GovDigitalServiceClient.cs` sends
 *   (cabec, msg) to each, answered with the response string;
 * - `ProviderGovDigital.cs`: ProviderABRASF2 (RPS, lote and cancellation signed), data namespace
 *   `http://www.abrasf.org.br/nfse.xsd`; ACBr has GovDigital200 and GovDigital201 units (ACBrNFSeXProviderManager).
 * Layout per city (`layouts`): the registry's version of the city (ACBr's `Versao` per city): 2.00 → the official
 * nfse v2.00 XSD (no Id on InfDeclaracaoPrestacaoServico, the RPS signed on its Rps@Id, dates as dateTime, `versao`
 * 2.00 in the lote and the cabecalho); anything else, and a city the registry does not give to GovDigital → 2.01.
 * Readings: the official XSDs and `versao` = the layout (ACBr.Net's cabecalho writes 2.02, a client choice not taken
 * here); client certificate on TLS (the registry's auth `mtls`); Aliquota as a percentage (ACBr's GovDigital writer
 * divides by 100 unless the `NaoDividir100` parameter is set: an unknown, §13; the percentage is the official form).
 */
export function layoutOfCity(provider: string, fallback: AbrasfProviderConfig['version']) {
  return (codigoMunicipio: string | null): AbrasfProviderConfig['version'] => {
    const route = codigoMunicipio ? municipalityRegistry().find(codigoMunicipio) : undefined;
    return route?.provider === provider && route.family === 'abrasf-v2' && route.version === '2.00' ? '2.00' : fallback;
  };
}

export const GOVDIGITAL_CONFIG: AbrasfProviderConfig = {
  ...baselineConfig({
    provider: 'GovDigital',
    version: '2.01',
    schema: 'abrasf201',
    sources:
      'ACBr.Net.NFSe Providers/GovDigital (IGovDigitalService.cs, ProviderGovDigital.cs); ABRASF nfse v2.00 and nfse_v201.xsd',
  }),
  layouts: { versionOf: layoutOfCity('GovDigital', '2.01'), schemas: { '2.00': 'abrasf200', '2.01': 'abrasf201' } },
};
