import { ACBR_V1_IDS, wsdlOperations, type AbrasfV1ProviderConfig } from '../config.ts';

/**
 * Publica (e-Publica: 18 cities in SC, PR and RN, among them Joinville and Itajaí): ABRASF 1.00 extended in its own
 * namespace `http://www.publica.inf.br` (ACBr Publica.Provider.pas and Publica.GravarXml.pas, ProjetoACBr/ACBr and
 * edsontmarques/ACBr versions of 2025–2026; the provider's nfse.xsd as ACBr ships it, ProjetoACBr/ACBr 2cd11017
 * `Exemplos/ACBrDFe/Schemas/NFSe/Publica/1.00/nfse.xsd`, copied to schemas/abrasf-v1/publica/; the registry's
 * `…/<city>_nfse_integracao/Services` URLs, homologation `https://nfse-teste.publica.inf.br/homologa_nfse_integracao/
 * Services`).
 * - SOAP 1.1 (JAX-WS): operation element in `http://service.nfse.integracao.ws.publica/` (RecepcionarLoteRps,
 *   ConsultarSituacaoLoteRps, ConsultarLoteRps, ConsultarNfsePorRps, ConsultarNfseFaixa, CancelarNfse) holding one
 *   unqualified `<XML>` with the message in CDATA, SOAPAction empty; the answer in `<return>`.
 * - signatures (ConfigAssinar): the lote (LoteRps), every consultation whole and the cancellation
 *   (InfPedidoCancelamento), lowercase `id` attributes (Identificador `id`); the RPS itself is not signed; no client
 *   certificate (UseCertificateHTTP = False). The schema makes the consultations' Signature mandatory.
 * - the schema's own rules: LoteRps carries `versao` (required, tsVersao: `1.00`); tcDadosServico has neither
 *   CodigoCnae nor CodigoTributacaoMunicipio (ACBr NrOcorrCodigoCnae/NrOcorrCodTribMun = -1); NFS-e numbers are
 *   15 digits (tsNumeroNfse); the note query is ConsultarNfseFaixaEnvio (ACBr ConsultarNFSe.DocElemento), answered
 *   by ConsultarNfseFaixaResposta; ConsultarNfsePorRps is answered by ConsultarNfseResposta (ACBr reads that root;
 *   the schema has no ConsultarNfseRpsResposta); the cancellation carries MotivoCancelamento (CancPreencherMotivo).
 * - Aliquota as a fraction (DivAliq100 = True; the `NaoDividir100` option is set for no city in the registry).
 * Conservative readings: ItemListaServico `01.01` (ACBr's ABRASF 1 default); CodigoCancelamento 1/2/4 (ABRASF 1.00);
 * RPS id `rps<number>`, lote id `Lote_<number>`.
 */
const op = (element: string) => ({ element, soapAction: '', parameter: 'XML' });

export const PUBLICA_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'Publica',
  sources: 'ACBr Publica.Provider.pas / Publica.GravarXml.pas; Publica nfse.xsd (ACBr copy)',
  schema: 'abrasf100Publica',
  dataNamespace: 'http://www.publica.inf.br',
  answerRoots: {
    consultarPorRps: ['ConsultarNfseResposta', 'ConsultarNfseRpsResposta'],
    consultarNfse: ['ConsultarNfseFaixaResposta'],
  },
  soap: {
    namespace: 'http://service.nfse.integracao.ws.publica/',
    encoding: 'cdata',
    qualifiedParameters: false,
    operations: wsdlOperations(op, { consultarNfse: 'ConsultarNfseFaixa' }),
  },
  idAttribute: 'id',
  ids: ACBR_V1_IDS,
  signature: { rps: false, lote: true, queries: true, cancel: true },
  formats: { itemListaServico: 'dotted', lineBreak: ' ', noServicoCodes: true, nfseNumberDigits: 15 },
  loteVersao: '1.00',
  nfseQuery: 'faixa',
  cancelMotivo: true,
  auth: 'signature',
  capabilities: { cancel: true, substitution: false, batch: false, pdf: 'none', homologation: true },
};
