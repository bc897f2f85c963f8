import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { ibsCbsObligation } from '../../src/domain/fiscal-calendar.ts';
import { clean, firstDefined, hasAtMostTwoDecimals, roundMoney } from '../../src/domain/invoice/common.ts';
import { resolveApproximateTaxes, resolveFederalTaxes } from '../../src/domain/invoice/federal.ts';
import { resolveIbsCbs } from '../../src/domain/invoice/ibscbs.ts';
import { checkIssRate, decideIssRate, resolveRegime } from '../../src/domain/invoice/iss.ts';
import type { NormalizedRegime, TribIssqn } from '../../src/domain/invoice/normalized.ts';
import { FOREIGN_DISTRICT_DEFAULT, normalizeAddress, normalizeParty } from '../../src/domain/invoice/parties.ts';
import { type InvoiceRequest, InvoiceRequestSchema } from '../../src/domain/invoice/request-schema.ts';
import { normalizeEvento, normalizeExport, normalizeObra } from '../../src/domain/invoice/service-groups.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import type { ProjectFiscalProfile, RegimeTributario } from '../../src/domain/project-profile.ts';

/** Table-driven tests of each module of domain/invoice/, called directly: every helper returns its value. */

const PROJECT: ProjectFiscalProfile = fiscalProfile({
  id: 'prj',
  razaoSocial: 'EMPRESA',
});
const regime = (r: RegimeTributario, iss: 1 | 2 | 3 | null = null): NormalizedRegime => resolveRegime(r, iss).value;

describe('common', () => {
  it.each([
    [1.005, 1.01],
    [2.675, 2.68],
    [-1.005, -1.01],
    [1500, 1500],
    [0.1 + 0.2, 0.3],
  ])('roundMoney(%s) = %s', (input, output) => expect(roundMoney(input)).toBe(output));
  it.each([
    [1.23, true],
    [1.234, false],
    [100, true],
  ])('hasAtMostTwoDecimals(%s) = %s', (input, output) => expect(hasAtMostTwoDecimals(input)).toBe(output));
  it.each([
    ['  a ', 'a'],
    ['   ', null],
    [undefined, null],
  ])('clean(%j) = %j', (input, output) => expect(clean(input)).toBe(output));
  it('firstDefined takes the first candidate with a value, with its field', () => {
    expect(firstDefined<string>([null, 'a'], ['', 'b'], ['x', 'c'])).toEqual({ value: 'x', field: 'c' });
    expect(firstDefined<string>([undefined, 'a'])).toBeNull();
  });
});

describe('request-schema', () => {
  const base: InvoiceRequest = {
    tomador: { cnpj: '11444777000161', nome: 'X' },
    servico: { descricao: 'd' },
    valores: { total: 10, aliquotaIss: 2 },
  };
  // biome-ignore lint/suspicious/noExplicitAny: bodies deliberately outside the schema's types
  type Loose = Record<string, any>;
  it.each<[string, (b: Loose) => void, boolean]>([
    ['the base body', () => {}, true],
    ['total as a string', (b) => (b.valores.total = '10'), false],
    ['total true', (b) => (b.valores.total = true), false],
    ['aliquotaIss null', (b) => (b.valores.aliquotaIss = null), false],
    ['aliquotaIss above 5 (left to the rules, E0595)', (b) => (b.valores.aliquotaIss = 6), true],
    ['issRetido "true"', (b) => (b.valores.issRetido = 'true'), false],
    ['consumidorFinal "1" (spec alternative)', (b) => (b.valores.ibscbs = { consumidorFinal: '1' }), true],
    ['tipoOperacao 3 or "3"', (b) => (b.valores.ibscbs = { tipoOperacao: '3', tpOper: 3 }), true],
    ['tipoEnteGovernamental "9"', (b) => (b.valores.ibscbs = { tipoEnteGovernamental: '9' }), true],
    ['estadoProvincia extension', (b) => (b.tomador.endereco = { pais: 'DE', estadoProvincia: 'Berlin' }), true],
  ])('%s → valid %s', (_name, change, valid) => {
    const body = structuredClone(base) as Loose;
    change(body);
    expect(Value.Check(InvoiceRequestSchema, body)).toBe(valid);
  });
});

describe('parties', () => {
  it.each<[string, Record<string, string>, Record<string, unknown>, string[], string[]]>([
    [
      'Brazilian address by city name',
      { cidade: 'Niteroi', uf: 'RJ', cep: '24020000' },
      { nacional: true, codigoMunicipio: '3303302' },
      [],
      [],
    ],
    ['an unknown state', { cidade: 'Rio de Janeiro', uf: 'XX' }, {}, ['x.uf'], []],
    ['a masked CEP', { cidade: 'Rio de Janeiro', uf: 'RJ', cep: '20040-002' }, {}, ['x.cep'], []],
    [
      'abroad with a region',
      { pais: 'de', cidade: 'Berlin', estadoProvincia: 'Berlin', logradouro: 'L', bairro: 'Mitte' },
      { nacional: false, pais: 'DE', estadoProvincia: 'Berlin' },
      [],
      [],
    ],
    [
      'abroad, spec fields only',
      { pais: 'DE', uf: 'EX', cidade: 'Berlin', logradouro: 'L', numero: '5', cep: '10117' },
      { estadoProvincia: 'Berlin', bairro: FOREIGN_DISTRICT_DEFAULT },
      [],
      ['x.estadoProvincia', 'x.bairro'],
    ],
    ['abroad with a uf of its own', { pais: 'US', uf: 'TX', cidade: 'Austin' }, { estadoProvincia: 'TX' }, [], []],
    ['an unknown country', { pais: 'QQ' }, {}, ['x.pais'], []],
  ])('address: %s', (_name, raw, value, errorFields, warningFields) => {
    const r = normalizeAddress(raw, 'x');
    expect(r.errors.map((e) => e.field)).toEqual(errorFields);
    expect(r.warnings.map((w) => w.field)).toEqual(warningFields);
    if (errorFields.length === 0) expect(r.value).toMatchObject(value);
  });

  it.each<[string, Record<string, unknown>, string | null, string[]]>([
    ['CNPJ', { cnpj: '11444777000161', nome: 'A' }, 'cnpj', []],
    ['CPF', { cpf: '52998224725', nome: 'A' }, 'cpf', []],
    ['bad CNPJ check digits', { cnpj: '11444777000162', nome: 'A' }, null, ['p.cnpj']],
    ['two identifications', { cnpj: '11444777000161', cpf: '52998224725', nome: 'A' }, null, ['p.cpf']],
    ['no identification', { nome: 'A' }, null, ['p']],
    ['NIF abroad', { nif: 'X1', nome: 'A', endereco: { pais: 'US' } }, 'nif', []],
    ['NIF without a foreign address', { nif: 'X1', nome: 'A' }, null, ['p.endereco.pais']],
    ['no name', { cnpj: '11444777000161', nome: ' ' }, null, ['p.nome']],
  ])('party: %s', (_name, raw, kind, errorFields) => {
    const r = normalizeParty(raw as never, 'p');
    expect(r.errors.map((e) => e.field)).toEqual(errorFields);
    expect(r.value?.id.kind ?? null).toBe(kind);
  });
});

describe('service-groups', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['a complete export', { modoPrestacao: 1, codigoMoeda: '220', valorServicoMoeda: 10, paisResultado: 'US' }, []],
    ['no currency', { modoPrestacao: 1, valorServicoMoeda: 10 }, ['valores.exportacao.codigoMoeda']],
    [
      'an import declaration missing (E0352)',
      { modoPrestacao: 1, codigoMoeda: '220', valorServicoMoeda: 10, movimentacaoTemporariaBens: 2 },
      ['valores.exportacao.declaracaoImportacao'],
    ],
    [
      'fomento 00 (E0341)',
      { modoPrestacao: 1, codigoMoeda: '220', valorServicoMoeda: 10, fomentoPrestador: '00' },
      ['valores.exportacao.fomentoPrestador'],
    ],
  ])('export: %s', (_name, raw, fields) => {
    const r = normalizeExport(raw as never);
    expect(r.errors.map((e) => e.field)).toEqual(fields);
    expect(r.value === null).toBe(fields.length > 0);
  });
  it.each<[string, Record<string, unknown>, string[]]>([
    ['a work code', { codigoObra: '900012345678' }, []],
    ['a CIB of 7 characters', { codigoCib: '1234567' }, ['servico.obra.codigoCib']],
    ['nothing', {}, ['servico.obra']],
  ])('obra: %s', (_name, raw, fields) => {
    expect(normalizeObra(raw as never).errors.map((e) => e.field)).toEqual(fields);
  });
  it.each<[string, Record<string, unknown>, string[]]>([
    ['an event', { nome: 'F', dataInicio: '2026-11-01', dataFim: '2026-11-02' }, []],
    [
      'ending before it starts',
      { nome: 'F', dataInicio: '2026-11-02', dataFim: '2026-11-01' },
      ['servico.evento.dataFim'],
    ],
    ['31 February', { nome: 'F', dataInicio: '2026-02-31', dataFim: '2026-03-01' }, ['servico.evento.dataInicio']],
  ])('evento: %s', (_name, raw, fields) => {
    expect(normalizeEvento(raw as never).errors.map((e) => e.field)).toEqual(fields);
  });
});

describe('iss', () => {
  it.each<[RegimeTributario, 1 | 2 | 3 | null, number, number | null, string[]]>([
    ['1', null, 1, null, []],
    ['2', null, 2, null, []],
    ['3', null, 3, 1, []],
    ['3', 3, 3, 3, []],
    ['3e', null, 3, 2, ['project.regimeIss']],
  ])('regime %s (regimeIss %s) → opSimpNac %s, regApTribSN %s', (r, iss, op, ap, warned) => {
    const result = resolveRegime(r, iss);
    expect(result.value).toMatchObject({ opSimpNac: op, regApTribSN: ap });
    expect(result.warnings.map((w) => w.field)).toEqual(warned);
  });

  it.each<[string, NormalizedRegime, TribIssqn, boolean, string | null, string, boolean]>([
    ['MEI', regime('2'), 1, false, '3304557', 'E0600', false],
    ['immunity', regime('1'), 2, false, '3304557', 'E0602', false],
    ['regime 1, active municipality', regime('1'), 1, false, '3304557', 'E0617', false],
    ['regime 1, municipality outside', regime('1'), 1, false, '3509502', 'E0619', true],
    ['Simples, withholding, active', regime('3'), 1, true, '3304557', 'E0621', true],
    ['Simples, no withholding, active', regime('3'), 1, false, '3304557', 'E0625', false],
    ['Simples ISS outside the DAS, active', regime('3', 2), 1, false, '3304557', 'E0635', false],
    ['Simples ISS outside the DAS, outside', regime('3', 2), 1, false, '3509502', 'E0640', true],
  ])('pAliq: %s → %s', (_name, r, trib, retido, municipio, rule, declare) => {
    const d = decideIssRate({ regime: r, tribISSQN: trib, retido, municipioIncidencia: municipio });
    expect(d.rule).toBe(rule);
    expect(d.declare).toBe(declare);
  });

  const regular = decideIssRate({ regime: regime('1'), tribISSQN: 1, retido: false, municipioIncidencia: '3304557' });
  it.each<[number, string | null, NormalizedRegime, TribIssqn, RegExp | null]>([
    [2, '01.01', regime('1'), 1, null],
    [5, '01.01', regime('1'), 1, null],
    [1.99, '01.01', regime('1'), 1, /E0429/],
    [5.5, '01.01', regime('1'), 1, /E0595/],
    [1, '07.02', regime('1'), 1, null],
    [1, '07.05', regime('1'), 1, null],
    [1, '16.01', regime('1'), 1, null],
    [0, '16.01', regime('1'), 1, /greater than 0/],
    [1, '16.02', regime('1'), 1, /E0429/],
    [2.005, '01.01', regime('1'), 1, /2 decimal/],
    [2, '01.01', regime('1'), 2, /must be 0/],
    [0, '01.01', regime('1'), 3, null],
    [0, '01.01', regime('2'), 1, null],
    [1, '01.01', regime('3'), 1, null],
    [1, '01.01', regime('3', 2), 1, /E0429/],
  ])('rate %s%% for %s → %s', (aliquota, subitem, r, trib, error) => {
    const errors = checkIssRate({ aliquota, tribISSQN: trib, subitem, regime: r, decision: regular });
    if (error) expect(errors.map((e) => e.message).join(' ')).toMatch(error);
    else expect(errors).toEqual([]);
  });
});

describe('federal', () => {
  const valores = (v: Record<string, unknown>) => ({ total: 1000, aliquotaIss: 2, ...v }) as InvoiceRequest['valores'];
  it.each<
    [string, RegimeTributario, Record<string, unknown>, Partial<ProjectFiscalProfile>, unknown, string[], string[]]
  >([
    ['nothing, regime 1', '1', {}, {}, null, [], []],
    ['retention', '1', { retencaoIrrf: 15 }, {}, { retencaoIrrf: 15 }, [], []],
    ['retention above the total', '1', { retencaoIrrf: 1000 }, {}, null, ['valores.retencaoIrrf'], []],
    [
      'PIS/COFINS from the project',
      '1',
      {},
      { cstPisCofins: '01', aliquotaPis: 0.65, aliquotaCofins: 3 },
      { pisCofins: { cst: '01', valorPis: 6.5, valorCofins: 30, source: 'project' } },
      [],
      ['PROJECT_DEFAULT_APPLIED'],
    ],
    [
      'Simples: ignored',
      '3',
      { retencaoCsll: 5, pisCofins: { cst: '01' } },
      {},
      null,
      [],
      ['FEDERAL_TAXES_IGNORED', 'FEDERAL_TAXES_IGNORED'],
    ],
    ['MEI: ignored', '2', { retencaoCp: 5 }, {}, null, [], ['FEDERAL_TAXES_IGNORED']],
  ])('%s', (_name, r, v, prj, value, errorFields, warningCodes) => {
    const result = resolveFederalTaxes(valores(v), regime(r), { ...PROJECT, ...prj }, 1000);
    expect(result.errors.map((e) => e.field)).toEqual(errorFields);
    expect(result.warnings.map((w) => w.code)).toEqual(warningCodes);
    if (value === null) expect(result.value).toBeNull();
    else expect(result.value).toMatchObject(value as object);
  });
  it.each<[string, Record<string, unknown>, RegimeTributario, number | null, string]>([
    ['percentages', { totaisTributosAproximados: { percentualTributacaoFederal: 10 } }, '1', null, 'percentuais'],
    ['amounts', { totaisTributosAproximados: { valorTributacaoFederal: 10 } }, '1', null, 'valores'],
    ['Simples rate', {}, '3', 6, 'simples'],
    ['none', {}, '1', null, 'naoInformado'],
  ])('approximate taxes: %s', (_name, v, r, aliquotaSimples, kind) => {
    const result = resolveApproximateTaxes(valores(v), regime(r), { ...PROJECT, aliquotaSimples }, 1000);
    expect(result.value.kind).toBe(kind);
  });
});

describe('ibscbs', () => {
  const body = (change: (b: InvoiceRequest) => void = () => {}): InvoiceRequest => {
    const b: InvoiceRequest = {
      tomador: { cnpj: '11444777000161', nome: 'A' },
      servico: { descricao: 'd', codigo: '010101' },
      valores: { total: 10, aliquotaIss: 2 },
    };
    change(b);
    return b;
  };
  const obliged = ibsCbsObligation('1', '2026-11');
  const notObliged = ibsCbsObligation('3', '2026-11');
  it.each<[string, InvoiceRequest, Partial<ProjectFiscalProfile>, typeof obliged, string, string[]]>([
    ['nothing, not obliged', body(), {}, notObliged, 'none', ['IBSCBS_GROUP_OMITTED']],
    [
      'servico.nbs only, not obliged',
      body((b) => (b.servico.nbs = '115029000')),
      {},
      notObliged,
      'none',
      ['IBSCBS_GROUP_OMITTED'],
    ],
    ['nothing, obliged, 13 framings', body(), {}, obliged, 'ambiguous', []],
    [
      'nbs + class fixed',
      body((b) => (b.valores.ibscbs = { nbs: '115029000', cClassTrib: '200043' })),
      {},
      obliged,
      'resolved',
      [],
    ],
    ['a datum, not obliged', body((b) => (b.servico.ibscbs = { cIndOp: '100301' })), {}, notObliged, 'ambiguous', []],
    [
      'project default, not obliged',
      body(),
      { defaultNbs: '115021000' },
      notObliged,
      'resolved',
      ['PROJECT_DEFAULT_APPLIED'],
    ],
    [
      'a wrong tuple',
      body((b) => (b.valores.ibscbs = { nbs: '115021000', cClassTrib: '200043' })),
      {},
      obliged,
      'invalid',
      [],
    ],
    ['export, no framing', body((b) => (b.servico.nbs = '115021000')), {}, obliged, 'none', ['IBSCBS_GROUP_OMITTED']],
  ])('%s → %s', (name, b, prj, obligation, kind, warnings) => {
    const tribISSQN = name.startsWith('export') ? 3 : 1;
    const result = resolveIbsCbs(b, { ...PROJECT, ...prj }, { subitem: '01.01', tribISSQN, obligation });
    expect(result.value.kind).toBe(kind);
    expect(result.warnings.map((w) => w.code)).toEqual(warnings);
  });
});
