import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * eReceita (4 cities in MG at `https://webservice.ereceita.net.br/ws/<city>/wsProducao.php`, homologation
 * `https://www3.ereceita.net.br/ereceita/rpp/ws/<city>/wsHomologacao.php`: the registry, from ACBr's
 * ACBrNFSeXServicos.ini, where ACBr creates TACBrNFSeProvidereReceita202). Public facts (ACBr `eReceita.Provider.pas`,
 * TACBrNFSeXWebserviceeReceita202 / TACBrNFSeProvidereReceita202, edsontmarques/ACBr mirror):
 * - SOAP 1.1, `<nfs:<Op>Request>{nfs:nfseCabecMsg, nfs:nfseDadosMsg}` (the strings qualified, escaped) with `nfs`
 *   per environment: `http://webservice.ereceita.net.br/soap/NfseWebService` in production,
 *   `http://www3.ereceita.net.br/soap/NfseWebService` in homologation; SOAPAction `https://www.ereceita.net.br/<Op>`
 *   in production, `https://www3.ereceita.net.br/<Op>` in homologation; the range query is `ConsultarNfseFaixa`
 *   (element and action); answers in `outputXML`;
 * - ABRASF 2.02 (VersaoDados 2.02), the official cabecalho; RPS, lote, GerarNfse's RPS and cancellation signed
 *   (ConfigAssinar); no client certificate on TLS (`UseCertificateHTTP := False`: auth `signature`); no
 *   ConsultarNfseServicoPrestado/Tomado.
 * Readings: the official nfse_v202.xsd (eReceita's writer unit is not in the public index: ACBr's ABRASF v2 writer
 * is the one its class derives from); GerarNfse synchronous; Aliquota as a percentage, ItemListaServico `01.05`.
 */
const base = baselineConfig({
  provider: 'eReceita',
  version: '2.02',
  schema: 'abrasf202',
  sources: 'ACBr eReceita.Provider.pas (TACBrNFSeProvidereReceita202); ABRASF nfse_v202.xsd',
});

export const ERECEITA_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: {
    ...base.soap,
    namespace: 'http://webservice.ereceita.net.br/soap/NfseWebService',
    soapAction: 'https://www.ereceita.net.br/{op}',
    homologation: {
      namespace: 'http://www3.ereceita.net.br/soap/NfseWebService',
      soapAction: 'https://www3.ereceita.net.br/{op}',
    },
  },
  body: { ...base.body, qualifiedStrings: true },
  auth: 'signature',
  operations: { queryRange: { soapOperation: 'ConsultarNfseFaixa' } },
};
