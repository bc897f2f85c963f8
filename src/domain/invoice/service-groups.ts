import { findCountry } from '../countries.ts';
import { clean, hasAtMostTwoDecimals, isValidDate, roundMoney } from './common.ts';
import type { Checked, FieldError, NormalizedEvento, NormalizedExport, NormalizedObra } from './normalized.ts';
import { normalizeAddress } from './parties.ts';
import type { InvoiceRequest } from './request-schema.ts';

/** The optional groups of the service: export (comExt), building work (obra), event (atvEvento). */

/** The export group (comExt) with its defaults and the cross-field rules of Anexo I (E0341-E0356). */
export function normalizeExport(
  raw: NonNullable<InvoiceRequest['valores']['exportacao']>,
): Checked<NormalizedExport | null> {
  const path = 'valores.exportacao';
  const errors: FieldError[] = [];
  if (raw.modoPrestacao === undefined) errors.push({ field: `${path}.modoPrestacao`, message: 'required (1 to 4)' });
  else if (![1, 2, 3, 4].includes(raw.modoPrestacao))
    errors.push({ field: `${path}.modoPrestacao`, message: '1 to 4' });
  const vinculo = raw.vinculoPartes ?? 0;
  if (![0, 1, 2, 3, 4, 5, 6].includes(vinculo)) errors.push({ field: `${path}.vinculoPartes`, message: '0 to 6' });
  const moeda = clean(raw.codigoMoeda);
  if (!moeda) errors.push({ field: `${path}.codigoMoeda`, message: 'required: 3-digit central-bank currency code' });
  else if (!/^\d{3}$/.test(moeda)) errors.push({ field: `${path}.codigoMoeda`, message: '3 digits' });
  const valorMoeda = raw.valorServicoMoeda;
  if (valorMoeda === undefined) errors.push({ field: `${path}.valorServicoMoeda`, message: 'required' });
  else if (!(valorMoeda > 0) || !hasAtMostTwoDecimals(valorMoeda)) {
    errors.push({ field: `${path}.valorServicoMoeda`, message: 'greater than 0, at most 2 decimal places' });
  }
  const fomentoPrestador = clean(raw.fomentoPrestador) ?? '01';
  if (!/^0[1-8]$/.test(fomentoPrestador)) {
    errors.push({ field: `${path}.fomentoPrestador`, message: '01 to 08 (00 is not accepted, E0341)' });
  }
  const fomentoTomador = clean(raw.fomentoTomador) ?? '01';
  if (!/^(0[1-9]|1\d|2[0-6])$/.test(fomentoTomador)) {
    errors.push({ field: `${path}.fomentoTomador`, message: '01 to 26 (00 is not accepted, E0343)' });
  }
  const mov = raw.movimentacaoTemporariaBens ?? 1;
  if (![1, 2, 3].includes(mov)) errors.push({ field: `${path}.movimentacaoTemporariaBens`, message: '1, 2 or 3' });
  const di = clean(raw.declaracaoImportacao);
  const re = clean(raw.registroExportacao);
  if (mov === 2 && !di) {
    errors.push({
      field: `${path}.declaracaoImportacao`,
      message: 'required with movimentacaoTemporariaBens 2 (E0352)',
    });
  }
  if (mov === 3 && !re) {
    errors.push({ field: `${path}.registroExportacao`, message: 'required with movimentacaoTemporariaBens 3 (E0356)' });
  }
  if (mov === 1 && (di || re)) {
    errors.push({
      field: di ? `${path}.declaracaoImportacao` : `${path}.registroExportacao`,
      message: 'not allowed with movimentacaoTemporariaBens 1 (E0354)',
    });
  }
  let paisResultado = clean(raw.paisResultado)?.toUpperCase() ?? null;
  if (paisResultado && (!findCountry(paisResultado) || paisResultado === 'BR')) {
    errors.push({ field: `${path}.paisResultado`, message: 'ISO2 code of a country other than BR' });
    paisResultado = null;
  }
  if (errors.length > 0) return { value: null, errors, warnings: [] };
  const value: NormalizedExport = {
    modoPrestacao: raw.modoPrestacao as 1 | 2 | 3 | 4,
    vinculoPartes: vinculo as NormalizedExport['vinculoPartes'],
    codigoMoeda: moeda!,
    valorServicoMoeda: roundMoney(valorMoeda!),
    fomentoPrestador,
    fomentoTomador,
    movimentacaoTemporariaBens: mov as 1 | 2 | 3,
    declaracaoImportacao: mov === 2 ? di : null,
    registroExportacao: mov === 3 ? re : null,
    compartilharMdic: raw.compartilharMdic === true,
    paisResultado,
  };
  return { value, errors, warnings: [] };
}

/** The building-work group (obra). */
export function normalizeObra(raw: NonNullable<InvoiceRequest['servico']['obra']>): Checked<NormalizedObra | null> {
  const path = 'servico.obra';
  const errors: FieldError[] = [];
  const limits: [keyof typeof raw, number][] = [
    ['inscricaoImobiliaria', 30],
    ['codigoObra', 30],
    ['art', 40],
  ];
  for (const [key, max] of limits) {
    const value = clean(raw[key] as string | undefined);
    if (value && value.length > max) errors.push({ field: `${path}.${String(key)}`, message: `max ${max} characters` });
  }
  const cib = clean(raw.codigoCib);
  if (cib && cib.length !== 8) errors.push({ field: `${path}.codigoCib`, message: 'exactly 8 characters' });
  const address = normalizeAddress(raw.endereco, `${path}.endereco`);
  errors.push(...address.errors);
  const endereco = address.value;
  const obra = {
    inscricaoImobiliaria: clean(raw.inscricaoImobiliaria),
    codigoObra: clean(raw.codigoObra),
    codigoCib: cib,
    art: clean(raw.art),
    endereco,
  };
  if (!obra.inscricaoImobiliaria && !obra.codigoObra && !obra.codigoCib && !obra.art && !endereco) {
    errors.push({ field: path, message: 'send at least codigoObra, codigoCib or endereco' });
  }
  return { value: errors.length > 0 ? null : obra, errors, warnings: address.warnings };
}

/** The event-activity group (atvEvento, LC 116 item 12). */
export function normalizeEvento(
  raw: NonNullable<InvoiceRequest['servico']['evento']>,
): Checked<NormalizedEvento | null> {
  const path = 'servico.evento';
  const errors: FieldError[] = [];
  const nome = clean(raw.nome);
  if (!nome) errors.push({ field: `${path}.nome`, message: 'required' });
  else if (nome.length > 255) errors.push({ field: `${path}.nome`, message: 'max 255 characters' });
  const inicio = clean(raw.dataInicio);
  const fim = clean(raw.dataFim);
  if (!inicio || !isValidDate(inicio))
    errors.push({ field: `${path}.dataInicio`, message: 'required, a valid YYYY-MM-DD date' });
  if (!fim || !isValidDate(fim))
    errors.push({ field: `${path}.dataFim`, message: 'required, a valid YYYY-MM-DD date' });
  else if (inicio && isValidDate(inicio) && fim < inicio) {
    errors.push({ field: `${path}.dataFim`, message: 'cannot be before dataInicio' });
  }
  const id = clean(raw.id);
  if (id && id.length > 30) errors.push({ field: `${path}.id`, message: 'max 30 characters' });
  const address = normalizeAddress(raw.endereco, `${path}.endereco`);
  errors.push(...address.errors);
  if (errors.length > 0) return { value: null, errors, warnings: address.warnings };
  return {
    value: { nome: nome!, dataInicio: inicio!, dataFim: fim!, id, endereco: address.value },
    errors,
    warnings: address.warnings,
  };
}
