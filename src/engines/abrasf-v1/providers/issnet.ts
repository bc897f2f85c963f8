import { municipalityRegistry } from '../../routing/municipality-registry.ts';
import { ACBR_V1_IDS, wsdlOperations, type AbrasfV1ProviderConfig } from '../config.ts';

/**
 * ISSNet (Nota Control) on its legacy ABRASF 1.00 service (7 cities: Barcarena/PA at
 * `https://abrasf.issnetonline.com.br/webserviceabrasf/barcarena/servicos.asmx`; Mantena/MG, Caarapó, Iguatemi,
 * Miranda, Nova Alvorada do Sul and Selvíria/MS at `http://www.issnetonline.com.br/webserviceabrasf/<city>/
 * servicos.asmx`; production URLs only, from the registry). Sources: ACBr ISSNet.Provider.pas and ISSNet.GravarXml.pas
 * (frones/ACBr `Fontes/ACBrDFe/ACBrNFSeX/Provedores/ISSNet/`: TACBrNFSeProviderISSNet, TACBrNFSeXWebserviceISSNet,
 * TNFSeW_ISSNet); ISSNet's 1.00 schemas as ACBr ships them (frones/ACBr `Exemplos/ACBrDFe/ACBrNFSe/Schemas/ISSNet/`
 * 2d8e1fac / 87ab1afd / 05b56b63), normalised to one namespace root and copied to schemas/abrasf-v1/issnet/.
 * - SOAP 1.1 (ASP.NET asmx): `<Op xmlns="http://www.issnetonline.com.br/webservice/nfd"><xml>` the escaped message
 *   with its XML declaration (ACBr XmlToStr), SOAPAction `http://www.issnetonline.com.br/webservice/nfd/<Op>` with the
 *   provider's operation names (RecepcionarLoteRps, ConsultaSituacaoLoteRPS, ConsultarLoteRps, ConsultarNFSePorRPS,
 *   ConsultarNfse, CancelarNfse); the answer in `<Op>Result`.
 * - messages: each root in its own namespace (`http://www.issnetonline.com.br/webserviceabrasf/vsd/servico_<message>
 *   .xsd`, ConfigMsgDados), its local elements qualified (elementFormDefault `qualified`) but the cancellation's
 *   (`unqualified`: `p1:CancelarNfseEnvio` with a bare `Pedido`); the types in `…/tipos_complexos.xsd`, lower-case
 *   `id` attributes.
 * - ISSNet's types (tipos_complexos.xsd; TNFSeW_ISSNet GerarPrestador, GerarCodigoMunicipioUF,
 *   GerarServicoCodigoMunicipio; ValidarSchema wrapping the first Cnpj in CpfCnpj): the prestador's CNPJ in
 *   `CpfCnpj{Cnpj}` (Prestador of the RPS and of every consultation, LoteRps), `MunicipioPrestacaoServico` closing
 *   Servico, `Cidade`/`Estado` in the taker's address.
 * - signatures (ConfigAssinar): the lote on LoteRps and the cancellation on InfPedidoCancelamento; RPS and
 *   consultations unsigned; the client certificate on TLS (the registry's auth `mtls`).
 * - ItemListaServico digits without the leading zero (filsSemFormatacaoSemZeroEsquerda: `101`, `1401`; at most 4
 *   characters in tsItemListaServico); Aliquota always written (NrOcorrAliquota = 1), a fraction (DivAliq100) but in
 *   the cities whose registry options hold `NaoDividir100` (Barcarena), where it is the percentage.
 * Conservative readings: RPS id `rps<number>`, lote id `Lote_<number>`; CodigoCancelamento 1/2/4 (ABRASF 1.00); the
 * zero values ACBr writes for PIS, COFINS, INSS, IR and CSLL (NrOcorrValor* = 1) are left out (optional in the
 * schema); no public note link (pdf `none`); no homologation service in the registry.
 */
const VSD = 'http://www.issnetonline.com.br/webserviceabrasf/vsd';
const NFD = 'http://www.issnetonline.com.br/webservice/nfd';
const message = (name: string, qualified = true) => ({ namespace: `${VSD}/servico_${name}.xsd`, qualified });
const op = (element: string) => ({ element, soapAction: `${NFD}/${element}`, parameter: 'xml' });

export const ISSNET_V1_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'ISSNet',
  sources: 'ACBr ISSNet.Provider.pas / ISSNet.GravarXml.pas; ISSNet 1.00 schemas (ACBr copies, one namespace root)',
  schema: 'abrasf100ISSNet',
  dataNamespace: `${VSD}/tipos_complexos.xsd`,
  messageNamespaces: {
    EnviarLoteRpsEnvio: message('enviar_lote_rps_envio'),
    ConsultarSituacaoLoteRpsEnvio: message('consultar_situacao_lote_rps_envio'),
    ConsultarLoteRpsEnvio: message('consultar_lote_rps_envio'),
    ConsultarNfseRpsEnvio: message('consultar_nfse_rps_envio'),
    ConsultarNfseEnvio: message('consultar_nfse_envio'),
    CancelarNfseEnvio: message('cancelar_nfse_envio', false),
  },
  types: {
    prestadorCpfCnpj: true,
    servicoMunicipio: 'MunicipioPrestacaoServico',
    endereco: { municipio: 'Cidade', uf: 'Estado' },
  },
  soap: {
    namespace: NFD,
    encoding: 'escaped',
    qualifiedParameters: true,
    xmlDeclaration: true,
    operations: wsdlOperations(op, {
      consultarSituacao: 'ConsultaSituacaoLoteRPS',
      consultarPorRps: 'ConsultarNFSePorRPS',
    }),
  },
  idAttribute: 'id',
  ids: ACBR_V1_IDS,
  signature: { rps: false, lote: true, queries: false, cancel: true },
  formats: {
    itemListaServico: 'digitsNoLeadingZero',
    lineBreak: ' ',
    aliquotaAlways: true,
    aliquotaPercent: (codigoMunicipio) =>
      municipalityRegistry().find(codigoMunicipio)?.parameters?.options?.NaoDividir100 === true,
  },
  auth: 'mtls',
  capabilities: { cancel: true, substitution: false, batch: false, pdf: 'none', homologation: false },
};
