import type { MunicipalSandbox } from '../municipal.ts';
import { type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';
import { wsdlOperationTable } from './wsdl.ts';

/**
 * ISSNet's legacy ABRASF 1.00 service (`webserviceabrasf/<city>/servicos.asmx`; ACBr ISSNet.Provider.pas for the
 * transport: each operation element in `http://www.issnetonline.com.br/webservice/nfd` with the qualified string
 * `xml`, the escaped message with its XML declaration, SOAPAction `…/nfd/<Op>` with ISSNet's operation names, the
 * answer an escaped message in `<Op>Result`). Messages validated with ISSNet's 1.00 schemas (ACBr's copies, one
 * namespace root: schemas/abrasf-v1/issnet/), which also hold every answer (each is checked before it leaves): the
 * answer's root and its own elements (ListaMensagemRetorno, ListaNfse, CompNfse, Cancelamento, …) in the answer's
 * namespace (`…/vsd/servico_<message>.xsd`), the types in `…/vsd/tipos_complexos.xsd`; ConsultarLoteRps's messages as
 * tcMensagemRetornoLote (with the RPS's identification). The prestador by `CpfCnpj{Cnpj}`; the lote signed on
 * LoteRps and the cancellation on InfPedidoCancelamento; client certificate on TLS. The NFS-e (tcNfse) signed by the
 * sandbox, Competencia `yyyyMM`, DataEmissaoRps a dateTime, lower-case `id`; the cancellation confirmed as
 * tcCancelamentoNfse{Confirmacao{Pedido, InfConfirmacaoCancelamento{Sucesso, DataHora}}, Signature}, signed.
 * One answer has no shape in ISSNet's schemas, ConsultarLoteRps of an unknown protocol (tcMensagemRetornoLote requires
 * an RPS): it is answered E86 as tcMensagemRetorno, unchecked.
 */
const VSD = 'http://www.issnetonline.com.br/webserviceabrasf/vsd';
const NFD = 'http://www.issnetonline.com.br/webservice/nfd';
const snake = (root: string) => root.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();

export const ISSNET_V1_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:issnet',
  slug: 'issnet-v1',
  name: 'ISSNet (ABRASF 1.00)',
  schema: 'abrasf100ISSNet',
  dataNamespace: `${VSD}/tipos_complexos.xsd`,
  answerNamespace: (root) => `${VSD}/servico_${snake(root)}.xsd`,
  soap: { namespace: NFD, qualifiedParameters: true, result: 'Result' },
  operations: wsdlOperationTable((element) => ({ soapAction: `${NFD}/${element}`, parameter: 'xml' }), {
    consultarSituacao: 'ConsultaSituacaoLoteRPS',
    consultarPorRps: 'ConsultarNFSePorRPS',
  }),
  answerSchema: () => 'abrasf100ISSNet',
  types: {
    prestadorCpfCnpj: true,
    servicoMunicipio: 'MunicipioPrestacaoServico',
    messagesInAnswerNamespace: true,
    loteMessagesWithRps: true,
  },
  note: {
    idAttribute: 'id',
    competencia: 'yyyyMM',
    dataEmissaoRps: 'dateTime',
    cancellation: 'inf',
    signedConfirmation: true,
  },
  clientCertificate: true,
  signature: { rps: false, lote: true, queries: false, cancel: true },
};

export const issnetV1Sandbox: MunicipalSandbox = {
  engine: ISSNET_V1_PROFILE.engine,
  slug: ISSNET_V1_PROFILE.slug,
  create: (deps) => createAbrasfV1Service(ISSNET_V1_PROFILE, deps),
};
