import type { RegimeTributario } from '../project-profile.ts';
import { isNationalEmitterMunicipality } from '../service-codes.ts';
import { type Warning, warning } from '../warnings.ts';
import { hasAtMostTwoDecimals } from './common.ts';
import type { Checked, FieldError, NormalizedRegime, TribIssqn } from './normalized.ts';

/** ISS: the provider's regime, whether the DPS declares pAliq (Anexo I E0595-E0640) and the statutory rate bounds. */

/** Statutory maximum ISS rate, % (LC 116/2003 art. 8, II; Sefin rejects a higher pAliq with E0595). */
export const ISS_MAX_RATE = 5;
/** Statutory minimum ISS rate, % (LC 116/2003 art. 8-A; Sefin rejects a lower effective rate with E0429/E1297). */
export const ISS_MIN_RATE = 2;
/** Subitems the minimum does not bind (LC 116/2003 art. 8-A §1, incl. by LC 157/2016): 7.02, 7.05 and 16.01. */
export const ISS_MIN_RATE_EXCEPTIONS: readonly string[] = ['07.02', '07.05', '16.01'];
/** Minimum rate a Simples ME/EPP declares with withholding (Anexo I E0621/E0628). */
export const SIMPLES_WITHHOLDING_MIN_RATE = 1.8;

export interface IssRateDecision {
  /** The DPS carries pAliq. */
  declare: boolean;
  /** pAliq is required (a positive rate must be sent). */
  required: boolean;
  minimum?: number;
  /** The Anexo I rule that decided. */
  rule: string;
  /** The incidence municipality is active in the national system. */
  active: boolean;
}

/** The provider's regime as the national layout declares it (opSimpNac, regApTribSN). */
export function resolveRegime(
  regimeTributario: RegimeTributario,
  regimeIss: 1 | 2 | 3 | null,
): Checked<NormalizedRegime> {
  const warnings: Warning[] = [];
  const simples = regimeTributario === '3' || regimeTributario === '3e';
  let regApTribSN: 1 | 2 | 3 | null = null;
  if (simples) {
    if (regimeIss) regApTribSN = regimeIss;
    else if (regimeTributario === '3e') {
      regApTribSN = 2;
      warnings.push(
        warning(
          'PROJECT_DEFAULT_APPLIED',
          'project.regimeIss',
          'regApTribSN 2 (ISS outside the DAS) assumed for a Simples provider above the sublimit (3e) without regimeIss',
        ),
      );
    } else regApTribSN = 1;
  }
  const value: NormalizedRegime = {
    regimeTributario,
    opSimpNac: regimeTributario === '1' ? 1 : regimeTributario === '2' ? 2 : 3,
    regApTribSN,
    regEspTrib: 0,
    mei: regimeTributario === '2',
    simples,
  };
  return { value, errors: [], warnings };
}

/**
 * Whether the national DPS declares pAliq, following the Anexo I rules E0600-E0640. "Active" (convênio ativo) is
 * approximated by the national-emitter adhesion list.
 */
export function decideIssRate(input: {
  regime: NormalizedRegime;
  tribISSQN: TribIssqn;
  retido: boolean;
  municipioIncidencia: string | null;
}): IssRateDecision {
  const { regime, tribISSQN, retido, municipioIncidencia } = input;
  const active = municipioIncidencia ? isNationalEmitterMunicipality(municipioIncidencia) : false;
  if (regime.mei) return { declare: false, required: false, rule: 'E0600', active };
  if (tribISSQN !== 1) return { declare: false, required: false, rule: 'E0602', active };
  if (regime.opSimpNac === 1) {
    return active
      ? { declare: false, required: false, rule: 'E0617', active }
      : { declare: true, required: true, rule: 'E0619', active };
  }
  if (regime.regApTribSN === 1) {
    if (retido)
      return {
        declare: true,
        required: true,
        minimum: SIMPLES_WITHHOLDING_MIN_RATE,
        rule: active ? 'E0621' : 'E0628',
        active,
      };
    return { declare: false, required: false, rule: active ? 'E0625' : 'E0631', active };
  }
  return active
    ? { declare: false, required: false, rule: 'E0635', active }
    : { declare: true, required: true, rule: 'E0640', active };
}

/**
 * The rate the caller sent, checked before a number is spent: the 0-5 range, cents, and, when the operation is
 * taxable (tribISSQN 1), the statutory bounds of LC 116/2003 (2 % minimum except subitems 7.02, 7.05, 16.01;
 * 5 % maximum) and the pAliq rules of Anexo I. MEI providers (ISS fixed in the DAS-MEI) and Simples ME/EPP
 * collecting the ISS in the DAS without withholding declare no rate: only the range applies to them.
 * Each refusal names the government's rejection code and how to correct the request.
 */
export function checkIssRate(input: {
  aliquota: number;
  tribISSQN: TribIssqn;
  subitem: string | null;
  regime: NormalizedRegime;
  decision: IssRateDecision;
}): FieldError[] {
  const { aliquota, tribISSQN, subitem, regime, decision } = input;
  const field = 'valores.aliquotaIss';
  if (!(aliquota >= 0)) return [{ field, message: 'required, a number of 0 to 5 (%)' }];
  if (aliquota > ISS_MAX_RATE) {
    return [
      {
        field,
        message: `${aliquota}% is above the statutory maximum ISS rate of ${ISS_MAX_RATE}% (LC 116/2003 art. 8, II; Sefin rejects it with E0595): send the municipality's rate, at most 5`,
      },
    ];
  }
  if (!hasAtMostTwoDecimals(aliquota)) return [{ field, message: 'at most 2 decimal places' }];
  if (tribISSQN !== 1) {
    return aliquota > 0
      ? [{ field, message: 'must be 0 for immunity, export or no incidence (tribISSQN 2, 3, 4)' }]
      : [];
  }
  if (regime.mei) return [];
  if (decision.required && aliquota <= 0) {
    return [
      {
        field,
        message: `the ISS rate must be declared here (${decision.rule}): send the municipality's rate for this service`,
      },
    ];
  }
  if (decision.minimum !== undefined && aliquota < decision.minimum) {
    return [
      {
        field,
        message: `minimum ${decision.minimum}% with withholding (${decision.rule}): send the rate of the Simples Nacional annex, at least ${decision.minimum}`,
      },
    ];
  }
  // Simples ME/EPP with the ISS in the DAS: the rate is the DAS share and is not declared without withholding.
  if (regime.simples && regime.regApTribSN === 1) return [];
  const exception = subitem !== null && ISS_MIN_RATE_EXCEPTIONS.includes(subitem);
  if (exception) {
    return aliquota > 0
      ? []
      : [
          {
            field,
            message: `the ISS rate must be greater than 0 for a taxable operation (tribISSQN 1) of subitem ${subitem}`,
          },
        ];
  }
  if (aliquota < ISS_MIN_RATE) {
    return [
      {
        field,
        message: `${aliquota}% is below the statutory minimum ISS rate of ${ISS_MIN_RATE}% (LC 116/2003 art. 8-A; Sefin rejects it with E0429/E1297; only subitems 7.02, 7.05 and 16.01 are exempt): send the municipality's rate, between 2 and 5, or tribISSQN 2/3/4 for immunity, export or no incidence`,
      },
    ];
  }
  return [];
}
