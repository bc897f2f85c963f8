import type { ProjectFiscalProfile } from '../project-profile.ts';
import { type Warning, warning } from '../warnings.ts';
import { clean, firstDefined, hasAtMostTwoDecimals, roundMoney } from './common.ts';
import type {
  ApproximateTaxes,
  Checked,
  FieldError,
  NormalizedFederalTaxes,
  NormalizedPisCofins,
  NormalizedRegime,
} from './normalized.ts';
import type { InvoiceRequest } from './request-schema.ts';

/** Federal taxes of the national DPS: approximate totals (Lei 12.741), PIS/COFINS and the federal retentions. */

/** Approximate taxes (Lei 12.741/2012): the amounts or percentages sent, else the Simples rate of the project. */
export function resolveApproximateTaxes(
  valores: InvoiceRequest['valores'],
  regime: NormalizedRegime,
  project: ProjectFiscalProfile,
  total: number,
): Checked<ApproximateTaxes> {
  const errors: FieldError[] = [];
  const done = (value: ApproximateTaxes): Checked<ApproximateTaxes> => ({ value, errors, warnings: [] });
  const raw = valores.totaisTributosAproximados;
  const path = 'valores.totaisTributosAproximados';
  if (raw) {
    const pct = [raw.percentualTributacaoFederal, raw.percentualTributacaoEstadual, raw.percentualTributacaoMunicipal];
    const val = [raw.valorTributacaoFederal, raw.valorTributacaoEstadual, raw.valorTributacaoMunicipal];
    const hasPct = pct.some((v) => v !== undefined);
    const hasVal = val.some((v) => v !== undefined);
    if (hasPct && hasVal) {
      errors.push({ field: path, message: 'send either percentages or amounts, not both' });
    } else if (hasPct) {
      const names = ['percentualTributacaoFederal', 'percentualTributacaoEstadual', 'percentualTributacaoMunicipal'];
      pct.forEach((v, i) => {
        if (v !== undefined && (!(v >= 0 && v <= 100) || !hasAtMostTwoDecimals(v))) {
          errors.push({ field: `${path}.${names[i]}`, message: 'between 0 and 100, at most 2 decimal places' });
        }
      });
      return done({ kind: 'percentuais', federal: pct[0] ?? 0, estadual: pct[1] ?? 0, municipal: pct[2] ?? 0 });
    } else if (hasVal) {
      const names = ['valorTributacaoFederal', 'valorTributacaoEstadual', 'valorTributacaoMunicipal'];
      val.forEach((v, i) => {
        if (v !== undefined && (!(v >= 0) || !hasAtMostTwoDecimals(v) || v > total)) {
          errors.push({
            field: `${path}.${names[i]}`,
            message: 'between 0 and the service total, at most 2 decimal places (E0702-E0704)',
          });
        }
      });
      return done({ kind: 'valores', federal: val[0] ?? 0, estadual: val[1] ?? 0, municipal: val[2] ?? 0 });
    }
  }
  if (regime.simples && project.aliquotaSimples !== null && project.aliquotaSimples !== undefined) {
    const rate = roundMoney(project.aliquotaSimples);
    if (rate >= 0 && rate < 100) return done({ kind: 'simples', percentual: rate });
  }
  return done({ kind: 'naoInformado' });
}

const PIS_COFINS_NOT_TAXED = new Set(['00', '08', '09']);

/**
 * The federal groups (regime 1 only): PIS/COFINS from the request or the project defaults, and the retentions.
 * For MEI and Simples they are ignored, and the response says so (FEDERAL_TAXES_IGNORED).
 */
export function resolveFederalTaxes(
  valores: InvoiceRequest['valores'],
  regime: NormalizedRegime,
  project: ProjectFiscalProfile,
  total: number,
): Checked<NormalizedFederalTaxes | null> {
  const errors: FieldError[] = [];
  const warnings: Warning[] = [];
  const done = (value: NormalizedFederalTaxes | null): Checked<NormalizedFederalTaxes | null> => ({
    value,
    errors,
    warnings,
  });
  const given = ['pisCofins', 'retencaoIrrf', 'retencaoCp', 'retencaoCsll'].filter(
    (k) => valores[k as keyof typeof valores] !== undefined,
  );
  if (regime.mei || regime.simples) {
    for (const key of given) {
      warnings.push(
        warning(
          'FEDERAL_TAXES_IGNORED',
          `valores.${key}`,
          `valores.${key} ignored: federal tax fields do not apply to a ${regime.mei ? 'MEI' : 'Simples Nacional'} provider`,
        ),
      );
    }
    return done(null);
  }
  const retention = (key: 'retencaoIrrf' | 'retencaoCp' | 'retencaoCsll'): number | null => {
    const v = valores[key];
    if (v === undefined) return null;
    if (!(v > 0) || !hasAtMostTwoDecimals(v) || (total > 0 && v >= total)) {
      errors.push({
        field: `valores.${key}`,
        message: 'greater than 0 and less than the service total, at most 2 decimal places (E0699-E0701)',
      });
      return null;
    }
    return roundMoney(v);
  };
  const retencaoIrrf = retention('retencaoIrrf');
  const retencaoCp = retention('retencaoCp');
  const retencaoCsll = retention('retencaoCsll');

  const req = valores.pisCofins;
  const path = 'valores.pisCofins';
  let pisCofins: NormalizedPisCofins | null = null;
  const cstSource = firstDefined<string>(
    [clean(req?.cst), `${path}.cst`],
    [clean(project.cstPisCofins), 'project.cstPisCofins'],
  );
  if (!cstSource) {
    if (req) errors.push({ field: `${path}.cst`, message: 'required: the project has no default cstPisCofins' });
  } else if (!/^\d{2}$/.test(cstSource.value)) {
    errors.push({ field: cstSource.field, message: 'CST of 2 digits' });
  } else {
    const cst = cstSource.value;
    const before = errors.length;
    const rate = (key: 'aliquotaPis' | 'aliquotaCofins', fallback: number | null): number | null => {
      const v = req?.[key] ?? fallback;
      if (v === undefined || v === null) return null;
      if (!(v >= 0 && v < 100) || !hasAtMostTwoDecimals(v)) {
        errors.push({
          field: req?.[key] !== undefined ? `${path}.${key}` : `project.${key}`,
          message: '0 to 99.99 (%)',
        });
        return null;
      }
      return v;
    };
    let baseCalculo: number | null = null;
    let aliquotaPis: number | null = null;
    let aliquotaCofins: number | null = null;
    let valorPis: number | null = null;
    let valorCofins: number | null = null;
    if (PIS_COFINS_NOT_TAXED.has(cst)) {
      if (req?.baseCalculo !== undefined) {
        errors.push({ field: `${path}.baseCalculo`, message: `not allowed with CST ${cst} (E0682)` });
      }
    } else {
      baseCalculo = req?.baseCalculo ?? total;
      if (!(baseCalculo > 0) || baseCalculo > total || !hasAtMostTwoDecimals(baseCalculo)) {
        errors.push({
          field: `${path}.baseCalculo`,
          message: 'greater than 0 and not above the service total (E0677/E0680)',
        });
      }
      aliquotaPis = rate('aliquotaPis', project.aliquotaPis);
      aliquotaCofins = rate('aliquotaCofins', project.aliquotaCofins);
      if (aliquotaPis === null && errors.length === before) {
        errors.push({ field: `${path}.aliquotaPis`, message: `required with CST ${cst} (E0684)` });
      }
      if (aliquotaCofins === null && errors.length === before) {
        errors.push({ field: `${path}.aliquotaCofins`, message: `required with CST ${cst} (E0690)` });
      }
      if ((cst === '04' || cst === '06') && (aliquotaPis || aliquotaCofins)) {
        errors.push({ field: `${path}.aliquotaPis`, message: `CST ${cst} requires zero PIS and COFINS rates (E0688)` });
      }
      const base = baseCalculo;
      valorPis = req?.valorPis ?? (aliquotaPis !== null ? roundMoney((base * aliquotaPis) / 100) : null);
      valorCofins = req?.valorCofins ?? (aliquotaCofins !== null ? roundMoney((base * aliquotaCofins) / 100) : null);
      for (const [key, v] of [
        ['valorPis', req?.valorPis],
        ['valorCofins', req?.valorCofins],
      ] as const) {
        if (v !== undefined && (!(v >= 0) || !hasAtMostTwoDecimals(v))) {
          errors.push({ field: `${path}.${key}`, message: 'not negative, at most 2 decimal places' });
        }
      }
    }
    const tipoRetencao = req?.tipoRetencao ?? project.tipoRetencaoPisCofins ?? 0;
    if (!Number.isInteger(tipoRetencao) || tipoRetencao < 0 || tipoRetencao > 9) {
      errors.push({
        field: req?.tipoRetencao !== undefined ? `${path}.tipoRetencao` : 'project.tipoRetencaoPisCofins',
        message: '0 to 9',
      });
    }
    if (errors.length === before) {
      pisCofins = {
        cst,
        baseCalculo: baseCalculo === null ? null : roundMoney(baseCalculo),
        aliquotaPis,
        aliquotaCofins,
        valorPis,
        valorCofins,
        tipoRetencao,
        source: cstSource.field.startsWith('project') ? 'project' : 'request',
      };
    }
  }
  if (pisCofins?.source === 'project') {
    warnings.push(
      warning(
        'PROJECT_DEFAULT_APPLIED',
        'valores.pisCofins',
        `PIS/COFINS declared from the project defaults (cstPisCofins ${pisCofins.cst})`,
      ),
    );
  }
  if (!pisCofins && retencaoIrrf === null && retencaoCp === null && retencaoCsll === null) return done(null);
  return done({ pisCofins, retencaoIrrf, retencaoCp, retencaoCsll });
}
