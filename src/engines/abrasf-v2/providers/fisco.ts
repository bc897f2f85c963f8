import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Fisco (fisco.net.br; 46 cities in PI/BA, ABRASF 2.03: the registry, from ACBr's ACBrNFSeXServicos.ini, one
 * provider-level production URL `https://www.fisco.net.br/wsnfseabrasf/ServicosNFSEAbrasf.asmx`). Facts from ACBr's
 * Fisco.Provider.pas and Fisco.GravarXml.pas (TACBrNFSeProviderFisco203, edsontmarques/ACBr mirror):
 * - an ASMX service on SOAP 1.2: camelCase operations (`gerarNfse`, `recepcionarLoteRps`, `consultarNfsePorRps`,
 *   `cancelarNfse`, …) in `https://www.fisco.net.br/wsnfseabrasf/ServicosNFSEAbrasf.asmx`, each with one qualified
 *   string parameter `xml` carrying the message in CDATA (no cabecalho), action
 *   `https://www.fisco.net.br/wsnfseabrasf/ServicosNFSEAbrasf.asmx/<op>`, the answer in `<op>Result`;
 * - the messages validated against the ABRASF 2.03 schema, then sent without the ABRASF namespace (ACBr strips
 *   `xmlns="http://www.abrasf.org.br/nfse.xsd"` after validating); versao 2.03;
 * - no XML signature (ConfigAssinar untouched; the registry's traits), the client certificate on TLS;
 * - ConsultarNfsePorFaixa with NumeroNfseFinal (ConsultaPorFaixaPreencherNumNfseFinal); Aliquota with two decimals.
 * Readings (§13 unknowns): the official nfse_v203.xsd; GerarNfse synchronous (ACBr's default is the synchronous
 * lote, both are in the contract); Aliquota as a percentage, ItemListaServico `01.05`; the answers' dates, which
 * ACBr reads as dd/mm/yyyy, are not relied on (the note's emission time falls back to the answer's arrival).
 */
const SERVICE = 'https://www.fisco.net.br/wsnfseabrasf/ServicosNFSEAbrasf.asmx';
const ABRASF_NS = ' xmlns="http://www.abrasf.org.br/nfse.xsd"';

const base = baselineConfig({
  provider: 'Fisco',
  version: '2.03',
  schema: 'abrasf203',
  sources: 'ACBr Fisco.Provider.pas + Fisco.GravarXml.pas (TACBrNFSeProviderFisco203); ABRASF nfse_v203.xsd',
});

export const FISCO_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { version: '1.2', namespace: SERVICE, operationCase: 'camel', soapAction: `${SERVICE}/{op}` },
  body: { style: 'stringParam', encoding: 'cdata', cabecalho: false, credentials: false, param: 'xml' },
  signature: { rps: false, lote: false, cancel: false },
  // the registry has no homologation URL for the provider (ACBr lists production only)
  capabilities: { ...base.capabilities, homologation: false },
  // validated in the ABRASF namespace (context null), sent without it
  hooks: { message: (_operation, xml, context) => (context ? xml.replaceAll(ABRASF_NS, '') : xml) },
};
