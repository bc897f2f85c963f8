import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * SH3 (nfiss; 15 cities in MG/RJ at `https://<city>.nfiss.com.br/soap/`: the registry, from ACBr's
 * ACBrNFSeXServicos.ini, where ACBr creates TACBrNFSeProviderSH3200). Public facts show the official message set:
 * - the cities' portals publish the contract ("Manuais e Legislação → Integração com o Webservice"): WSDL at
 *   `https://<city>.nfiss.com.br/?WSDL`, SOAP at `/soap/`, the data XSD at `/soap/nfse_v202.xsd` (ABRASF 2.02),
 *   e-CNPJ/e-CPF certificate; homologation at `homologa<city>.nfiss.com.br` (as described by a public client of the
 *   platform, nfiss contract notes in a third-party repository: `AbrasfProvider.ts`, `abrasfNfiss.ts`);
 * - the WSDL is document/literal: `<Op>Request{nfseCabecMsg, nfseDadosMsg}` in `http://nfse.abrasf.org.br`, strings
 *   (CDATA or escaped), SOAPAction `http://nfse.abrasf.org.br/<Op>`, answers in `outputXML`; data in
 *   `http://www.abrasf.org.br/nfse.xsd`; GerarNfse and CancelarNfse signed, queries unsigned.
 * Readings (§13 unknowns): layout 2.02, the XSD the server itself publishes, rather than ACBr's 2.00 unit (the 2.00
 * layout of the base is one line away should a city prove to take it); the official 2.02 XSD; GerarNfse synchronous;
 * client certificate on TLS (the registry's auth `mtls`); the registry's endpoints (production per city,
 * homologation provider-level).
 */
export const SH3_CONFIG: AbrasfProviderConfig = baselineConfig({
  provider: 'SH3',
  version: '2.02',
  schema: 'abrasf202',
  sources:
    'nfiss city portals (?WSDL, /soap/nfse_v202.xsd); public nfiss client notes (AbrasfProvider.ts, abrasfNfiss.ts); ACBr ACBrNFSeXProviderManager (proSH3); ABRASF nfse_v202.xsd',
});
