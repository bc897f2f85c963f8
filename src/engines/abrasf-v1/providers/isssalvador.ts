import { ACBR_V1_IDS, type AbrasfV1Operation, type AbrasfV1ProviderConfig } from '../config.ts';

/**
 * ISSSalvador: Salvador/BA (2927408), ABRASF 1.00 on WCF services, one service per operation (ACBr
 * ISSSalvador.Provider.pas and ISSSalvador.GravarXml.pas, frones/ACBr 0db659ba/234164c5; Salvador's WSDLs in
 * robmachado/sped-nfse `manuals/Abrasf/Salvador_BA/homologacao/*.svc.xml` (RequireClientCertificate); the prefeitura's nfse.xsd
 * as ACBr ships it, ProjetoACBr/ACBr efd4b333 `Exemplos/ACBrDFe/Schemas/NFSe/ISSSalvador/1.00/nfse.xsd`, copied to
 * schemas/abrasf-v1/; the registry's endpoints per operation).
 * - SOAP 1.1 document/literal in `http://tempuri.org/`: `<EnviarLoteRPS><loteXML>` (also ConsultarSituacaoLoteRPS,
 *   ConsultarLoteRPS), `<ConsultarNfseRPS><consultaxml>` (also ConsultarNfse), the message in CDATA, SOAPAction
 *   `http://tempuri.org/I<Service>/<Operation>`; the answer is `<Operation>Result` holding the ABRASF answer.
 * - each operation has its own `.svc` (EnvioLoteRPS, ConsultaSituacaoLoteRPS, ConsultaLoteRPS, ConsultaNfseRPS,
 *   ConsultaNfse): the registry's Recepcionar URL is rewritten per operation.
 * - signatures (ConfigAssinar): the RPS on InfRps and the lote on LoteRps, with the lowercase `id` attribute
 *   (Identificador `id`; RPS id `rps<number>`, lote id `Lote_<number>`); consultations unsigned; mTLS.
 * - no cancellation by web service (ServicosDisponibilizados.CancelarNfse = False; the XSD comments the
 *   cancellation out: "Cancelamento somente por processo administrativo").
 * - ItemListaServico without the dot (`0101`, filsSemFormatacao); the 2026 schema requires NBS, cClassTrib and INDOP
 *   at the end of Servico, so an invoice without its IBS/CBS framing is refused before a number is spent.
 * Conservative readings: Aliquota as a fraction (tsAliquota decimal(5,4), as the ABRASF 1.00 manual); CNAE sent when
 * known (optional); the note link is the registry's production link (none in homologation).
 */
const PATHS: Record<AbrasfV1Operation, string> = {
  recepcionar: '/rps/ENVIOLOTERPS/EnvioLoteRPS.svc',
  consultarSituacao: '/rps/CONSULTASITUACAOLOTERPS/ConsultaSituacaoLoteRPS.svc',
  consultarLote: '/rps/CONSULTALOTERPS/ConsultaLoteRPS.svc',
  consultarPorRps: '/rps/CONSULTANFSERPS/ConsultaNfseRPS.svc',
  consultarNfse: '/rps/CONSULTANFSE/ConsultaNfse.svc',
  cancelar: '',
};

const op = (service: string, element: string, parameter: string) => ({
  element,
  parameter,
  soapAction: `http://tempuri.org/I${service}/${element}`,
});

export const ISSSALVADOR_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'ISSSalvador',
  sources: 'ACBr ISSSalvador.Provider.pas / ISSSalvador.GravarXml.pas; Salvador nfse.xsd (ACBr copy)',
  schema: 'abrasf100Salvador',
  dataNamespace: 'http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd',
  soap: {
    namespace: 'http://tempuri.org/',
    encoding: 'cdata',
    qualifiedParameters: true,
    operations: {
      recepcionar: op('EnvioLoteRPS', 'EnviarLoteRPS', 'loteXML'),
      consultarSituacao: op('ConsultaSituacaoLoteRPS', 'ConsultarSituacaoLoteRPS', 'loteXML'),
      consultarLote: op('ConsultaLoteRPS', 'ConsultarLoteRPS', 'loteXML'),
      consultarPorRps: op('ConsultaNfseRPS', 'ConsultarNfseRPS', 'consultaxml'),
      consultarNfse: op('ConsultaNfse', 'ConsultarNfse', 'consultaxml'),
    },
  },
  operationUrl: (base, operation) =>
    base.endsWith(PATHS.recepcionar) ? base.slice(0, -PATHS.recepcionar.length) + PATHS[operation] : base,
  idAttribute: 'id',
  ids: ACBR_V1_IDS,
  signature: { rps: true, lote: true, queries: false },
  formats: { itemListaServico: 'digits', lineBreak: ' ', reformInServico: true },
  check: (_project, invoice) =>
    invoice.ibscbs
      ? []
      : [
          {
            field: 'valores.ibscbs',
            message: 'Salvador requires NBS, cClassTrib and cIndOp (IBS/CBS framing) in every RPS',
          },
        ],
  auth: 'mtls',
  capabilities: { cancel: false, substitution: false, batch: false, pdf: 'portal', homologation: true },
  pdfLink: (issued) =>
    issued.ambiente === 1 && issued.numero && issued.verificationCode && issued.inscricaoMunicipal
      ? `https://nfse.salvador.ba.gov.br/site/contribuinte/nota/notaprint.aspx?inscricao=${encodeURIComponent(issued.inscricaoMunicipal)}` +
        `&nf=${encodeURIComponent(issued.numero)}&verificacao=${encodeURIComponent(issued.verificationCode)}`
      : null,
};
