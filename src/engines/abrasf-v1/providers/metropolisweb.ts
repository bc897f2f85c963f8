import { ACBR_V1_IDS, wsdlOperations, type AbrasfV1ProviderConfig } from '../config.ts';

/**
 * MetropolisWeb (Ilhéus/BA and Lauro de Freitas/BA): ABRASF 1.00 in the official namespace on a JAX-WS endpoint
 * (ACBr MetropolisWeb.Provider.pas and MetropolisWeb.GravarXml.pas, frones/ACBr 0db659ba/08dae419; the provider's
 * nfse.xsd as ACBr ships it, ProjetoACBr/ACBr 8458e62c, copied to schemas/abrasf-v1/metropolisweb/; the registry's
 * `…/webservicenfse/nfse/services` URLs, homologation `…/webservicenfsehomologa/…`).
 * - SOAP 1.1, operation element in `http://endpoint.nfse.ws.webservicenfse.edza.com.br/` holding an unqualified
 *   `<{Op}Request>` with `<nfseCabecMsg>` (the ABRASF 1.00 cabeçalho, versao 1.00) and `<nfseDadosMsg>`, escaped
 *   strings, SOAPAction empty; the answer's `outputXML` holds the ABRASF answer.
 * - signatures (ConfigAssinar): the RPS on InfRps, the lote on LoteRps and the cancellation on
 *   InfPedidoCancelamento, with the lowercase `id` attribute (Identificador `id`); no client certificate
 *   (UseCertificateHTTP = False).
 * - Aliquota always written, as a fraction (NrOcorrAliquota = 1, DivAliq100; the `NaoDividir100` option of ACBr is
 *   set for neither city in the registry).
 * Conservative readings: ItemListaServico `01.01` (ACBr's default); the optional CodigoNbs/IndOp/CclassTrib are not
 * sent; CodigoCancelamento 1/2/4; RPS id `rps<number>`, lote id `Lote_<number>`.
 */
const op = (element: string) => ({ element, soapAction: '', parameter: 'nfseDadosMsg' });

export const METROPOLISWEB_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'MetropolisWeb',
  sources: 'ACBr MetropolisWeb.Provider.pas / MetropolisWeb.GravarXml.pas; MetropolisWeb nfse.xsd (ACBr copy)',
  schema: 'abrasf100MetropolisWeb',
  dataNamespace: 'http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd',
  soap: {
    namespace: 'http://endpoint.nfse.ws.webservicenfse.edza.com.br/',
    encoding: 'escaped',
    qualifiedParameters: false,
    requestWrapper: true,
    header: {
      parameter: 'nfseCabecMsg',
      cabecalho:
        '<cabecalho versao="1.00" xmlns="http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd"><versaoDados>1.00</versaoDados></cabecalho>',
    },
    operations: wsdlOperations(op),
  },
  idAttribute: 'id',
  ids: ACBR_V1_IDS,
  signature: { rps: true, lote: true, queries: false, cancel: true },
  formats: { itemListaServico: 'dotted', lineBreak: ' ', aliquotaAlways: true },
  auth: 'signature',
  capabilities: { cancel: true, substitution: false, batch: false, pdf: 'none', homologation: true },
};
