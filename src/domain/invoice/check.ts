import { findCountry } from '../countries.ts';
import { ibsCbsObligation } from '../fiscal-calendar.ts';
import { findClassificacaoTributaria, type IbsCbsFraming } from '../ibscbs.ts';
import { findMunicipality } from '../municipalities.ts';
import type { ProjectFiscalProfile } from '../project-profile.ts';
import {
  findServiceCode,
  NO_ISS_ICMS_INCIDENCE,
  normalizeServiceCode,
  RENTAL_OF_MOVABLE_GOODS,
} from '../service-codes.ts';
import { cnpjRoot } from '../tax-ids.ts';
import { type Warning, warning } from '../warnings.ts';
import { clean, firstDefined, hasAtMostTwoDecimals, monthInBrasilia, roundMoney } from './common.ts';
import { resolveApproximateTaxes, resolveFederalTaxes } from './federal.ts';
import { resolveIbsCbs } from './ibscbs.ts';
import { checkIssRate, decideIssRate, resolveRegime } from './iss.ts';
import {
  type Checked,
  type FieldError,
  INVOICE_ERROR_CODES,
  type InvoiceCheckResult,
  type LocalPrestacao,
  type TribIssqn,
} from './normalized.ts';
import { normalizeParty } from './parties.ts';
import { type InvoiceRequest, MAX_MONEY } from './request-schema.ts';
import { normalizeEvento, normalizeExport, normalizeObra } from './service-groups.ts';

/** The orchestration of the rules: checkInvoiceRequest, from the request body to the normalised invoice. */

export interface CheckInvoiceOptions {
  /** The current instant (default `new Date()`): default competencia and the future-competencia check. */
  now?: Date;
}

/**
 * Validates an issue request against everything the schema cannot express and resolves it, with the project's
 * fiscal profile, into the {@link NormalizedInvoice} the engines build from. Errors carry the dotted path of the
 * body field (`tomador.cnpj`, `valores.ibscbs.cst`) or of the project field (`project.defaultNbs`).
 */
export function checkInvoiceRequest(
  body: InvoiceRequest,
  project: ProjectFiscalProfile,
  options: CheckInvoiceOptions = {},
): InvoiceCheckResult {
  const now = options.now ?? new Date();
  const warnings: Warning[] = [];
  const errors: FieldError[] = [];
  /** Takes a helper's result: its refusals and adjustments join the request's; its value is returned. */
  const take = <T>(checked: Checked<T>): T => {
    errors.push(...checked.errors);
    warnings.push(...checked.warnings);
    return checked.value;
  };

  // --- project --------------------------------------------------------------------------------------------------
  const projectErrors: FieldError[] = [];
  if (!project.codigoMunicipio || !findMunicipality(project.codigoMunicipio)) {
    projectErrors.push({
      field: 'project.codigoMunicipio',
      message: 'the project needs a valid IBGE municipality code',
    });
  }
  if (!project.regimeTributario) {
    projectErrors.push({
      field: 'project.regimeTributario',
      message: 'the project needs its tax regime (1, 2, 3 or 3e)',
    });
  }
  if (projectErrors.length > 0)
    return { ok: false, code: INVOICE_ERROR_CODES.projectIncomplete, errors: projectErrors };
  const providerMunicipality = project.codigoMunicipio!;
  const regime = take(resolveRegime(project.regimeTributario!, project.regimeIss));
  const servico = body.servico ?? ({} as InvoiceRequest['servico']);
  const valores = body.valores ?? ({} as InvoiceRequest['valores']);

  // --- taker ----------------------------------------------------------------------------------------------------
  const tomador = body.tomador ? take(normalizeParty(body.tomador, 'tomador')) : null;
  if (!body.tomador) errors.push({ field: 'tomador', message: 'required' });
  if (tomador?.id.kind === 'cnpj' && cnpjRoot(tomador.id.cnpj) === cnpjRoot(project.cnpj)) {
    errors.push({ field: 'tomador.cnpj', message: 'the taker cannot be the provider itself (same CNPJ root, E0202)' });
  }

  // --- service code -----------------------------------------------------------------------------------------------
  const codeSource = firstDefined<string>(
    [clean(servico.codigo), 'servico.codigo'],
    [clean(project.codigoTributacao), 'project.codigoTributacao'],
  );
  let serviceCode: ReturnType<typeof findServiceCode>;
  if (!codeSource) {
    errors.push({ field: 'servico.codigo', message: 'required: the project has no default codigoTributacao' });
  } else {
    const code = normalizeServiceCode(codeSource.value);
    if (!code) errors.push({ field: codeSource.field, message: 'cTribNac must have 6 digits (IISSDD)' });
    else {
      if (codeSource.field === 'project.codigoTributacao') {
        warnings.push(
          warning(
            'PROJECT_DEFAULT_APPLIED',
            'servico.codigo',
            `servico.codigo not sent: the project code ${code} was used`,
          ),
        );
      } else if (code !== codeSource.value) {
        warnings.push(
          warning(
            'SERVICE_CODE_NORMALIZED',
            'servico.codigo',
            code === RENTAL_OF_MOVABLE_GOODS
              ? `'${codeSource.value}' normalised to ${code} (rental of movable goods, spec 4.7.2)`
              : `'${codeSource.value}' normalised to ${code}`,
          ),
        );
      }
      serviceCode = findServiceCode(code);
      if (!serviceCode)
        errors.push({ field: codeSource.field, message: `${code} is not in the national service list` });
    }
  }
  const descricao = clean(servico.descricao);
  if (!descricao) errors.push({ field: 'servico.descricao', message: 'required' });
  else if (!/[0-9A-Za-z\u00C0-\u00FF]/.test(descricao)) {
    // the layout's character set is Latin-1: a text of emoji or other scripts would print as nothing
    errors.push({ field: 'servico.descricao', message: 'must contain letters or digits of the Latin alphabet' });
  }
  const cTribMun = clean(servico.codigoTributacaoMunicipal);
  if (cTribMun && !/^\d{3}(\d{4})?$/.test(cTribMun)) {
    errors.push({ field: 'servico.codigoTributacaoMunicipal', message: '3 digits (7 for the capital that uses them)' });
  }
  const codigoServico = clean(servico.codigoServico) ?? clean(project.codigoServicoSp);
  if (clean(servico.codigoServico) && !/^\d{4,5}$/.test(codigoServico!)) {
    errors.push({ field: 'servico.codigoServico', message: '4 or 5 digits' });
  }
  const info = clean(servico.informacoesComplementares);
  if (info && info.length > 2000) {
    errors.push({ field: 'servico.informacoesComplementares', message: 'max 2000 characters' });
  }
  const pedidoCompra = clean(servico.pedidoCompra);
  if (pedidoCompra && pedidoCompra.length > 60)
    errors.push({ field: 'servico.pedidoCompra', message: 'max 60 characters' });
  const docRef = clean(servico.documentoReferencia);
  if (docRef && docRef.length > 255) {
    errors.push({ field: 'servico.documentoReferencia', message: 'max 255 characters' });
  }
  const cnae = clean(servico.cnae);
  if (cnae && !/^\d{7,9}$/.test(cnae)) errors.push({ field: 'servico.cnae', message: '7 to 9 digits' });

  // --- place of service -------------------------------------------------------------------------------------------
  let localPrestacao: LocalPrestacao = { kind: 'municipio', codigoMunicipio: providerMunicipality };
  const local = clean(servico.localPrestacao);
  if (local) {
    if (/^\d{7}$/.test(local)) {
      if (findMunicipality(local)) localPrestacao = { kind: 'municipio', codigoMunicipio: local };
      else errors.push({ field: 'servico.localPrestacao', message: `unknown IBGE municipality '${local}'` });
    } else if (/^[A-Za-z]{2}$/.test(local)) {
      const pais = local.toUpperCase();
      if (pais === 'BR') {
        errors.push({ field: 'servico.localPrestacao', message: 'use the IBGE code of the municipality for Brazil' });
      } else if (!findCountry(pais)) {
        errors.push({ field: 'servico.localPrestacao', message: `unknown ISO2 country code '${pais}'` });
      } else localPrestacao = { kind: 'pais', pais };
    } else {
      errors.push({ field: 'servico.localPrestacao', message: '7-digit IBGE code, or ISO2 country code abroad' });
    }
  }

  // --- amounts ----------------------------------------------------------------------------------------------------
  const total = typeof valores.total === 'number' ? valores.total : Number.NaN;
  if (!(total > 0) || total > MAX_MONEY) {
    errors.push({ field: 'valores.total', message: 'must be greater than 0' });
  } else if (!hasAtMostTwoDecimals(total)) {
    errors.push({ field: 'valores.total', message: 'at most 2 decimal places' });
  }
  const aliquota = typeof valores.aliquotaIss === 'number' ? valores.aliquotaIss : Number.NaN;

  // --- export -----------------------------------------------------------------------------------------------------
  const exportacao = valores.exportacao ? take(normalizeExport(valores.exportacao)) : null;
  if (localPrestacao.kind === 'pais' && !valores.exportacao) {
    errors.push({ field: 'valores.exportacao', message: 'required when the service is performed abroad' });
  }

  // --- ISS taxation -----------------------------------------------------------------------------------------------
  let tribISSQN: TribIssqn;
  if (valores.tribISSQN !== undefined) {
    tribISSQN = valores.tribISSQN;
    if (![1, 2, 3, 4].includes(tribISSQN)) {
      errors.push({ field: 'valores.tribISSQN', message: '1, 2, 3 or 4' });
      tribISSQN = 1;
    }
  } else if (serviceCode?.code === NO_ISS_ICMS_INCIDENCE || serviceCode?.code === RENTAL_OF_MOVABLE_GOODS) {
    tribISSQN = 4;
  } else if (valores.exportacao) tribISSQN = 3;
  else tribISSQN = project.tributacaoIss ?? 1;
  if (serviceCode?.code === NO_ISS_ICMS_INCIDENCE && tribISSQN !== 4) {
    errors.push({
      field: 'valores.tribISSQN',
      message: 'code 990101 has no ISS incidence: tribISSQN must be 4 (E0532)',
    });
  }
  if (tribISSQN === 3 && !valores.exportacao) {
    errors.push({ field: 'valores.exportacao', message: 'required for an export (tribISSQN 3)' });
  }
  if (tribISSQN === 3 && exportacao && !exportacao.paisResultado) {
    errors.push({ field: 'valores.exportacao.paisResultado', message: 'required for an export (tribISSQN 3)' });
  }
  const tipoImunidade = valores.tipoImunidade ?? null;
  if (tipoImunidade !== null && tribISSQN !== 2) {
    errors.push({ field: 'valores.tipoImunidade', message: 'only for immunity (tribISSQN 2)' });
  }

  const retido = valores.issRetido === true;
  if (retido) {
    if (tribISSQN !== 1) {
      errors.push({
        field: 'valores.issRetido',
        message: 'immune, export and no-incidence operations do not admit withholding (E0580)',
      });
    }
    if (regime.mei)
      errors.push({ field: 'valores.issRetido', message: 'a MEI provider has no ISS withholding (E0583)' });
    if (serviceCode?.code === '220101') {
      errors.push({ field: 'valores.issRetido', message: 'code 220101 does not admit withholding (E0596)' });
    }
    if (tomador && tomador.id.kind !== 'cnpj' && tomador.id.kind !== 'cpf') {
      errors.push({
        field: 'valores.issRetido',
        message: 'withholding needs a taker identified by CNPJ or CPF (E0204)',
      });
    }
  }

  // --- municipality of incidence and pAliq decision ------------------------------------------------------------------
  const incidencia = serviceCode?.incidence ?? null;
  let municipioIncidencia: string | null = null;
  if (tribISSQN === 1) {
    if (incidencia === 'LP') {
      municipioIncidencia = localPrestacao.kind === 'municipio' ? localPrestacao.codigoMunicipio : null;
    } else if (incidencia === 'ET') {
      municipioIncidencia = tomador?.endereco?.nacional ? tomador.endereco.codigoMunicipio : null;
    } else municipioIncidencia = providerMunicipality;
  }
  const iss = decideIssRate({ regime, tribISSQN, retido, municipioIncidencia });
  errors.push(...checkIssRate({ aliquota, tribISSQN, subitem: serviceCode?.subitem ?? null, regime, decision: iss }));

  // --- service groups -----------------------------------------------------------------------------------------------
  const obra = servico.obra ? take(normalizeObra(servico.obra)) : null;
  const evento = servico.evento ? take(normalizeEvento(servico.evento)) : null;

  // --- approximate taxes ----------------------------------------------------------------------------------------------
  const totaisTributos = take(resolveApproximateTaxes(valores, regime, project, total));

  // --- federal taxes --------------------------------------------------------------------------------------------------
  const federal = take(resolveFederalTaxes(valores, regime, project, total));

  // --- competencia ----------------------------------------------------------------------------------------------------
  const currentMonth = monthInBrasilia(now);
  const competencia = clean(body.competencia) ?? currentMonth;
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(competencia)) {
    errors.push({ field: 'competencia', message: 'YYYY-MM' });
  } else if (competencia > currentMonth) {
    errors.push({ field: 'competencia', message: 'cannot be a future month (E0015)' });
  } else if (competencia < '2000-01') errors.push({ field: 'competencia', message: 'too old' });

  const referencia = clean(body.referencia);

  // --- IBS/CBS --------------------------------------------------------------------------------------------------------
  const ibs = take(
    resolveIbsCbs(body, project, {
      subitem: serviceCode?.subitem ?? null,
      tribISSQN,
      obligation: ibsCbsObligation(
        regime.regimeTributario,
        /^\d{4}-\d{2}$/.test(competencia) ? competencia : currentMonth,
      ),
    }),
  );

  if (errors.length > 0 || !tomador || !serviceCode || !descricao) {
    const result: InvoiceCheckResult = { ok: false, code: INVOICE_ERROR_CODES.validation, errors };
    if (ibs.kind === 'invalid') result.details = { combinations: withCst(ibs.combinations) };
    return result;
  }
  if (ibs.kind === 'ambiguous') {
    return {
      ok: false,
      code: INVOICE_ERROR_CODES.ambiguous,
      errors: [
        {
          field: 'valores.ibscbs',
          message: `item ${serviceCode.subitem} has ${ibs.combinations.length} possible IBS/CBS framings: send nbs, indicadorOperacao and classificacaoTributaria (or configure the project defaults)`,
        },
      ],
      details: { combinations: withCst(ibs.combinations) },
    };
  }
  const ibscbs = ibs.kind === 'resolved' ? ibs.value : null;

  return {
    ok: true,
    value: {
      tomador,
      servico: {
        cTribNac: serviceCode.code,
        subitem: serviceCode.subitem,
        descricaoNacional: serviceCode.description,
        descricao,
        codigoTributacaoMunicipal: cTribMun,
        codigoServicoMunicipal: codigoServico,
        nbs: ibscbs?.nbs ?? ibs.nbs,
        cnae,
        localPrestacao,
        incidencia,
        municipioIncidencia,
        obra,
        evento,
        informacoesComplementares: info,
        pedidoCompra,
        documentoReferencia: docRef,
      },
      total: roundMoney(total),
      iss: {
        tribISSQN,
        tipoImunidade,
        retido,
        tpRetISSQN: retido ? 2 : 1,
        aliquota,
        pAliq: iss.declare ? aliquota : null,
        pAliqRule: iss.rule,
        municipioIncidenciaNoEmissorNacional: iss.active,
      },
      exportacao,
      federal,
      totaisTributos,
      ibscbs,
      regime,
      competencia,
      referencia,
    },
    warnings: dedupeWarnings(warnings),
  };
}

/** The combinations listed to the caller: {nbs, indicadorOperacao, classificacaoTributaria, cst} (CST of the class). */
function withCst(list: IbsCbsFraming[]): (IbsCbsFraming & { cst: string | null })[] {
  return list.map((f) => ({ ...f, cst: findClassificacaoTributaria(f.classificacaoTributaria)?.cst ?? null }));
}

/** One warning per code and field (a helper may report the same adjustment twice). */
function dedupeWarnings(list: Warning[]): Warning[] {
  const seen = new Set<string>();
  return list.filter((w) => {
    const key = `${w.code}|${w.field}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
