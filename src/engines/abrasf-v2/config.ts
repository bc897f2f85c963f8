import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import type { SchemaName } from '../../xml/xsd.ts';
import type { SendContext } from '../kit/family.ts';
import type { AuthKind } from '../routing/families.ts';
import type { EngineCapabilities, PrepareInput } from '../types.ts';

/**
 * The typed configuration of one ABRASF 2.0x provider: every dimension of briefs/providers-abrasf.md §12 as data.
 * The generic base (define.ts) turns a configuration into a FamilyDefinition; a provider is a configuration plus,
 * at most, a few small hooks. Nothing here is provider code.
 */

/** The logical operations of the official ABRASF 2.0x message set (§12.A). */
export type AbrasfOperation =
  | 'emitAsyncBatch'
  | 'emitSyncBatch'
  | 'emitSingle'
  | 'queryBatch'
  | 'queryByRps'
  | 'queryRange'
  | 'cancel'
  | 'replace';

export interface AbrasfMessage {
  /** the official WSDL operation (RecepcionarLoteRps, …) */
  soapOperation: string;
  /** the root element of the request message */
  requestRoot: string;
  /** the root element(s) of the answer to look for */
  responseRoots: readonly string[];
}

/** The official ABRASF 2.0x WSDL operations and message roots (nfse-v2_0x.wsdl, nfse_v20x.xsd). */
export const ABRASF_MESSAGES: Record<AbrasfOperation, AbrasfMessage> = {
  emitAsyncBatch: {
    soapOperation: 'RecepcionarLoteRps',
    requestRoot: 'EnviarLoteRpsEnvio',
    responseRoots: ['EnviarLoteRpsResposta'],
  },
  emitSyncBatch: {
    soapOperation: 'RecepcionarLoteRpsSincrono',
    requestRoot: 'EnviarLoteRpsSincronoEnvio',
    responseRoots: ['EnviarLoteRpsSincronoResposta'],
  },
  emitSingle: { soapOperation: 'GerarNfse', requestRoot: 'GerarNfseEnvio', responseRoots: ['GerarNfseResposta'] },
  queryBatch: {
    soapOperation: 'ConsultarLoteRps',
    requestRoot: 'ConsultarLoteRpsEnvio',
    responseRoots: ['ConsultarLoteRpsResposta'],
  },
  queryByRps: {
    soapOperation: 'ConsultarNfsePorRps',
    requestRoot: 'ConsultarNfseRpsEnvio',
    responseRoots: ['ConsultarNfseRpsResposta'],
  },
  queryRange: {
    soapOperation: 'ConsultarNfsePorFaixa',
    requestRoot: 'ConsultarNfseFaixaEnvio',
    responseRoots: ['ConsultarNfseFaixaResposta'],
  },
  cancel: { soapOperation: 'CancelarNfse', requestRoot: 'CancelarNfseEnvio', responseRoots: ['CancelarNfseResposta'] },
  replace: {
    soapOperation: 'SubstituirNfse',
    requestRoot: 'SubstituirNfseEnvio',
    responseRoots: ['SubstituirNfseResposta'],
  },
};

/** A provider's row of the operations table: what differs from the official message (§12.A columns). */
export interface OperationOverride {
  supported?: boolean;
  soapOperation?: string;
  requestRoot?: string;
  responseRoots?: readonly string[];
  /** SOAPAction of this operation, instead of the provider's template */
  soapAction?: string;
  /** SOAPAction of this operation in homologation, when it differs (Sistemas4R's `…AH<OP>.Execute`) */
  homologationSoapAction?: string;
  /** how this operation's string parameters carry their XML, instead of the provider's `body.encoding` */
  encoding?: 'escaped' | 'cdata' | 'raw';
  /**
   * The operation's own URL from the registry's (whichever operation's URL the registry gives first): a regular
   * expression `pattern` replaced by `replacement` (Centi's `/nfe/gerar/…`, `/nfe/consultar/rps/…`); a URL it does not
   * match (a sandbox's, a city with one URL) is used as it is.
   */
  urlRewrite?: { pattern: string; replacement: string };
}

/**
 * How the message travels in the SOAP body (§12.B.2):
 * - `abrasfRequest`: `<Op>Request{nfseCabecMsg, nfseDadosMsg}` (official WSDL, WebISS, GISS);
 * - `opParams`: `<Op>{nfseCabecMsg, nfseDadosMsg}` (ISSNet);
 * - `doubleWrap`: `<Op><Op>Request{…}</Op>` (EL);
 * - `inlineInOp`: `<op>` + the message inline (+ trailing credentials: Fiorilli; DSF);
 * - `bareMessage`: the message is the body (EloTech, Tinus);
 * - `stringParam`: `<op>{<param>}` with the message as the one qualified string parameter `body.param` (Fisco's
 *   `<nfse:gerarNfse><nfse:xml>`), no cabecalho;
 * - `json`: no SOAP: an HTTP POST of `{"xml": <message>, "usuario": …, "senha": …}` (application/json, the project's
 *   municipalUser/municipalPassword) to the operation's URL, answered by the bare ABRASF message (Centi).
 */
export type BodyStyle =
  | 'abrasfRequest'
  | 'opParams'
  | 'doubleWrap'
  | 'inlineInOp'
  | 'bareMessage'
  | 'stringParam'
  | 'json';

export interface AbrasfProviderConfig {
  /** the ACBr provider name (engine key `abrasf-v2:<provider lower case>`) */
  provider: string;
  /** the layout version written in `versao` / `versaoDados` */
  version: '2.00' | '2.01' | '2.02' | '2.03' | '2.04';
  /** the provider XSD every message is validated against (schemas/abrasf/) */
  schema: SchemaName;
  /**
   * A provider whose cities take different ABRASF layouts (GovDigital: 2.00 and 2.01): the layout of a city (IBGE
   * code; null: unknown) and the XSD of each layout. Each layout is this configuration with `version` and `schema`
   * replaced; the city is the project's municipality (declaration), the send context's (operations) or the note's
   * (cancellation). Layout 2.00 follows the official nfse v2.00 XSD (no Id on InfDeclaracaoPrestacaoServico: the Id
   * and the RPS signature's Reference are on its Rps; DataEmissao/Competencia as dateTime).
   */
  layouts?: {
    versionOf(codigoMunicipio: string | null): AbrasfProviderConfig['version'];
    schemas: Partial<Record<AbrasfProviderConfig['version'], SchemaName>>;
  };
  /** where the facts of this configuration come from */
  sources: string;
  soap: {
    version: '1.1' | '1.2';
    /** the namespace of the operation (wrapper) element */
    namespace: string;
    /** operation element names: `pascal` as the official WSDL (GerarNfse), `camel` (Fiorilli's gerarNfse) */
    operationCase: 'pascal' | 'camel';
    /** SOAPAction template; `{op}` is the operation element name (after `operationCase`), `{root}` the request root */
    soapAction: string;
    /**
     * A WS-Security header (OASIS 2004 `wsse:Security/UsernameToken`, PasswordText) with the project's
     * municipalUser/municipalPassword (basicAuthUsuario/basicAuthSenha as fallback): Saatri.
     */
    security?: 'usernameToken';
    /**
     * What differs in homologation (ambiente 2): the operation namespace and the SOAPAction template (eReceita's
     * `www3` host in both). Absent: the same as production.
     */
    homologation?: { namespace?: string; soapAction?: string };
    /**
     * The operation namespace and SOAPAction are the city's, per environment (the registry's `soap` data from ACBr's
     * ini: `ProNameSpace`/`HomNameSpace`, `ProSoapAction`/`HomSoapAction`): `soapAction` is then a template where
     * `{city}` is the city's SoapAction (its namespace when it has none) and `{op}` the operation (SigCorp
     * `{city}#{op}`); `bodyByOption` swaps the body idiom by a registry option of the city (SigCorp's `SubVersao`).
     * A city without a namespace for the environment has no service there (UnknownEndpointError).
     */
    perCity?: {
      soapAction: string;
      bodyByOption?: { option: string; values: Readonly<Record<string, Partial<AbrasfProviderConfig['body']>>> };
    };
  };
  body: {
    style: BodyStyle;
    /** how the string parameters carry their XML (`raw`: as child elements) */
    encoding: 'escaped' | 'cdata' | 'raw';
    /** the ABRASF `cabecalho` in nfseCabecMsg */
    cabecalho: boolean;
    /** `versao`/`versaoDados` of the cabecalho when they differ from the layout version (MegaSoft's 1.00) */
    cabecalhoVersion?: string;
    /** the cabecalho's `versao` attribute alone, when it differs from its versaoDados (ACBr VersaoAtrib: Actcon 1.00) */
    cabecalhoAttribute?: string;
    /** trailing unqualified `<username>`/`<password>` in the operation element (Fiorilli) */
    credentials: boolean;
    /** the string parameter's name of the `stringParam` style (default `xml`) */
    param?: string;
    /**
     * nfseCabecMsg/nfseDadosMsg qualified in the operation namespace (eReceita's `nfs:nfseDadosMsg`); the `stringParam`
     * parameter is qualified unless this is `false` (SigCorp's unqualified `<xml>`)
     */
    qualifiedStrings?: boolean;
    /** the names of the two string parameters when not nfseCabecMsg/nfseDadosMsg (Sudoeste's Nfsecabecmsg) */
    stringNames?: { cabecalho: string; dados: string };
  };
  /** the namespace of the ABRASF messages (null: none, DSF) */
  dataNamespace: string | null;
  /**
   * The data namespace is the city's, per environment (the registry's `soap` data from ACBr's ini: `ProXMLNameSpace`,
   * `HomXMLNameSpace`): every message is written and signed in it and validated by the XSD `schemas` gives for that
   * namespace (the city's own schema). A city or environment whose namespace has no schema here is not served there:
   * `serves` refuses a city with none, the `check` refuses the project's environment before anything is built, and a
   * send there is an UnknownEndpointError (city-namespace.ts).
   */
  cityDataNamespace?: { schemas: Readonly<Record<string, SchemaName>> };
  auth: AuthKind;
  presentsCertificate?: boolean;
  signature: {
    /** sign each RPS on InfDeclaracaoPrestacaoServico@Id (Signature inside Rps) */
    rps: boolean;
    /** sign LoteRps@Id (Signature last in EnviarLoteRps[Sincrono]Envio) */
    lote: boolean;
    /** sign InfPedidoCancelamento@Id (Signature inside Pedido) */
    cancel: boolean;
    /**
     * `id` (default): Reference `#Id`. `document`: Reference `URI=""` over the element that holds the Signature,
     * signed as a document of its own (the Rps, the lote message, the Pedido, a query message): ISSNet.
     */
    reference?: 'id' | 'document';
    /** sign the query messages but ConsultarLoteRps (URI="", Signature last in the message root): ISSNet, DSF */
    queries?: boolean;
    /** sign ConsultarLoteRps too, as the other queries (URI="", Signature last in the root): GISS */
    pollQuery?: boolean;
  };
  /**
   * Split namespaces (§12.B.5, GISS): each message root (and its children) in its own namespace, keyed by root
   * element; everything below in `dataNamespace` (the types); `localGroups` keep their children in the message
   * namespace (anonymous local types such as `Faixa`); `cabecalho` is the header's namespace.
   */
  namespaces?: {
    messages: Readonly<Record<string, string>>;
    cabecalho?: string;
    localGroups?: readonly string[];
  };
  /** the content of the query messages (by RPS, by range) is wrapped in this element (ISSNet `Pedido`) */
  queryWrapper?: string;
  /**
   * The name of the Id attribute of InfDeclaracaoPrestacaoServico, LoteRps and InfPedidoCancelamento (default `Id`;
   * Tributus `id`). The XSD sees `Id` (the official attribute); the signature references the attribute as written.
   */
  idAttribute?: 'Id' | 'id';
  /** a project credential sent as a query parameter of the endpoint URL (Tributus `?tokenAuth=<authorizationKey>`) */
  urlCredential?: { param: string; credential: 'authorizationKey' | 'accessToken' };
  /** at most this many digits in CodigoCnae (7 official; DSF 9); a CNAE of fewer than 7 digits is not sent */
  cnaeDigits?: number;
  /** RPS elements the provider's schema says are not to be sent (Centi: `NAO DEVE SER ENVIADO`), left out */
  omitElements?: readonly string[];
  /** the provider's own layout rules, added to the generic ones (a hook: field path + message per problem) */
  check?(project: ProjectFiscalProfile, invoice: NormalizedInvoice): { field: string; message: string }[];
  formats: {
    /** Aliquota as a percentage (2.00 = 2 %) or a fraction (0.02) */
    aliquota: 'percentage' | 'fraction';
    /** ItemListaServico `01.05`, `0105`, `1.05` or `105` */
    itemListaServico: 'dotted' | 'digits' | 'unpadded' | 'digitsUnpadded';
    /** the ItemListaServico format of the cities whose registry options hold `option` (Centi's NaoFormatarItemServico) */
    itemListaServicoByOption?: { option: string; format: 'dotted' | 'digits' | 'unpadded' | 'digitsUnpadded' };
    /** what a line break of the description becomes in Discriminacao */
    lineBreak: string;
    /** the reform group IBSCBS and CodigoNbs (reform.ts): `valores`, last in Servico/Valores (GISS) */
    ibscbs?: 'valores';
    /** IdentificacaoRps of the queries: Numero, Serie and Tipo (official, default) or Numero only (MegaSoft) */
    rpsIdentification?: 'full' | 'numero';
  };
  /** how a single invoice is issued */
  emission: 'emitSingle' | 'emitSyncBatch' | 'emitAsyncBatch';
  limits: { rpsPerLote: number; queryPage: number };
  /**
   * CodigoCancelamento sent (taxpayers may use 1, 2 and 4; 3 and 5 are the prefeitura's, E213); `chaveAcesso`: the
   * note's ChaveAcesso (InfNfse/ChaveAcesso, kept as the issued `chave`) goes after IdentificacaoNfse (EloTech).
   */
  cancellation: {
    defaultCode: '1' | '2' | '4';
    chaveAcesso?: boolean;
    /** fields after CodigoCancelamento (Tinus ADNChave/ADNCodMotivo/ADNMotivo), from the code, reason and key */
    trailing?: (note: { code: string; reason?: string | null; chave?: string | null }) => string;
  };
  /**
   * Where the cancellation answer holds its confirmation, below the answer root (default: the official
   * `RetCancelamento` and `NfseCancelamento/Confirmacao`).
   */
  cancelAnswer?: { ret: string; confirmacao: string };
  /**
   * The answer's error entries when they are not the official `MensagemRetorno{Codigo, Mensagem, Correcao}`: each
   * entry element (besides MensagemRetorno) and the alternative names of its fields, the first present read
   * (Sudoeste: `Erro{ErroID, ErroMensagem, ErroSolucao}`).
   */
  answerMessages?: AnswerMessages;
  /**
   * The element whose text is the answer message, wherever the SOAP idiom nests it (Coplan's GeneXus
   * `<…Response><Gerarnfseresponse><outputXML>`); absent: the operation response's first result.
   */
  answerString?: string;
  /** the element of the asynchronous lote's receipt the poll is keyed by (default `Protocolo`; EloTech `NumeroLote`) */
  pollBy?: 'Protocolo' | 'NumeroLote';
  /**
   * Provider hooks (small): `buildRps` below; `message` rewrites a message before it is sent (unsigned providers only;
   * context null: the view the XSD validates before sending), e.g. EloTech's leading IdentificacaoRequerente.
   */
  hooks?: {
    /** an RPS builder replacing the official one, for a provider whose XSD cuts or reshapes the RPS (MegaSoft) */
    buildRps?: (config: AbrasfProviderConfig, input: PrepareInput) => { id: string; xml: string };
    message?: (operation: AbrasfOperation, xml: string, context: SendContext | null) => string;
  };
  /** provider codes besides the official table's (errors.ts) */
  codes?: { alreadyProcessed?: string[]; alreadyCancelled?: string[]; stillProcessing?: string[]; notFound?: string[] };
  operations?: Partial<Record<AbrasfOperation, OperationOverride>>;
  /**
   * Rewrites of the registry's URL (live mode): e.g. Fiorilli's provider-level homologation URL is its national
   * service (`IssWebWSNacional`), not the ABRASF one.
   */
  endpointRewrites?: readonly { from: string; to: string }[];
  /**
   * One endpoint per operation (Sistemas4R: one `.aspx` each): the registry URL's last path segment, when it matches
   * the regular expression `segment`, is replaced by the operation's file in the environment.
   */
  operationFiles?: {
    segment: string;
    files: Partial<Record<AbrasfOperation, { production: string; homologation: string }>>;
  };
  capabilities: Omit<EngineCapabilities, 'reconcile'>;
  /** public note link template (%NumeroNFSe%, %CodVerif%, %Cnpj%), when the provider publishes one */
  pdfLink?: string;
}

/** The error entries of a provider's answers (config `answerMessages`). */
export interface AnswerMessages {
  entries: readonly string[];
  codigo: readonly string[];
  mensagem: readonly string[];
  correcao: readonly string[];
}

/** The message of a logical operation for a provider (official row + the provider's override). */
export function messageOf(config: AbrasfProviderConfig, operation: AbrasfOperation): AbrasfMessage & OperationOverride {
  return { ...ABRASF_MESSAGES[operation], ...config.operations?.[operation] };
}

/** The rows of the operations table saying the provider does not offer `operations` (spread into its table). */
export function notOffered(...operations: AbrasfOperation[]): Partial<Record<AbrasfOperation, OperationOverride>> {
  return Object.fromEntries(operations.map((operation) => [operation, { supported: false }]));
}

export function isSupported(config: AbrasfProviderConfig, operation: AbrasfOperation): boolean {
  return config.operations?.[operation]?.supported !== false;
}
