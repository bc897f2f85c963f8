import type { IbsCbsObligation } from '../fiscal-calendar.ts';
import {
  findClassificacaoTributaria,
  findCstIbsCbs,
  findFramings,
  findIndicadorOperacao,
  hasFramings,
  type IbsCbsFraming,
  isKnownNbs,
} from '../ibscbs.ts';
import type { ProjectFiscalProfile } from '../project-profile.ts';
import { type Warning, warning } from '../warnings.ts';
import { clean } from './common.ts';
import type { Checked, FieldError, NormalizedIbsCbs, NormalizedParty, TribIssqn } from './normalized.ts';
import { normalizeParty, type PartyInput } from './parties.ts';
import type { IbsCbsInput, InvoiceRequest } from './request-schema.ts';

/** The IBS/CBS group of the tax reform: framing (NBS + cIndOp + cClassTrib + CST) and the operation details. */

/** Reads one IBS/CBS field from a group with its aliases; conflicting alias values are errors. */
function readAliased<T>(
  group: IbsCbsInput | undefined,
  path: string,
  names: (keyof IbsCbsInput)[],
  errors: FieldError[],
): { value: T; field: string } | null {
  if (!group) return null;
  let found: { value: T; field: string } | null = null;
  for (const name of names) {
    const value = group[name] as T | undefined;
    if (value === undefined || value === null || value === '') continue;
    if (!found) found = { value, field: `${path}.${String(name)}` };
    else if (String(found.value) !== String(value)) {
      errors.push({
        field: `${path}.${String(name)}`,
        message: `conflicts with ${found.field} (${String(found.value)})`,
      });
    }
  }
  return found;
}

interface FixedCode {
  value: string;
  field: string;
  /** Precedence rank: 0 valores.ibscbs, 1 servico.ibscbs, 2 servico.nbs, 3 project. */
  rank: number;
}

export type IbsResolution =
  | { kind: 'none'; nbs: string | null }
  | { kind: 'resolved'; value: NormalizedIbsCbs; nbs: string }
  | { kind: 'ambiguous'; combinations: IbsCbsFraming[]; nbs: null }
  | { kind: 'invalid'; combinations: IbsCbsFraming[]; nbs: null };

export interface IbsCbsContext {
  /** LC 116 subitem `II.SS` of the service code; null when the code is unknown. */
  subitem: string | null;
  tribISSQN: TribIssqn;
  /** Whether the provider must declare the group for this competência (domain/fiscal-calendar.ts). */
  obligation: IbsCbsObligation;
}

/**
 * Resolves the IBS/CBS framing (spec 2.7): precedence valores.ibscbs, servico.ibscbs, project defaults, Anexo VIII.
 * Any datum given (request or project) makes the framing resolve (several → `ambiguous`, never picked); with no
 * datum at all, a provider the fiscal calendar does not oblige gets no group (warning IBSCBS_GROUP_OMITTED).
 */
export function resolveIbsCbs(
  body: InvoiceRequest,
  project: ProjectFiscalProfile,
  context: IbsCbsContext,
): Checked<IbsResolution> {
  const { subitem, tribISSQN, obligation } = context;
  const errors: FieldError[] = [];
  const warnings: Warning[] = [];
  const out = (value: IbsResolution): Checked<IbsResolution> => ({ value, errors, warnings });
  const groups: [IbsCbsInput | undefined, string][] = [
    [body.valores?.ibscbs, 'valores.ibscbs'],
    [body.servico?.ibscbs, 'servico.ibscbs'],
  ];
  const read = <T>(names: (keyof IbsCbsInput)[]) =>
    groups.map(([g, p], rank) => ({ found: readAliased<T>(g, p, names, errors), rank }));

  const collect = (
    names: (keyof IbsCbsInput)[],
    extra: [string | null, string, number][],
    pattern: RegExp,
    what: string,
  ): FixedCode[] => {
    const out: FixedCode[] = [];
    for (const { found, rank } of read<string>(names)) {
      if (found) out.push({ value: String(found.value), field: found.field, rank });
    }
    for (const [value, field, rank] of extra) if (value) out.push({ value, field, rank });
    for (const c of out) {
      if (!pattern.test(c.value)) errors.push({ field: c.field, message: `${what}` });
    }
    return out;
  };
  const nbsAll = collect(
    ['nbs', 'codigoNbs'],
    [
      [clean(body.servico?.nbs), 'servico.nbs', 2],
      [clean(project.defaultNbs), 'project.defaultNbs', 3],
    ],
    /^\d{9}$/,
    'NBS of 9 digits',
  );
  const opAll = collect(
    ['indicadorOperacao', 'cIndOp', 'indOp'],
    [[clean(project.defaultIndicadorOperacao), 'project.defaultIndicadorOperacao', 3]],
    /^\d{6}$/,
    'cIndOp of 6 digits',
  );
  const ctAll = collect(
    ['classificacaoTributaria', 'cClassTrib'],
    [[clean(project.defaultClassificacaoTributaria), 'project.defaultClassificacaoTributaria', 3]],
    /^\d{6}$/,
    'cClassTrib of 6 digits',
  );
  const cstAll = collect(
    ['cst', 'cstIbscbs'],
    [[clean(project.defaultCstIbscbs), 'project.defaultCstIbscbs', 3]],
    /^\d{3}$/,
    'CST of 3 digits',
  );
  const nbs = nbsAll[0];
  // The project defaults describe the domestic operation: they do not frame an export.
  const forExport = (list: FixedCode[]) => (tribISSQN === 3 ? list.filter((c) => c.rank < 3) : list);
  const op = forExport(opAll)[0];
  const ct = forExport(ctAll)[0];
  const cst = forExport(cstAll)[0];
  if (tribISSQN === 3 && [...opAll, ...ctAll, ...cstAll].some((c) => c.rank === 3)) {
    warnings.push(
      warning(
        'PROJECT_DEFAULT_IGNORED',
        'valores.ibscbs',
        'the project IBS/CBS defaults (cIndOp, cClassTrib, CST) describe the domestic operation: not applied to an export',
      ),
    );
  }
  // Codes must exist in their own tables.
  if (nbs && /^\d{9}$/.test(nbs.value) && !isKnownNbs(nbs.value)) {
    errors.push({ field: nbs.field, message: `${nbs.value} is not an NBS 2.0 code (E0316)` });
  }
  if (op && /^\d{6}$/.test(op.value) && !findIndicadorOperacao(op.value)) {
    errors.push({ field: op.field, message: `${op.value} is not in the cIndOp table (Anexo C)` });
  }
  if (ct && /^\d{6}$/.test(ct.value) && !findClassificacaoTributaria(ct.value)) {
    errors.push({ field: ct.field, message: `${ct.value} is not a cClassTrib valid for NFS-e` });
  }
  if (cst && /^\d{3}$/.test(cst.value) && !findCstIbsCbs(cst.value)) {
    errors.push({ field: cst.field, message: `${cst.value} is not an IBS/CBS CST` });
  }

  // Other fields.
  const finalRaw = read<boolean | string | number>(['consumidorFinal', 'indFinal']).find((r) => r.found)?.found;
  const consumidorFinal = finalRaw ? finalRaw.value === true || String(finalRaw.value) === '1' : false;
  if (finalRaw && !['true', 'false', '0', '1'].includes(String(finalRaw.value))) {
    errors.push({ field: finalRaw.field, message: 'true/false or 0/1' });
  }
  const destRaw = read<string | number>(['destinatarioPrincipal', 'indDest']).find((r) => r.found)?.found;
  const indDest = destRaw && String(destRaw.value) === '1' ? 1 : 0;
  if (destRaw && !['0', '1'].includes(String(destRaw.value))) errors.push({ field: destRaw.field, message: '0 or 1' });
  const operRaw = read<string | number>(['tipoOperacao', 'tpOper']).find((r) => r.found)?.found;
  const tipoOperacao = operRaw ? Number(operRaw.value) : null;
  if (operRaw && !(Number.isInteger(tipoOperacao) && tipoOperacao! >= 1 && tipoOperacao! <= 5)) {
    errors.push({ field: operRaw.field, message: '1 to 5' });
  }
  const enteRaw = read<string | number>(['tipoEnteGovernamental', 'enteGovernamental', 'tpEnteGov']).find(
    (r) => r.found,
  )?.found;
  const ente = enteRaw ? Number(enteRaw.value) : null;
  if (enteRaw && ![1, 2, 3, 4, 9].includes(ente!)) errors.push({ field: enteRaw.field, message: '1, 2, 3, 4 or 9' });
  let destinatario: NormalizedParty | null = null;
  const destGroup = groups.find(([g]) => g?.destinatario);
  if (destGroup) {
    const dest = normalizeParty(destGroup[0]!.destinatario as PartyInput, `${destGroup[1]}.destinatario`);
    errors.push(...dest.errors);
    warnings.push(...dest.warnings);
    destinatario = dest.value;
  }
  if (indDest === 1 && !destGroup) {
    errors.push({
      field: destRaw!.field.replace(/\.[^.]+$/, '.destinatario'),
      message: 'required when the recipient is not the taker (destinatarioPrincipal 1)',
    });
  }
  const anyDetail = finalRaw || destRaw || operRaw || enteRaw || destGroup;
  if (errors.length > 0) return out({ kind: 'invalid', combinations: subitem ? findFramings(subitem) : [], nbs: null });

  // Nothing given anywhere (request or project): the fiscal calendar decides whether the group is due.
  // (servico.nbs alone is a datum of the service, which some engines need, not of either IBS/CBS group)
  const anyDatum =
    anyDetail || nbsAll.some((c) => c.rank !== 2) || opAll.length > 0 || ctAll.length > 0 || cstAll.length > 0;
  if (!anyDatum && !obligation.obliged) {
    warnings.push(
      warning(
        'IBSCBS_GROUP_OMITTED',
        'valores.ibscbs',
        `IBS/CBS group omitted: no IBS/CBS data was sent and the provider is not obliged to declare it for this competência (${obligation.row?.rule ?? 'fiscal calendar'}; ${obligation.row?.source ?? ''})`,
      ),
    );
    return out({ kind: 'none', nbs: nbs?.value ?? null });
  }
  // Project defaults fill what the request did not fix: told back.
  for (const code of [nbs, op, ct, cst]) {
    if (code && code.rank === 3) {
      warnings.push(
        warning('PROJECT_DEFAULT_APPLIED', code.field, `${code.field} ${code.value} applied (IBS/CBS framing)`),
      );
    }
  }

  const finish = (framing: IbsCbsFraming, sources: { nbs: string; op: string; ct: string }): IbsResolution => {
    const classification = findClassificacaoTributaria(framing.classificacaoTributaria)!;
    let cstValue = classification.cst;
    let cstSource = `table cClassTrib ${framing.classificacaoTributaria}`;
    if (cst && cst.value !== classification.cst) {
      if (cst.rank < 3 || sources.ct.startsWith('project')) {
        errors.push({
          field: cst.field,
          message: `cClassTrib ${framing.classificacaoTributaria} belongs to CST ${classification.cst}, not ${cst.value}`,
        });
        return { kind: 'invalid', combinations: subitem ? findFramings(subitem) : [], nbs: null };
      }
      warnings.push(
        warning(
          'PROJECT_DEFAULT_IGNORED',
          cst.field,
          `project.defaultCstIbscbs ${cst.value} ignored: cClassTrib ${framing.classificacaoTributaria} (${sources.ct}) belongs to CST ${classification.cst}`,
        ),
      );
    } else if (cst) {
      cstValue = cst.value;
      cstSource = cst.field;
    }
    let tipoEnteGovernamental: NormalizedIbsCbs['tipoEnteGovernamental'] = null;
    if (ente === 9) {
      warnings.push(
        warning(
          'TIPO_ENTE_GOVERNAMENTAL_NOT_EXPRESSIBLE',
          enteRaw!.field,
          'tipoEnteGovernamental 9 (other) is not in the national XSD (tpEnteGov 1-4): omitted from the DPS',
        ),
      );
    } else if (ente) tipoEnteGovernamental = ente as 1 | 2 | 3 | 4;
    return {
      kind: 'resolved',
      nbs: framing.nbs,
      value: {
        ...framing,
        cst: cstValue,
        consumidorFinal,
        indDest,
        destinatario,
        tipoOperacao: tipoOperacao as NormalizedIbsCbs['tipoOperacao'],
        tipoEnteGovernamental,
        tipoEnteGovernamentalOutro: ente === 9,
        sources: {
          nbs: sources.nbs,
          indicadorOperacao: sources.op,
          classificacaoTributaria: sources.ct,
          cst: cstSource,
        },
      },
    };
  };

  const covered = subitem !== null && tribISSQN !== 3 && hasFramings(subitem);
  if (!covered) {
    // Export operations (the annex only lists acquirers in Brazil) and items the annex does not cover: the framing
    // cannot be checked against the table, only code by code, and nothing is filled in automatically.
    if (!op && !ct) {
      if (anyDetail || nbs?.rank === 0 || nbs?.rank === 1) {
        errors.push({
          field: 'valores.ibscbs.indicadorOperacao',
          message: 'the IBS/CBS framing cannot be derived here: send indicadorOperacao and classificacaoTributaria',
        });
        return out({ kind: 'invalid', combinations: [], nbs: null });
      }
      warnings.push(
        warning(
          'IBSCBS_GROUP_OMITTED',
          'valores.ibscbs',
          tribISSQN === 3
            ? 'IBS/CBS group omitted: export without an explicit framing (Anexo VIII only frames acquirers in Brazil)'
            : `IBS/CBS group omitted: item ${subitem} is not in Anexo VIII and no framing was given`,
        ),
      );
      return out({ kind: 'none', nbs: nbs?.value ?? null });
    }
    const missing: string[] = [];
    if (!nbs) missing.push('servico.nbs');
    if (!op) missing.push('valores.ibscbs.indicadorOperacao');
    if (!ct) missing.push('valores.ibscbs.classificacaoTributaria');
    for (const field of missing) {
      errors.push({ field, message: 'required to declare IBS/CBS without a framing from Anexo VIII' });
    }
    if (missing.length > 0) return out({ kind: 'invalid', combinations: [], nbs: null });
    return out(
      finish(
        { nbs: nbs!.value, indicadorOperacao: op!.value, classificacaoTributaria: ct!.value },
        { nbs: nbs!.field, op: op!.field, ct: ct!.field },
      ),
    );
  }

  const all = findFramings(subitem);
  // Apply the fixed codes from the highest precedence down; the first one that leaves no framing is the culprit.
  const fixed = [
    ...(nbs ? [{ ...nbs, key: 'nbs' as const }] : []),
    ...(op ? [{ ...op, key: 'indicadorOperacao' as const }] : []),
    ...(ct ? [{ ...ct, key: 'classificacaoTributaria' as const }] : []),
  ].sort((a, b) => a.rank - b.rank);
  let candidates = all;
  const applied: string[] = [];
  for (const f of fixed) {
    const next = candidates.filter((c) => c[f.key] === f.value);
    if (next.length === 0) {
      const others = applied;
      errors.push({
        field: f.field,
        message:
          `${f.value} is not a valid Anexo VIII framing of item ${subitem}` +
          (others.length > 0 ? ` together with ${others.join(', ')}` : ''),
      });
      return out({ kind: 'invalid', combinations: candidates, nbs: null });
    }
    applied.push(`${f.field} ${f.value}`);
    candidates = next;
  }
  if (candidates.length > 1) return out({ kind: 'ambiguous', combinations: candidates, nbs: null });
  const framing = candidates[0];
  return out(
    finish(framing, {
      nbs: nbs?.field ?? 'table',
      op: op?.field ?? 'table',
      ct: ct?.field ?? 'table',
    }),
  );
}
