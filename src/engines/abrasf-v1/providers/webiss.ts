import { ACBR_V1_IDS, wsdlOperations, type AbrasfV1ProviderConfig } from '../config.ts';

/**
 * WebISS on its legacy ABRASF 1.00 service (19 cities in PA, MA, PI, SE, BA, MG and RJ:
 * `https://www{1,3,4}.webiss.com.br/<city>_wsnfse/NfseServices.svc`, homologation `…_wsnfse_homolog/…`, from the
 * registry). Sources: ACBr WebISS.Provider.pas and WebISS.GravarXml.pas (frones/ACBr 0db659ba / 08dae419,
 * TACBrNFSeProviderWebISS and TNFSeW_WebISS); the service's WSDL (reference/providers/webiss/
 * NfseServices.svc-v1-legacy.wsdl: WCF BasicHttpBinding, RequireClientCertificate="true"); WebISS's 1.00 schemas as
 * ACBr ships them (frones/ACBr `Exemplos/ACBrDFe/Schemas/NFSe/WebISS/1.00/` 5bfe8fa4 and the older
 * `Exemplos/ACBrDFe/ACBrNFSe/Schemas/WebISS/` 05b56b63), copied to schemas/abrasf-v1/webiss/.
 * - SOAP 1.1 document/literal in `http://tempuri.org/`: `<{Op}><cabec>…</cabec><msg>…</msg></{Op}>`, both strings
 *   escaped and qualified (the operation's default namespace), SOAPAction `http://tempuri.org/INfseServices/<Op>`
 *   (RecepcionarLoteRps, ConsultarSituacaoLoteRps, ConsultarLoteRps, ConsultarNfsePorRps, ConsultarNfse,
 *   CancelarNfse); the answer is the escaped ABRASF message in `<Op>Result`.
 * - cabec: the ABRASF 1.00 cabeçalho without namespace (GetCabecalho('')), versao and versaoDados 1.00.
 * - messages: ABRASF 1.00 in `http://www.abrasf.org.br/nfse` (SetXmlNameSpace), `Id` attributes; tcConfirmacaoCancelamento
 *   is {Pedido, DataHora}.
 * - signatures (ConfigAssinar): the lote only, on LoteRps (RpsGerarNFSe concerns GerarNfse, not offered by the
 *   service); RPS, consultations and cancellation unsigned; the client certificate on TLS (the WSDL's policy).
 * - ItemListaServico without the dot (`0101`, filsSemFormatacao); Aliquota always written (NrOcorrAliquota = 1), a
 *   fraction (DivAliq100; the `NaoDividir100` option is set for none of the 19 cities).
 * Conservative readings: four message schemas are not in the public sources (ConsultarSituacaoLoteRpsEnvio,
 * ConsultarLoteRpsEnvio, CancelarNfseEnvio and their answers'): the sandbox writes them as the ABRASF 1.00 model
 * does, over WebISS's published types; RPS id `rps<number>`, lote id `Lote_<number>`; CodigoCancelamento 1/2/4;
 * no public note link for these cities (pdf `none`).
 */
const op = (element: string) => ({
  element,
  soapAction: `http://tempuri.org/INfseServices/${element}`,
  parameter: 'msg',
});

export const WEBISS_V1_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'WebISS',
  sources: 'ACBr WebISS.Provider.pas / WebISS.GravarXml.pas; WebISS NfseServices.svc WSDL; WebISS 1.00 schemas (ACBr)',
  schema: 'abrasf100WebISS',
  dataNamespace: 'http://www.abrasf.org.br/nfse',
  soap: {
    namespace: 'http://tempuri.org/',
    encoding: 'escaped',
    qualifiedParameters: true,
    header: {
      parameter: 'cabec',
      cabecalho: '<cabecalho versao="1.00"><versaoDados>1.00</versaoDados></cabecalho>',
    },
    operations: wsdlOperations(op),
  },
  idAttribute: 'Id',
  ids: ACBR_V1_IDS,
  signature: { rps: false, lote: true, queries: false, cancel: false },
  formats: { itemListaServico: 'digits', lineBreak: ' ', aliquotaAlways: true },
  auth: 'mtls',
  capabilities: { cancel: true, substitution: false, batch: false, pdf: 'none', homologation: true },
};
