import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import type { SchemaName } from '../../xml/xsd.ts';
import type { AuthKind } from '../routing/families.ts';
import type { EngineCapabilities, IssuedReference } from '../types.ts';

/**
 * The typed configuration of one ABRASF 1.0x provider (family `abrasf-v1`). The ABRASF 1.00 message set is
 * asynchronous only (ACBr ACBrNFSeXProviderABRASFv1: "todos os provedores que seguem a versão 1 do layout da ABRASF
 * só têm um serviço para recepcionar o RPS e é assíncrono"): RecepcionarLoteRps → Protocolo → ConsultarSituacaoLoteRps
 * (Situacao 1..4) → ConsultarLoteRps; ConsultarNfsePorRps; ConsultarNfse; CancelarNfse. The generic base (define.ts)
 * turns a configuration into a FamilyDefinition; what differs per provider is data here (the SOAP idiom of each
 * operation, the signatures, the formats) plus, at most, small hooks.
 */
export type AbrasfV1Operation =
  | 'recepcionar'
  | 'consultarSituacao'
  | 'consultarLote'
  | 'consultarPorRps'
  | 'consultarNfse'
  | 'cancelar';

/** The official ABRASF 1.00 message roots (nfse.xsd, namespace http://www.abrasf.org.br/ABRASF/arquivos/nfse.xsd). */
export const ABRASF_V1_MESSAGES: Record<AbrasfV1Operation, { request: string; response: string }> = {
  recepcionar: { request: 'EnviarLoteRpsEnvio', response: 'EnviarLoteRpsResposta' },
  consultarSituacao: { request: 'ConsultarSituacaoLoteRpsEnvio', response: 'ConsultarSituacaoLoteRpsResposta' },
  consultarLote: { request: 'ConsultarLoteRpsEnvio', response: 'ConsultarLoteRpsResposta' },
  consultarPorRps: { request: 'ConsultarNfseRpsEnvio', response: 'ConsultarNfseRpsResposta' },
  consultarNfse: { request: 'ConsultarNfseEnvio', response: 'ConsultarNfseResposta' },
  cancelar: { request: 'CancelarNfseEnvio', response: 'CancelarNfseResposta' },
};

/** The official ABRASF 1.00 WSDL operation names (nfse.wsdl), which most providers keep. */
export const ABRASF_V1_WSDL_OPERATIONS: Record<AbrasfV1Operation, string> = {
  recepcionar: 'RecepcionarLoteRps',
  consultarSituacao: 'ConsultarSituacaoLoteRps',
  consultarLote: 'ConsultarLoteRps',
  consultarPorRps: 'ConsultarNfsePorRps',
  consultarNfse: 'ConsultarNfse',
  cancelar: 'CancelarNfse',
};

/**
 * The six operations in a provider's SOAP idiom: `op` turns an operation name into how it travels; the names are the
 * official WSDL's but for the provider's own (`renamed`: Publica's ConsultarNfseFaixa).
 */
export function wsdlOperations(
  op: (name: string) => AbrasfV1SoapOperation,
  renamed: Partial<Record<AbrasfV1Operation, string>> = {},
): Record<AbrasfV1Operation, AbrasfV1SoapOperation> {
  const entries = Object.entries(ABRASF_V1_WSDL_OPERATIONS) as [AbrasfV1Operation, string][];
  return Object.fromEntries(entries.map(([key, name]) => [key, op(renamed[key] ?? name)])) as Record<
    AbrasfV1Operation,
    AbrasfV1SoapOperation
  >;
}

/** ACBr's Id values (its ABRASF 1 providers' default): RPS `rps<number>`, lote `Lote_<number>`. */
export const ACBR_V1_IDS: AbrasfV1ProviderConfig['ids'] = {
  rps: (numero) => `rps${numero}`,
  lote: (numero) => `Lote_${numero}`,
};

/** How one operation travels: the operation element, its SOAPAction and the (qualified) string parameter. */
export interface AbrasfV1SoapOperation {
  element: string;
  soapAction: string;
  parameter: string;
}

export interface AbrasfV1ProviderConfig {
  /** the ACBr provider name (engine key `abrasf-v1:<provider lower case>`) */
  provider: string;
  /** where the facts of this configuration come from */
  sources: string;
  /** the provider XSD every message is validated against (schemas/abrasf-v1/) */
  schema: SchemaName;
  /** the namespace of the ABRASF messages (with `messageNamespaces`: of the types, e.g. SpeedGov's tipos_v1) */
  dataNamespace: string;
  /** per-message namespaces by message root, and whether the root's own (local) elements are qualified (SpeedGov) */
  messageNamespaces?: Readonly<Record<string, { namespace: string; qualified: boolean }>>;
  /** the answer roots to look for, when the provider names one differently (SpeedGov's RecepcionarLoteRpsResposta) */
  answerRoots?: Partial<Record<AbrasfV1Operation, readonly string[]>>;
  soap: {
    /** the namespace of the operation elements and of their parameters */
    namespace: string;
    /** how the message is carried in the string parameter */
    encoding: 'cdata' | 'escaped';
    /** whether the parameters are in `namespace` (WCF document/literal) or unqualified (SpeedGov) */
    qualifiedParameters: boolean;
    /** a parameter carrying the cabeçalho before the message's (SpeedGov `<header>`), escaped */
    header?: { parameter: string; cabecalho: string };
    /** the parameters inside `<{operation}Request>` within the operation element (MetropolisWeb), escaped */
    requestWrapper?: boolean;
    /** the message carried with its XML declaration (ISSNet: ACBr's XmlToStr of the whole document) */
    xmlDeclaration?: boolean;
    /** the provider's operations; an absent one is not offered by the provider */
    operations: Partial<Record<AbrasfV1Operation, AbrasfV1SoapOperation>>;
  };
  /** an operation's URL from the registry's URL (providers with one service per operation: Salvador) */
  operationUrl?(base: string, operation: AbrasfV1Operation): string;
  /** the name of the Id attribute of InfRps and LoteRps (official `Id`; Salvador `id`) */
  idAttribute: 'Id' | 'id';
  /** the Id values of the RPS and of the lote from the RPS number */
  ids: { rps(numero: string): string; lote(numero: string): string };
  signature: {
    /** InfPedidoCancelamento (Signature inside Pedido) */
    cancel?: boolean;
    /** InfRps (Signature inside Rps) */
    rps: boolean;
    /** LoteRps (Signature last in EnviarLoteRpsEnvio) */
    lote: boolean;
    /** the consultations, whole (URI="", Signature last in the root) */
    queries: boolean;
  };
  formats: {
    /** ItemListaServico `01.01` (dotted), `0101` (digits) or `101` (digits without the leading zero: ISSNet) */
    itemListaServico: 'dotted' | 'digits' | 'digitsNoLeadingZero';
    /** Aliquota as a percentage (5.0000) instead of a fraction in the cities where this holds (ACBr NaoDividir100) */
    aliquotaPercent?(codigoMunicipio: string): boolean;
    /** what a line break of the description becomes in Discriminacao */
    lineBreak: string;
    /** NBS, cClassTrib and INDOP at the end of Servico (Salvador's 2026 schema; required there) */
    reformInServico?: boolean;
    /** Aliquota written even when no ISS is due (0.0000), as ACBr does for some providers (NrOcorrAliquota = 1) */
    aliquotaAlways?: boolean;
    /** CodigoCnae and CodigoTributacaoMunicipio left out: not in the provider's tcDadosServico (Publica) */
    noServicoCodes?: boolean;
    /** the NFS-e number zero-padded to this many digits where the provider's tsNumeroNfse is a fixed pattern */
    nfseNumberDigits?: number;
  };
  /**
   * Where the provider's types differ from the official ones (ISSNet 1.00): the prestador's CNPJ inside
   * `CpfCnpj{Cnpj}` (Prestador of the RPS and of every consultation, LoteRps), the service's municipality element
   * (`MunicipioPrestacaoServico`), and the names of the municipality and state in tcEndereco (`Cidade`, `Estado`).
   */
  types?: {
    prestadorCpfCnpj?: boolean;
    servicoMunicipio?: string;
    endereco?: { municipio: string; uf: string };
  };
  /** the `versao` attribute of LoteRps, where the provider's schema requires it (Publica: `1.00`) */
  loteVersao?: string;
  /** ConsultarNfse by a range of numbers, ConsultarNfseFaixaEnvio{Prestador, Faixa{NumeroNfseInicial, …Final}} */
  nfseQuery?: 'faixa';
  /** the cancellation carries MotivoCancelamento (the reason given; ACBr CancPreencherMotivo) */
  cancelMotivo?: boolean;
  /** the provider's own layout rules, added to the generic ones */
  check?(project: ProjectFiscalProfile, invoice: NormalizedInvoice): { field: string; message: string }[];
  auth: AuthKind;
  capabilities: Omit<EngineCapabilities, 'reconcile' | 'mode'>;
  /** the public link of a note (production), when the provider publishes one */
  pdfLink?(issued: IssuedReference & { inscricaoMunicipal: string | null }): string | null;
}
