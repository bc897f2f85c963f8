import { type Warning, warning } from './warnings.ts';

/**
 * Municipal breakdowns (cTribMun, spec 4.7) and the municipality's parametrised ISS rate, decided from the
 * parametrisation a municipality publishes in the national environment (ADN "Parâmetros Municipais" API).
 *
 * The ADN keys a service as `II.SS.DD.NNN`: the national code cTribNac (IISSDD) plus the municipal breakdown
 * (desdobramento) NNN; `000` is the service without breakdown. A municipality that did not break a service down
 * answers for `II.SS.DD.000` (the DPS then carries no cTribMun); one that did answers for `II.SS.DD.001`, `.002`…
 * and not for `.000` (the DPS must carry one of them in `serv/cServ/cTribMun`, 3 digits, XSD `TSCodTribMun`;
 * Anexo I rule E0314: it must exist and be administered by the municipality of incidence at the competência).
 *
 * Everything here is pure: the lookup (cache, ADN) happens before, in the application layer.
 */

/** One rate of the ADN `aliquotas` map (`Aliquota`: Incidencia, Aliq, DtIni, DtFim), in force at the competência. */
export interface ParametrisedRate {
  /** `Aliq`, percent; null when the municipality published none */
  aliquota: number | null;
  /** `Incidencia` as published (e.g. "SIM") */
  incidencia: string | null;
  /** `DtIni` / `DtFim`, ISO dates (YYYY-MM-DD) */
  inicio: string | null;
  fim: string | null;
}

export interface MunicipalBreakdown {
  /** cTribMun, 3 digits */
  codigo: string;
  rate: ParametrisedRate;
}

/** What the ADN says about one national service code in one municipality at one competência. */
export interface MunicipalServiceParameters {
  /** IBGE code of the municipality */
  municipio: string;
  cTribNac: string;
  /** YYYY-MM */
  competencia: string;
  /** the service without breakdown (`II.SS.DD.000`), or null when the municipality does not publish it */
  semDesdobramento: ParametrisedRate | null;
  /** the municipal breakdowns of the service, in code order */
  desdobramentos: MunicipalBreakdown[];
}

/** The national layout's cTribMun: 3 digits. */
export const CTRIBMUN_PATTERN = /^\d{3}$/;

/**
 * Salvador (BA, IBGE 2927408), the one state capital whose municipal taxation code has 7 digits (spec 4.7.4): the
 * LC 116 item and subitem (4 digits, `IISS`) followed by the 3-digit municipal activity (e.g. `1002009`: subitem
 * 10.02, activity 009). Salvador's own system (ISSSalvador, ABRASF 1) takes the 7 digits in
 * `CodigoTributacaoMunicipio`; the national layout has room for 3 (`cTribMun`), so there the first 4 digits are
 * carried by cTribNac (whose first 4 digits must be the same item and subitem) and the last 3 go in cTribMun.
 */
export const SEVEN_DIGIT_CAPITAL = { ibge: '2927408', name: 'Salvador', uf: 'BA' } as const;

/** `II.SS.DD.NNN`, the ADN's `codigoServico` of a national code and a breakdown (`000`: none). */
export function adnServiceCode(cTribNac: string, breakdown = '000'): string {
  return `${cTribNac.slice(0, 2)}.${cTribNac.slice(2, 4)}.${cTribNac.slice(4, 6)}.${breakdown}`;
}

/** Whether the municipality requires a breakdown for this service (it publishes breakdowns and no `000`). */
export function requiresBreakdown(params: MunicipalServiceParameters): boolean {
  return params.semDesdobramento === null && params.desdobramentos.length > 0;
}

export type SevenDigitSplit = { ok: true; cTribMun: string; itemSubitem: string } | { ok: false; message: string };

/**
 * Reads a 7-digit municipal taxation code of the capital that uses them: its first 4 digits must be the item and
 * subitem of cTribNac; the last 3 are the national cTribMun.
 */
export function splitSevenDigitCode(code: string, cTribNac: string, municipio: string): SevenDigitSplit {
  if (municipio !== SEVEN_DIGIT_CAPITAL.ibge) {
    return {
      ok: false,
      message: `7 digits are used only by ${SEVEN_DIGIT_CAPITAL.name} (${SEVEN_DIGIT_CAPITAL.ibge}); send the 3-digit breakdown`,
    };
  }
  if (!/^\d{7}$/.test(code)) return { ok: false, message: '7 digits' };
  const itemSubitem = code.slice(0, 4);
  if (itemSubitem !== cTribNac.slice(0, 4)) {
    return {
      ok: false,
      message: `the first 4 digits (${itemSubitem}) must be the item and subitem of servico.codigo ${cTribNac} (${cTribNac.slice(0, 4)})`,
    };
  }
  return { ok: true, cTribMun: code.slice(4), itemSubitem };
}

export interface BreakdownDecisionInput {
  /** servico.codigoTributacaoMunicipal as sent (trimmed), or null */
  sent: string | null;
  cTribNac: string;
  /** the municipality whose table applies (the municipality of ISS incidence), or null when there is none */
  municipio: string | null;
  /** the municipality's parametrisation of the service, or null when unknown (not published, or unreachable) */
  params: MunicipalServiceParameters | null;
}

export type BreakdownDecision =
  | {
      ok: true;
      /**
       * the value servico.codigoTributacaoMunicipal must carry from now on: the sent one, the injected one, or null
       * (ignored / none); a 7-digit code of the capital that uses them is kept whole (the national builder carries
       * its last 3 digits)
       */
      value: string | null;
      /** the national cTribMun (3 digits) the DPS carries, or null */
      cTribMun: string | null;
      /** the rate the municipality parametrised for the service (and breakdown), when known */
      rate: ParametrisedRate | null;
      warnings: Warning[];
    }
  | { ok: false; field: string; governmentCode: string | null; message: string; allowed?: string[] };

const FIELD = 'servico.codigoTributacaoMunicipal';

/**
 * The cTribMun decision of spec 4.7.3, against the municipality's parametrisation:
 * - the municipality requires a breakdown: a sent value that exists wins; none sent → the first breakdown is
 *   injected (warning CTRIBMUN_INJECTED);
 * - the municipality has breakdowns but also the service without one: a sent value that exists wins; none → none;
 * - the municipality has no breakdown for the service: a sent value is ignored (warning CTRIBMUN_IGNORED);
 * - a sent value the municipality does not have is refused (E0314), with the valid ones;
 * - parametrisation unknown: the sent value is kept as is (the government decides).
 */
export function decideMunicipalBreakdown(input: BreakdownDecisionInput): BreakdownDecision {
  const { cTribNac, municipio, params } = input;
  const sent = input.sent && input.sent.length > 0 ? input.sent : null;
  let national: string | null = sent;
  if (sent && !CTRIBMUN_PATTERN.test(sent)) {
    if (!/^\d{7}$/.test(sent)) {
      return { ok: false, field: FIELD, governmentCode: null, message: '3 digits (7 for the capital that uses them)' };
    }
    const split = splitSevenDigitCode(sent, cTribNac, municipio ?? '');
    if (!split.ok) return { ok: false, field: FIELD, governmentCode: null, message: split.message };
    national = split.cTribMun;
  }
  if (!params || (params.semDesdobramento === null && params.desdobramentos.length === 0)) {
    return { ok: true, value: sent, cTribMun: national, rate: null, warnings: [] };
  }
  if (params.desdobramentos.length === 0) {
    const warnings = sent
      ? [
          warning(
            'CTRIBMUN_IGNORED',
            FIELD,
            `Municipality ${params.municipio} has no municipal breakdown for service ${cTribNac}; the value sent (${sent}) was ignored`,
          ),
        ]
      : [];
    return { ok: true, value: null, cTribMun: null, rate: params.semDesdobramento, warnings };
  }
  const allowed = params.desdobramentos.map((d) => d.codigo);
  if (national) {
    const found = params.desdobramentos.find((d) => d.codigo === national);
    if (!found) {
      return {
        ok: false,
        field: FIELD,
        governmentCode: 'E0314',
        message: `municipality ${params.municipio} has no breakdown ${national} for service ${cTribNac} at ${params.competencia}; valid: ${allowed.join(', ')} (E0314)`,
        allowed,
      };
    }
    return { ok: true, value: sent, cTribMun: national, rate: found.rate, warnings: [] };
  }
  if (!requiresBreakdown(params)) {
    return { ok: true, value: null, cTribMun: null, rate: params.semDesdobramento, warnings: [] };
  }
  const first = params.desdobramentos[0]!;
  return {
    ok: true,
    value: first.codigo,
    cTribMun: first.codigo,
    rate: first.rate,
    warnings: [
      warning(
        'CTRIBMUN_INJECTED',
        FIELD,
        `Municipality ${params.municipio} requires a municipal breakdown for service ${cTribNac}; the first one of its table (${first.codigo}) was used`,
      ),
    ],
  };
}

/**
 * The pAliq rules under which the DPS carries no rate and the government applies the rate the municipality
 * parametrised (Anexo I: E0617 provider not opted for the Simples, E0635 ME/EPP paying the ISS outside the Simples;
 * both with the municipality's convênio active).
 */
export const PARAMETRISED_RATE_RULES = ['E0617', 'E0635'] as const;

export type RateCheck =
  | { ok: true }
  | {
      ok: false;
      field: 'valores.aliquotaIss';
      governmentCode: string;
      expected: number;
      message: string;
      hint: string;
    };

/**
 * When the government will apply the municipality's parametrised rate (the DPS omits pAliq under E0617/E0635), a
 * different `aliquotaIss` would issue a note at a rate the caller did not mean: refused before a number is spent.
 */
export function checkParametrisedRate(input: {
  aliquota: number;
  pAliq: number | null;
  pAliqRule: string;
  rate: ParametrisedRate | null;
  serviceCode: string;
  municipio: string;
  competencia: string;
}): RateCheck {
  const { rate } = input;
  if (input.pAliq !== null || !rate || rate.aliquota === null) return { ok: true };
  const rule = PARAMETRISED_RATE_RULES.find((r) => r === input.pAliqRule);
  if (!rule) return { ok: true };
  if (Math.abs(rate.aliquota - input.aliquota) < 0.005) return { ok: true };
  const expected = Math.round(rate.aliquota * 100) / 100;
  return {
    ok: false,
    field: 'valores.aliquotaIss',
    governmentCode: rule,
    expected,
    message:
      `municipality ${input.municipio} parametrised ${expected}% for service ${input.serviceCode} at ${input.competencia}; ` +
      `the national system applies that rate and takes none from the DPS (${rule})`,
    hint: `send valores.aliquotaIss ${expected}`,
  };
}
