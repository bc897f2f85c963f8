import type { IssIncidence } from '../service-codes.ts';
import type { RegimeTributario } from '../project-profile.ts';
import type { Warning } from '../warnings.ts';

// ---------------------------------------------------------------------------------------------------------------
// Normalized invoice: what every engine (national DPS, ABRASF, São Paulo) builds from.
// ---------------------------------------------------------------------------------------------------------------

/** Federal identification of a party. `semNif`: abroad without NIF, with the reason (cNaoNIF 1 or 2). */
export type PartyId =
  | { kind: 'cnpj'; cnpj: string }
  | { kind: 'cpf'; cpf: string }
  | { kind: 'nif'; nif: string }
  | { kind: 'semNif'; motivo: 1 | 2 };

export interface NormalizedAddress {
  /** ISO2 country; `BR` for a national address. */
  pais: string;
  nacional: boolean;
  logradouro: string | null;
  numero: string | null;
  complemento: string | null;
  bairro: string | null;
  /** The IBGE name in Brazil; as given abroad. */
  cidade: string | null;
  /** IBGE code (Brazil only). */
  codigoMunicipio: string | null;
  /** State abbreviation (Brazil only). */
  uf: string | null;
  /** State, province or region (abroad only). */
  estadoProvincia: string | null;
  /** CEP (8 digits) in Brazil; postal code abroad. */
  cep: string | null;
}

export interface NormalizedParty {
  id: PartyId;
  nome: string;
  inscricaoMunicipal: string | null;
  email: string | null;
  telefone: string | null;
  endereco: NormalizedAddress | null;
  /** The party is abroad (NIF or foreign address). */
  estrangeiro: boolean;
}

export type LocalPrestacao = { kind: 'municipio'; codigoMunicipio: string } | { kind: 'pais'; pais: string };

export interface NormalizedObra {
  inscricaoImobiliaria: string | null;
  codigoObra: string | null;
  codigoCib: string | null;
  art: string | null;
  endereco: NormalizedAddress | null;
}

export interface NormalizedEvento {
  nome: string;
  dataInicio: string;
  dataFim: string;
  id: string | null;
  endereco: NormalizedAddress | null;
}

export interface NormalizedService {
  /** cTribNac, 6 digits. */
  cTribNac: string;
  /** LC 116 subitem `II.SS`. */
  subitem: string;
  /** Description of the code in the national list. */
  descricaoNacional: string;
  descricao: string;
  /** Municipal breakdown as sent (3 digits, or 7 for one capital); null when not sent. */
  codigoTributacaoMunicipal: string | null;
  /** Municipal service code (São Paulo): request, else the project codigoServicoSp. */
  codigoServicoMunicipal: string | null;
  /** Final NBS (9 digits): the IBS/CBS framing, else servico.nbs / project default. */
  nbs: string | null;
  cnae: string | null;
  localPrestacao: LocalPrestacao;
  /** Place of ISS incidence of the code (LC 116 art. 3): provider, place of service, taker, or none. */
  incidencia: IssIncidence;
  /** Municipality of ISS incidence (cLocIncid); null with tribISSQN 2/3/4, abroad, or when unknown. */
  municipioIncidencia: string | null;
  obra: NormalizedObra | null;
  evento: NormalizedEvento | null;
  informacoesComplementares: string | null;
  pedidoCompra: string | null;
  documentoReferencia: string | null;
}

export type TribIssqn = 1 | 2 | 3 | 4;

export interface IssDecision {
  /** 1 taxable, 2 immunity, 3 export, 4 no incidence. */
  tribISSQN: TribIssqn;
  tipoImunidade: 1 | 2 | 3 | 4 | 5 | null;
  retido: boolean;
  /** 1 not withheld, 2 withheld by the taker. */
  tpRetISSQN: 1 | 2;
  /** The rate the caller sent, %. */
  aliquota: number;
  /**
   * The rate the national DPS declares in pAliq, or null when the business rules forbid it; `pAliqRule` names the
   * rule (Anexo I RN: E0600 MEI, E0602 not taxable, E0617/E0619 not opted, E0621-E0640 Simples ME/EPP).
   */
  pAliq: number | null;
  pAliqRule: string;
  /** The incidence municipality is active in the national system and uses the national emitter. */
  municipioIncidenciaNoEmissorNacional: boolean;
}

export interface NormalizedExport {
  modoPrestacao: 1 | 2 | 3 | 4;
  vinculoPartes: 0 | 1 | 2 | 3 | 4 | 5 | 6;
  codigoMoeda: string;
  valorServicoMoeda: number;
  fomentoPrestador: string;
  fomentoTomador: string;
  movimentacaoTemporariaBens: 1 | 2 | 3;
  declaracaoImportacao: string | null;
  registroExportacao: string | null;
  compartilharMdic: boolean;
  /** ISO2 country where the result occurs; null when not sent (then it cannot be declared). */
  paisResultado: string | null;
}

export interface NormalizedPisCofins {
  cst: string;
  /** null for CST 00, 08, 09 (no base may be declared). */
  baseCalculo: number | null;
  aliquotaPis: number | null;
  aliquotaCofins: number | null;
  valorPis: number | null;
  valorCofins: number | null;
  tipoRetencao: number;
  /** Where the CST came from. */
  source: 'request' | 'project';
}

export interface NormalizedFederalTaxes {
  pisCofins: NormalizedPisCofins | null;
  retencaoIrrf: number | null;
  retencaoCp: number | null;
  retencaoCsll: number | null;
}

/** Approximate taxes (Lei 12.741): amounts, percentages, the Simples rate, or not informed. */
export type ApproximateTaxes =
  | { kind: 'valores'; federal: number; estadual: number; municipal: number }
  | { kind: 'percentuais'; federal: number; estadual: number; municipal: number }
  | { kind: 'simples'; percentual: number }
  | { kind: 'naoInformado' };

/** Where a resolved IBS/CBS field came from: a body path, a project field, or the annex table. */
export type IbsCbsSource = string;

export interface NormalizedIbsCbs {
  nbs: string;
  indicadorOperacao: string;
  classificacaoTributaria: string;
  cst: string;
  consumidorFinal: boolean;
  /** 0: the taker is the recipient; 1: `destinatario` is. */
  indDest: 0 | 1;
  destinatario: NormalizedParty | null;
  tipoOperacao: 1 | 2 | 3 | 4 | 5 | null;
  /** 1-4; the request value 9 (other) is not in the national XSD and becomes null (warning TIPO_ENTE_GOVERNAMENTAL_NOT_EXPRESSIBLE). */
  tipoEnteGovernamental: 1 | 2 | 3 | 4 | null;
  /** The request asked for tpEnteGov 9. */
  tipoEnteGovernamentalOutro: boolean;
  sources: {
    nbs: IbsCbsSource;
    indicadorOperacao: IbsCbsSource;
    classificacaoTributaria: IbsCbsSource;
    cst: IbsCbsSource;
  };
}

export interface NormalizedRegime {
  regimeTributario: RegimeTributario;
  /** opSimpNac: 1 not opted, 2 MEI, 3 ME/EPP (3 and 3e). */
  opSimpNac: 1 | 2 | 3;
  /** regApTribSN, only for ME/EPP: 1 all in the DAS, 2 ISS outside, 3 federal and ISS outside. */
  regApTribSN: 1 | 2 | 3 | null;
  regEspTrib: 0;
  mei: boolean;
  simples: boolean;
}

export interface NormalizedInvoice {
  tomador: NormalizedParty;
  servico: NormalizedService;
  /** Gross amount, BRL, rounded to cents. */
  total: number;
  iss: IssDecision;
  exportacao: NormalizedExport | null;
  /** Federal groups (regime 1 only); null when none applies. */
  federal: NormalizedFederalTaxes | null;
  totaisTributos: ApproximateTaxes;
  ibscbs: NormalizedIbsCbs | null;
  regime: NormalizedRegime;
  /** YYYY-MM. */
  competencia: string;
  referencia: string | null;
}

export interface FieldError {
  field: string;
  message: string;
}

/**
 * The outcome of checking a request: the normalised invoice with every adjustment made on the caller's behalf
 * (`warnings`, from the catalogue of domain/warnings.ts), or the refusal with the fields named.
 */
export type InvoiceCheckResult =
  | { ok: true; value: NormalizedInvoice; warnings: Warning[] }
  | { ok: false; code: string; errors: FieldError[]; details?: unknown };

/** What a rule helper returns: its value (null when refused), the refusals and the adjustments it made. */
export interface Checked<T> {
  value: T;
  errors: FieldError[];
  warnings: Warning[];
}

export const INVOICE_ERROR_CODES = {
  validation: 'VALIDATION_FAILED',
  projectIncomplete: 'PROJECT_INCOMPLETE',
  ambiguous: 'IBSCBS_FRAMING_AMBIGUOUS',
} as const;
