import type { SchemaName } from '../../xml/xsd.ts';
import type { ComposeNfseOptions } from './rules.ts';

/**
 * What the generic ABRASF 2.0x sandbox knows of a provider: official and published data only (WSDL operation names
 * and namespaces, the SOAP idiom, the XSD, who signs what, how callers authenticate), never the engine's builders.
 * Sources are the provider files in shared/reference/providers/ summarised in briefs/providers-abrasf.md.
 */
export interface AbrasfSandboxProfile {
  provider: string;
  /** engine key served (`abrasf-v2:<provider>`) */
  engine: string;
  /** path segment under /municipal/ */
  slug: string;
  /** exchange log directory (kebab-case) */
  family: string;
  version: string;
  schema: SchemaName;
  /** a provider with a layout per city: the XSD of each layout, keyed by the cabecalho's versaoDados */
  schemas?: Readonly<Record<string, SchemaName>>;
  dataNamespace: string | null;
  soap: {
    /** the namespace of the operation elements (WSDL tns) */
    namespace: string;
    /** operation element names as in the WSDL: `pascal` (GerarNfse) or `camel` (gerarNfse) */
    operationCase: 'pascal' | 'camel';
  };
  /**
   * Where the request carries its message: `strings` (nfseCabecMsg/nfseDadosMsg, escaped, CDATA or raw elements,
   * inside `<Op>Request`, `<Op>` or `<Op><Op>Request>`), `inline` (the message element inside the operation
   * element), `bare` (the message is the body), `json` (no SOAP: `{"xml", "usuario", "senha"}` posted as
   * application/json, the operation named by the message's root, answered by the bare message: Centi).
   */
  request: 'strings' | 'inline' | 'bare' | 'json';
  /**
   * For `strings`: the one wrapper the provider's WSDL/clients use (`request` `<Op>Request`, `operation` `<Op>`,
   * `double` `<Op><Op>Request>`); absent: any of them is accepted.
   */
  stringsWrapper?: 'request' | 'operation' | 'double';
  /** how the answer is written: `outputXML` string, `<Op>Result` string, or the message inline */
  response: 'outputXML' | 'result' | 'inline' | 'bare' | 'rootResponse' | 'return';
  /** official WSDL operations the provider serves */
  operations: readonly string[];
  /** the provider's own names of official operations (name in `operations` → official name): DSF */
  operationNames?: Readonly<Record<string, string>>;
  /**
   * Who signs what: RPS, lote, cancellation; `queries`: every query but ConsultarLoteRps (Signature last in the root);
   * `reference: 'document'`: `URI=""` over the element holding the Signature is accepted besides `#Id` (ISSNet).
   */
  signature: {
    rps: boolean;
    lote: boolean;
    cancel: boolean;
    queries?: boolean;
    reference?: 'id' | 'document';
    /** ConsultarLoteRps must be signed too, as the other queries (GISS) */
    pollQuery?: boolean;
    /** a cancellation signature the provider does not require is verified when present (SysISS) */
    cancelWhenPresent?: boolean;
  };
  /**
   * Split namespaces (GISS): each message root (request and answer) in its own namespace, keyed by root; `types` the
   * namespace of the types below them; `localGroups` keep their children in the message namespace; `typeRefs` are
   * global type elements the messages reference (in `types` wherever they appear).
   */
  namespaces?: {
    messages: Readonly<Record<string, string>>;
    types: string;
    localGroups?: readonly string[];
    typeRefs?: readonly string[];
  };
  /** how long an asynchronous lote waits before it is processed, unless the service options say (default 1 s) */
  holdMs?: number;
  /** Aliquota is a fraction (GISS: 0.0307); a percentage is refused at processing with E165 */
  aliquota?: 'fraction';
  /** operations the provider lists but refuses with a message (GISS: GerarNfse and the synchronous lote, A01) */
  refusedOperations?: Readonly<Record<string, { codigo: string; mensagem: string }>>;
  /** the query messages (by RPS, by range) wrap their content in this element (ISSNet `Pedido`) */
  queryWrapper?: string;
  /**
   * The Id attribute of InfDeclaracaoPrestacaoServico, LoteRps and InfPedidoCancelamento is written `id` (Tributus):
   * the official `Id` there is refused (E160); the XSD validates the message with them read as `Id`.
   */
  idAttribute?: 'id';
  /**
   * A credential in the URL's query (Tributus `tokenAuth`): required (E179 otherwise), checked against
   * `knownCredentials` (password) for a known CNPJ, else any non-empty value.
   */
  urlToken?: string;
  /** the TLS client certificate is required (E182 otherwise) */
  clientCertificate: boolean;
  /** `username`/`password` after the message (Fiorilli): checked against `knownCredentials`, else any non-empty */
  bodyCredentials: boolean;
  /**
   * The credentials travel in a WS-Security header (`wsse:Security/UsernameToken` Username and Password: Saatri),
   * not in the body; checked as `bodyCredentials` are.
   */
  wsSecurity?: boolean;
  /**
   * `return`: `<Op>Response/<Op>Return` string (an Axis service: Sudoeste). The names of the two string parameters
   * when not nfseCabecMsg/nfseDadosMsg (Sudoeste's Nfsecabecmsg/Nfsedadosmsg).
   */
  stringNames?: { cabecalho: string; dados: string };
  /**
   * The answer's error entries as `Erro{ErroID, ErroMensagem, ErroSolucao}` instead of the official
   * `MensagemRetorno{Codigo, Mensagem, Correcao}` (Sudoeste).
   */
  errorEntries?: 'erro';
  /**
   * The SOAPAction must be this environment's prefix + the provider's name of the operation (eReceita: its
   * production and homologation hosts differ); a SOAP Client fault otherwise.
   */
  soapActionByEnvironment?: { production: string; homologation: string };
  /** the SOAP 1.1 SOAPAction must be this prefix + the operation (a WCF service: `ActionNotSupported` otherwise) */
  soapActionPrefix?: string;
  /** `inline` requests carry the message as this one string parameter of the operation (Fisco `xml`, CDATA) */
  stringParameter?: string;
  /**
   * Messages arrive without the ABRASF namespace (Fisco: its clients strip it after validating): the sandbox reads
   * an unqualified message in `dataNamespace`, as the XSD validates it (a qualified one is accepted too).
   */
  unqualifiedMessages?: boolean;
  /**
   * The TLS client certificate's holder (ICP-Brasil CNPJ root, or CPF) must be the message's prestador (E157): how an
   * unsigned provider on mutual TLS knows who asks (Fisco).
   */
  certificateHolder?: boolean;
  /** credentials the provider's homologation publishes (CNPJ → login) */
  knownCredentials?: Readonly<Record<string, { username: string; password: string }>>;
  /** NumeroNfseFinal is required in ConsultarNfsePorFaixa (Fiorilli) */
  rangeNeedsEnd?: boolean;
  /**
   * Every message opens with `IdentificacaoRequerente{CpfCnpj, InscricaoMunicipal, Senha, Homologa}` (EloTech):
   * `Homologa` must name the endpoint's environment, `Senha` the taxpayer's password (`knownCredentials`, else any).
   */
  requerente?: boolean;
  /** the lote receipt carries only NumeroLote, and ConsultarLoteRps asks by NumeroLote (EloTech) */
  pollBy?: 'Protocolo' | 'NumeroLote';
  /** the NFS-e as the provider writes it: signed or not, DataEmissao as a date, with an InfNfse/ChaveAcesso */
  nfse?: { signed: boolean; dateOnly: boolean; chaveAcesso: boolean };
  /** the cancellation answer's elements (default RetCancelamento / Confirmacao) */
  cancelAnswer?: { ret: string; confirmacao: string };
  /** at most this many NFS-e per query page, RPS per lote */
  limits: { queryPage: number; rpsPerLote: number };
  /** the provider's NFS-e (tcNfse) when its XSD reshapes the official one */
  composeNfse?: (options: ComposeNfseOptions) => string;
  /**
   * RecepcionarLoteRpsSincrono takes this root instead of EnviarLoteRpsSincronoEnvio (which then gets a SOAP Client
   * fault) and answers with this root (Futurize: EnviarLoteRpsEnvio / EnviarLoteRpsResposta)
   */
  syncBatch?: { requestRoot: string; responseRoot: string };
}

export const ABRASF_DATA_NS = 'http://www.abrasf.org.br/nfse.xsd';

/** The ten operations of the official ABRASF 2.0x WSDL (nfse-v2_0x.wsdl). */
export const ABRASF_V2_OPERATIONS = [
  'RecepcionarLoteRps',
  'RecepcionarLoteRpsSincrono',
  'GerarNfse',
  'CancelarNfse',
  'SubstituirNfse',
  'ConsultarLoteRps',
  'ConsultarNfsePorRps',
  'ConsultarNfseServicoPrestado',
  'ConsultarNfseServicoTomado',
  'ConsultarNfsePorFaixa',
] as const;

/** The official operations but those `left` out (a provider that does not serve them). */
export function operationsWithout(...left: string[]): readonly string[] {
  return ABRASF_V2_OPERATIONS.filter((op) => !left.includes(op));
}

/**
 * `operations` with the range query named `ConsultarNfseFaixa`, as several providers name it (fintelISS, SigCorp,
 * eReceita), and the mapping back to the official name.
 */
export function withFaixaQuery(operations: readonly string[] = ABRASF_V2_OPERATIONS) {
  return {
    operations: operations.map((op) => (op === 'ConsultarNfsePorFaixa' ? 'ConsultarNfseFaixa' : op)),
    operationNames: { ConsultarNfseFaixa: 'ConsultarNfsePorFaixa' },
  } satisfies Pick<AbrasfSandboxProfile, 'operations' | 'operationNames'>;
}

/** Fiorilli IssWebWS (IssWebWS.wsdl; nfselib's nfse_v201 with mandatory signatures; vendor manual). */
export const FIORILLI_PROFILE: AbrasfSandboxProfile = {
  provider: 'Fiorilli',
  engine: 'abrasf-v2:fiorilli',
  slug: 'abrasf-fiorilli',
  family: 'abrasf-v2-fiorilli',
  version: '2.01',
  schema: 'abrasf201Fiorilli',
  dataNamespace: ABRASF_DATA_NS,
  soap: { namespace: 'http://ws.issweb.fiorilli.com.br/', operationCase: 'camel' },
  request: 'inline',
  response: 'inline',
  operations: ABRASF_V2_OPERATIONS,
  signature: { rps: true, lote: true, cancel: true },
  clientCertificate: false,
  bodyCredentials: true,
  // the manual's public homologation taxpayer (CNPJ 01001001000113, password 123456)
  knownCredentials: { '01001001000113': { username: '01001001000113', password: '123456' } },
  rangeNeedsEnd: true,
  limits: { queryPage: 50, rpsPerLote: 50 },
};

/** WebISS 2.02 (nfse.asmx-v202.wsdl: the official ABRASF shapes; nfse_v202.xsd). */
export const WEBISS_PROFILE: AbrasfSandboxProfile = {
  provider: 'WebISS',
  engine: 'abrasf-v2:webiss',
  slug: 'abrasf-webiss',
  family: 'abrasf-v2-webiss',
  version: '2.02',
  schema: 'abrasf202',
  dataNamespace: ABRASF_DATA_NS,
  soap: { namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal' },
  request: 'strings',
  response: 'outputXML',
  operations: ABRASF_V2_OPERATIONS,
  signature: { rps: true, lote: true, cancel: true },
  clientCertificate: true,
  bodyCredentials: false,
  limits: { queryPage: 50, rpsPerLote: 50 },
};

/**
 * EL 2.04 (briefs/providers-abrasf.md §4: ACBr and a PHP client; no WSDL found): `<Op><Op>Request>` with CDATA
 * strings in `http://nfse.abrasf.org.br`, answer `outputXML`; plain ABRASF 2.04 XSD; RPS and lote signed, the
 * cancellation not required to be (ACBr sends it unsigned); client certificate on TLS.
 */
export const EL_PROFILE: AbrasfSandboxProfile = {
  provider: 'EL',
  engine: 'abrasf-v2:el',
  slug: 'abrasf-el',
  family: 'abrasf-v2-el',
  version: '2.04',
  schema: 'abrasf204',
  dataNamespace: ABRASF_DATA_NS,
  soap: { namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal' },
  request: 'strings',
  stringsWrapper: 'double',
  response: 'outputXML',
  operations: ABRASF_V2_OPERATIONS,
  signature: { rps: true, lote: true, cancel: false },
  clientCertificate: true,
  bodyCredentials: false,
  limits: { queryPage: 50, rpsPerLote: 50 },
};

/**
 * EloTech 2.03 (nfselib HIratiPR-Elotech.wsdl: Spring-WS, the Envio is the body and the Resposta the answer's body;
 * ELOTECH/nfse_v2_03.xsd with its typo fixed: no signature, IdentificacaoRequerente, ChaveAcesso). Operation names
 * are the official equivalents of EloTech's (EnviarLoteRps…); there is no GerarNfse.
 */
export const ELOTECH_PROFILE: AbrasfSandboxProfile = {
  provider: 'EloTech',
  engine: 'abrasf-v2:elotech',
  slug: 'abrasf-elotech',
  family: 'abrasf-v2-elotech',
  version: '2.03',
  schema: 'abrasf203Elotech',
  dataNamespace: 'http://shad.elotech.com.br/schemas/iss/nfse_v2_03.xsd',
  soap: { namespace: 'http://shad.elotech.com.br/schemas/iss/nfse_v2_03.xsd', operationCase: 'pascal' },
  request: 'bare',
  response: 'bare',
  operations: operationsWithout('GerarNfse'),
  signature: { rps: false, lote: false, cancel: false },
  clientCertificate: false,
  bodyCredentials: false,
  requerente: true,
  pollBy: 'NumeroLote',
  nfse: { signed: false, dateOnly: true, chaveAcesso: true },
  cancelAnswer: { ret: 'tcRetCancelamento', confirmacao: 'ConfirmacaoCancelamento' },
  limits: { queryPage: 50, rpsPerLote: 50 },
};

/** The official messages of the ABRASF 2.0x error table the sandbox answers with (erros_e_alertas_2.03.csv). */
export const OFFICIAL_MESSAGES: Record<string, string> = {
  E2: 'Data de competência superior a de emissão do RPS.',
  E4: 'Esse RPS não foi encontrado em nossa base de dados.',
  E10: 'RPS já informado.',
  E78: 'Número da NFS-e inexistente na base de dados para o prestador do serviço pesquisado.',
  E79: 'NFS-e já está cancelada.',
  E86: 'Número do protocolo de recebimento do lote inexistente na base de dados.',
  E92: 'RPS ainda não convertido em NFS-e.',
  E157: 'Usuário não tem autorização para solicitar o serviço.',
  E160: 'Arquivo em desacordo com o XML Schema.',
  E165: 'Alíquota do serviço inválida',
  E171: 'O usuário não tem autorização para assinar RPS para o prestador de serviço',
  E172: 'Arquivo enviado com erro na assinatura.',
  E174: 'RPS não assinado.',
  E178: 'Lote aguardando processamento.',
  E179: 'Erro na autenticação.',
  E180: 'Pedido de Cancelamento não está assinado.',
  E182: 'Requisição do serviço não acompanhada de autenticação por certificação digital.',
  E183: 'A mensagem XML do cabeçalho do arquivo enviado está fora do padrão especificado.',
  E212: 'NFS-e não encontrada.',
  E213: 'Código de cancelamento informado de uso exclusivo da Prefeitura',
  E214: 'Número de RPS no lote excede o permitido.',
  E324: 'Assinatura do RPS inválida.',
  E325: 'Assinatura do lote de RPS inválida.',
};
