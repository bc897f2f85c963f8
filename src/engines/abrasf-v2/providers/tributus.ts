import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Tributus (tributosmunicipais.com.br; 72 cities, ABRASF 2.04: the registry, from ACBr's ACBrNFSeXServicos.ini, one
 * provider-level production URL `https://www.tributosmunicipais.com.br/nfse/api/`). Facts from ACBr's
 * Tributus.Provider.pas (TACBrNFSeProviderTributus204, edsontmarques/ACBr mirror) and its provider manager entry:
 * - the official message set as `<api:<Op>Request>{nfseCabecMsg, nfseDadosMsg}` in the namespace
 *   `https://tributosmunicipais.com.br/nfse/api/`, both strings in CDATA, SOAP 1.1, SOAPAction
 *   `https://tributosmunicipais.com.br/nfse/api/<Op>`, answers in `outputXML`;
 * - the taxpayer's authorization key (ACBr `WSChaveAutoriz`, `RequerChaveAutorizacao`) appended to the URL as
 *   `?tokenAuth=<key>`: the project's `authorizationKey` (the registry's auth `body-credentials`, i.e. no TLS
 *   client certificate is relied on);
 * - RPS, lote and cancellation signed (ConfigAssinar), the Id attribute written `id` (ConfigGeral.Identificador),
 *   layout 2.04 (versao and versaoDados 2.04), the lote's Prestador group (2.04's tcLoteRps).
 * Readings (§13 unknowns): no provider XSD is public, so the official nfse_v204.xsd is the schema (the lowercase
 * `id` is read as the official `Id` by the validator); GerarNfse synchronous, as every baseline provider;
 * Aliquota as a percentage and ItemListaServico `01.05` (ACBr's ABRASF v2 defaults, nothing provider-specific).
 */
const API = 'https://tributosmunicipais.com.br/nfse/api/';

const base = baselineConfig({
  provider: 'Tributus',
  version: '2.04',
  schema: 'abrasf204',
  sources:
    'ACBr Tributus.Provider.pas (TACBrNFSeProviderTributus204) and ACBrNFSeXServicos.ini (registry); ABRASF nfse_v204.xsd',
});

export const TRIBUTUS_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { ...base.soap, namespace: API, soapAction: `${API}{op}` },
  body: { ...base.body, encoding: 'cdata' },
  auth: 'body-credentials',
  idAttribute: 'id',
  urlCredential: { param: 'tokenAuth', credential: 'authorizationKey' },
  // the registry has no homologation URL for the provider (ACBr lists production only)
  capabilities: { ...base.capabilities, homologation: false },
};
