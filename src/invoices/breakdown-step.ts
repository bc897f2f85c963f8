import type { AppContext } from '../context.ts';
import type { NormalizedInvoice } from '../domain/invoice-request.ts';
import {
  checkParametrisedRate,
  decideMunicipalBreakdown,
  SEVEN_DIGIT_CAPITAL,
  adnServiceCode,
} from '../domain/municipal-breakdowns.ts';
import type { ProjectFiscalProfile } from '../domain/project-profile.ts';
import type { Warning } from '../domain/warnings.ts';
import { lookupServiceParameters, type ParametersLookup } from './municipal-parameters.ts';

/**
 * The municipal step of an emission, run by POST /emitir and by each item of /emitir/batch after the request is
 * checked and before it is accepted (so a refusal spends no number and no credit):
 *   1. the parametrisation of the service in the municipality of ISS incidence (cache / ADN, ./municipal-parameters.ts);
 *   2. the cTribMun decision (domain/municipal-breakdowns.ts): a breakdown injected, a sent one kept or ignored, an
 *      unknown one refused (E0314); the request is rewritten accordingly, so the stored request, the issue job and
 *      the DPS all carry the same value;
 *   3. the parametrised ISS rate: when the national system will apply it (no pAliq, E0617/E0635), a different
 *      `valores.aliquotaIss` is refused.
 * When the ADN cannot be asked (no certificate, unreachable) and nothing is cached, the request goes on unchanged:
 * the government applies its own rules (logged).
 */

export type BreakdownStepResult =
  | { ok: true; request: Record<string, unknown>; changed: boolean; warnings: Warning[] }
  | {
      ok: false;
      code: 'MUNICIPAL_BREAKDOWN_INVALID' | 'ISS_RATE_MISMATCH';
      field: string;
      message: string;
      extras: Record<string, unknown>;
    };

export async function applyMunicipalBreakdown(
  ctx: AppContext,
  input: {
    projectId: string;
    project: ProjectFiscalProfile;
    invoice: NormalizedInvoice;
    request: Record<string, unknown>;
    /** lookups shared by the items of one request (a batch asks once per municipality, service and month) */
    memo?: Map<string, Promise<ParametersLookup>>;
  },
): Promise<BreakdownStepResult> {
  const { invoice, project } = input;
  const servico = (input.request.servico ?? {}) as Record<string, unknown>;
  const sentRaw = servico.codigoTributacaoMunicipal;
  const sent = typeof sentRaw === 'string' && sentRaw.trim() ? sentRaw.trim() : null;
  const municipio = invoice.servico.municipioIncidencia;
  const taxable = invoice.iss.tribISSQN === 1 && !!municipio;

  let lookup: ParametersLookup | null = null;
  if (taxable) {
    const query = {
      projectId: input.projectId,
      ambiente: project.ambiente,
      municipio: municipio!,
      cTribNac: invoice.servico.cTribNac,
      competencia: invoice.competencia,
    };
    const key = `${query.municipio}:${query.cTribNac}:${query.competencia}`;
    let pending = input.memo?.get(key);
    if (!pending) {
      pending = lookupServiceParameters(ctx, query);
      input.memo?.set(key, pending);
    }
    lookup = await pending;
    if (lookup.kind === 'unavailable') {
      ctx.logger.warn(
        { municipio, cTribNac: invoice.servico.cTribNac, code: lookup.code, reason: lookup.reason },
        'municipal parametrisation unavailable; cTribMun and rate left to the government',
      );
    }
  }
  const params = lookup?.kind === 'ok' ? lookup.params : null;
  const decision = decideMunicipalBreakdown({
    sent,
    cTribNac: invoice.servico.cTribNac,
    // the 7-digit code is read against the municipality of incidence, else the provider's (not taxable here)
    municipio: municipio ?? project.codigoMunicipio ?? null,
    params,
  });
  if (!decision.ok) {
    return {
      ok: false,
      code: 'MUNICIPAL_BREAKDOWN_INVALID',
      field: decision.field,
      message: decision.message,
      extras: {
        ...(decision.governmentCode ? { governmentCode: decision.governmentCode } : {}),
        ...(decision.allowed ? { allowed: decision.allowed } : {}),
        ...(!decision.governmentCode && sent && /^\d{7}$/.test(sent)
          ? { hint: `7 digits are for ${SEVEN_DIGIT_CAPITAL.name} (${SEVEN_DIGIT_CAPITAL.ibge}) only` }
          : {}),
      },
    };
  }

  if (params) {
    const rate = checkParametrisedRate({
      aliquota: invoice.iss.aliquota,
      pAliq: invoice.iss.pAliq,
      pAliqRule: invoice.iss.pAliqRule,
      rate: decision.rate,
      serviceCode: adnServiceCode(invoice.servico.cTribNac, decision.cTribMun ?? '000'),
      municipio: params.municipio,
      competencia: params.competencia,
    });
    if (!rate.ok) {
      return {
        ok: false,
        code: 'ISS_RATE_MISMATCH',
        field: rate.field,
        message: rate.message,
        extras: { governmentCode: rate.governmentCode, expectedRate: rate.expected, hint: rate.hint },
      };
    }
  }

  const changed = (decision.value ?? null) !== sent;
  if (!changed) return { ok: true, request: input.request, changed: false, warnings: decision.warnings };
  const request = structuredClone(input.request);
  const nextServico = { ...((request.servico ?? {}) as Record<string, unknown>) };
  if (decision.value === null) delete nextServico.codigoTributacaoMunicipal;
  else nextServico.codigoTributacaoMunicipal = decision.value;
  request.servico = nextServico;
  return { ok: true, request, changed: true, warnings: decision.warnings };
}
