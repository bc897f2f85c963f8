import { wsdlOperations, type AbrasfV1ProviderConfig } from '../config.ts';

/**
 * SpeedGov 1.00 (31 cities in CE, PI, MA, PE): ABRASF 1.00 with per-message namespaces (ACBr SpeedGov.Provider.pas and
 * SpeedGov.GravarXml.pas, frones/ACBr 0db659ba/35623577; SpeedGov's v1 schemas as ACBr ships them, ProjetoACBr/ACBr
 * ec054461/228da50a and frones/ACBr 5bfe8fa4 `Exemplos/ACBrDFe/Schemas/NFSe/SpeedGov/1.00/`, copied to
 * schemas/abrasf-v1/speedgov/; the registry's `…/ws<city>/Nfes` endpoints, homologation `…/wsmod/Nfes`).
 * - SOAP 1.1, operation element in `http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd` (RecepcionarLoteRps,
 *   ConsultarSituacaoLoteRps, ConsultarLoteRps, ConsultarNfsePorRps, ConsultarNfse, CancelarNfse), unqualified
 *   `<header>` (the cabeçalho `http://ws.speedgov.com.br/cabecalho_v1.xsd`, versao 1) and `<parameters>` (the message),
 *   escaped strings, SOAPAction empty; the answer in `<return>`.
 * - messages: each root in its own namespace (`http://ws.speedgov.com.br/<message>_v1.xsd`), the types in
 *   `http://ws.speedgov.com.br/tipos_v1.xsd`; the envio schemas are `elementFormDefault="unqualified"` (LoteRps,
 *   Prestador, Protocolo, IdentificacaoRps, NumeroNfse in no namespace), the cancellation's `qualified` (Pedido).
 *   ACBr writes those local elements prefixed; the schema is followed here (the sandbox validates with it).
 * - nothing signed and no client certificate (ACBr sets no ConfigAssinar and UseCertificateHTTP = False): the
 *   prestador is identified by CNPJ and inscrição only.
 * - ACBr reads the emission's answer as `RecepcionarLoteRpsResposta`; the official `EnviarLoteRpsResposta` is read too.
 * Conservative readings: ItemListaServico `01.01` and Aliquota as a fraction (ABRASF 1.00, ACBr defaults);
 * CodigoCancelamento 1/2/4 (ABRASF 1.00); RPS id `RPS<number>` and lote id `Lote_<number>` (ACBr's `Lote_` prefix).
 */
const MESSAGE = (name: string, qualified = false) => ({
  namespace: `http://ws.speedgov.com.br/${name}_v1.xsd`,
  qualified,
});
const op = (element: string) => ({ element, soapAction: '', parameter: 'parameters' });

export const SPEEDGOV_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'SpeedGov',
  sources: 'ACBr SpeedGov.Provider.pas / SpeedGov.GravarXml.pas; SpeedGov v1 schemas (ACBr copies)',
  schema: 'abrasf100SpeedGov',
  dataNamespace: 'http://ws.speedgov.com.br/tipos_v1.xsd',
  messageNamespaces: {
    EnviarLoteRpsEnvio: MESSAGE('enviar_lote_rps_envio'),
    ConsultarSituacaoLoteRpsEnvio: MESSAGE('consultar_situacao_lote_rps_envio'),
    ConsultarLoteRpsEnvio: MESSAGE('consultar_lote_rps_envio'),
    ConsultarNfseRpsEnvio: MESSAGE('consultar_nfse_rps_envio'),
    ConsultarNfseEnvio: MESSAGE('consultar_nfse_envio'),
    CancelarNfseEnvio: MESSAGE('cancelar_nfse_envio', true),
  },
  answerRoots: { recepcionar: ['EnviarLoteRpsResposta', 'RecepcionarLoteRpsResposta'] },
  soap: {
    namespace: 'http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd',
    encoding: 'escaped',
    qualifiedParameters: false,
    header: {
      parameter: 'header',
      cabecalho:
        '<p:cabecalho versao="1" xmlns:p="http://ws.speedgov.com.br/cabecalho_v1.xsd"><versaoDados>1</versaoDados></p:cabecalho>',
    },
    operations: wsdlOperations(op),
  },
  idAttribute: 'Id',
  ids: { rps: (numero) => `RPS${numero}`, lote: (numero) => `Lote_${numero}` },
  signature: { rps: false, lote: false, queries: false, cancel: false },
  formats: { itemListaServico: 'dotted', lineBreak: ' ' },
  auth: 'signature',
  capabilities: { cancel: true, substitution: false, batch: false, pdf: 'none', homologation: true },
};
