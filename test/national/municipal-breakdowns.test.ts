import { describe, expect, it } from 'vitest';
import {
  adnServiceCode,
  type BreakdownDecision,
  checkParametrisedRate,
  decideMunicipalBreakdown,
  type MunicipalServiceParameters,
  type ParametrisedRate,
  requiresBreakdown,
  splitSevenDigitCode,
} from '../../src/domain/municipal-breakdowns.ts';

/** Table-driven tests of the cTribMun decision (spec 4.7.3/4.7.4) and the parametrised-rate check (E0617/E0635). */

const rate = (aliquota: number | null): ParametrisedRate => ({
  aliquota,
  incidencia: 'SIM',
  inicio: '2023-01-01',
  fim: null,
});

function params(semDesdobramento: number | null, breakdowns: [string, number][]): MunicipalServiceParameters {
  return {
    municipio: '3304557',
    cTribNac: '010101',
    competencia: '2026-11',
    semDesdobramento: semDesdobramento === null ? null : rate(semDesdobramento),
    desdobramentos: breakdowns.map(([codigo, aliquota]) => ({ codigo, rate: rate(aliquota) })),
  };
}

const REQUIRED = params(null, [
  ['001', 5],
  ['002', 3],
]);
const OPTIONAL = params(2.5, [['001', 2]]);
const NONE = params(5, []);
const EMPTY = params(null, []);

type Expected =
  | { value: string | null; cTribMun: string | null; rate: number | null; warnings: string[] }
  | { error: string; governmentCode: string | null };

const cases: [string, string | null, MunicipalServiceParameters | null, Expected, string?, string?][] = [
  // [name, sent, params, expected, cTribNac?, municipio?]
  [
    'required, none sent → first injected',
    null,
    REQUIRED,
    { value: '001', cTribMun: '001', rate: 5, warnings: ['CTRIBMUN_INJECTED'] },
  ],
  [
    'required, empty string sent → first injected',
    '',
    REQUIRED,
    { value: '001', cTribMun: '001', rate: 5, warnings: ['CTRIBMUN_INJECTED'] },
  ],
  ['required, valid sent wins', '002', REQUIRED, { value: '002', cTribMun: '002', rate: 3, warnings: [] }],
  [
    'required, the first sent wins (no warning)',
    '001',
    REQUIRED,
    { value: '001', cTribMun: '001', rate: 5, warnings: [] },
  ],
  [
    'required, unknown sent → E0314',
    '009',
    REQUIRED,
    { error: 'servico.codigoTributacaoMunicipal', governmentCode: 'E0314' },
  ],
  ['optional, none sent → none', null, OPTIONAL, { value: null, cTribMun: null, rate: 2.5, warnings: [] }],
  ['optional, valid sent wins', '001', OPTIONAL, { value: '001', cTribMun: '001', rate: 2, warnings: [] }],
  [
    'optional, unknown sent → E0314',
    '002',
    OPTIONAL,
    { error: 'servico.codigoTributacaoMunicipal', governmentCode: 'E0314' },
  ],
  ['none, sent → ignored', '001', NONE, { value: null, cTribMun: null, rate: 5, warnings: ['CTRIBMUN_IGNORED'] }],
  ['none, nothing sent → nothing', null, NONE, { value: null, cTribMun: null, rate: 5, warnings: [] }],
  [
    'service not parametrised → kept as sent',
    '001',
    EMPTY,
    { value: '001', cTribMun: '001', rate: null, warnings: [] },
  ],
  ['unknown parametrisation → kept as sent', '003', null, { value: '003', cTribMun: '003', rate: null, warnings: [] }],
  ['unknown parametrisation, none → none', null, null, { value: null, cTribMun: null, rate: null, warnings: [] }],
  ['malformed (2 digits)', '01', REQUIRED, { error: 'servico.codigoTributacaoMunicipal', governmentCode: null }],
  ['malformed (letters)', 'abc', null, { error: 'servico.codigoTributacaoMunicipal', governmentCode: null }],
  ['malformed (5 digits)', '01001', REQUIRED, { error: 'servico.codigoTributacaoMunicipal', governmentCode: null }],
  // 7 digits: Salvador only; first 4 = item and subitem of cTribNac, last 3 → cTribMun
  [
    '7 digits in Salvador, matching subitem',
    '1002009',
    null,
    { value: '1002009', cTribMun: '009', rate: null, warnings: [] },
    '100201',
    '2927408',
  ],
  [
    '7 digits in Salvador, other subitem',
    '1001009',
    null,
    { error: 'servico.codigoTributacaoMunicipal', governmentCode: null },
    '100201',
    '2927408',
  ],
  ['7 digits elsewhere', '0101001', REQUIRED, { error: 'servico.codigoTributacaoMunicipal', governmentCode: null }],
  [
    '7 digits with no municipality of incidence',
    '1002009',
    null,
    { error: 'servico.codigoTributacaoMunicipal', governmentCode: null },
    '100201',
    '',
  ],
];

describe('decideMunicipalBreakdown', () => {
  it.each(cases)('%s', (_name, sent, p, expected, cTribNac = '010101', municipio = '3304557') => {
    const decision: BreakdownDecision = decideMunicipalBreakdown({
      sent,
      cTribNac,
      municipio: municipio || null,
      params: p,
    });
    if ('error' in expected) {
      expect(decision.ok).toBe(false);
      if (decision.ok) return;
      expect(decision.field).toBe(expected.error);
      expect(decision.governmentCode).toBe(expected.governmentCode);
      expect(decision.message.length).toBeGreaterThan(0);
      if (expected.governmentCode === 'E0314') expect(decision.allowed).toEqual(p!.desdobramentos.map((d) => d.codigo));
      return;
    }
    expect(decision.ok).toBe(true);
    if (!decision.ok) return;
    expect(decision.value).toBe(expected.value);
    expect(decision.cTribMun).toBe(expected.cTribMun);
    expect(decision.rate?.aliquota ?? null).toBe(expected.rate);
    expect(decision.warnings.map((w) => w.code)).toEqual(expected.warnings);
    for (const w of decision.warnings) {
      expect(w.field).toBe('servico.codigoTributacaoMunicipal');
      expect(w.message).toContain(p!.municipio);
    }
  });

  it('says which breakdown it injected', () => {
    const decision = decideMunicipalBreakdown({
      sent: null,
      cTribNac: '010101',
      municipio: '3304557',
      params: REQUIRED,
    });
    expect(decision.ok && decision.warnings[0]!.message).toContain('(001)');
  });
});

describe('requiresBreakdown / adnServiceCode', () => {
  it.each([
    [REQUIRED, true],
    [OPTIONAL, false],
    [NONE, false],
    [EMPTY, false],
  ] as const)('%# → %s', (p, expected) => expect(requiresBreakdown(p)).toBe(expected));

  it.each([
    ['010101', undefined, '01.01.01.000'],
    ['010101', '001', '01.01.01.001'],
    ['171001', '012', '17.10.01.012'],
  ] as const)('%s %s → %s', (code, breakdown, expected) => expect(adnServiceCode(code, breakdown)).toBe(expected));
});

describe('splitSevenDigitCode (Salvador)', () => {
  it.each([
    ['1002009', '100201', '2927408', { ok: true, cTribMun: '009', itemSubitem: '1002' }],
    ['0101001', '010101', '2927408', { ok: true, cTribMun: '001', itemSubitem: '0101' }],
    ['0101001', '010201', '2927408', { ok: false }],
    ['0101001', '010101', '3304557', { ok: false }],
    ['010100', '010101', '2927408', { ok: false }],
  ] as const)('%s with %s in %s', (code, cTribNac, municipio, expected) => {
    expect(splitSevenDigitCode(code, cTribNac, municipio)).toMatchObject(expected);
  });
});

describe('checkParametrisedRate', () => {
  const base = { serviceCode: '01.01.01.001', municipio: '3304557', competencia: '2026-11', pAliq: null };
  it.each([
    // [name, aliquota, pAliq, rule, parametrised, expected code or null]
    ['E0617: different rate refused', 2, null, 'E0617', 5, 'E0617'],
    ['E0635: different rate refused', 3, null, 'E0635', 5, 'E0635'],
    ['E0617: same rate accepted', 5, null, 'E0617', 5, null],
    ['E0617: same rate within rounding accepted', 5.001, null, 'E0617', 5, null],
    ['E0617: rate unknown accepted', 2, null, 'E0617', null, null],
    ['E0619: declared pAliq (inactive municipality) not checked', 2, 2, 'E0619', 5, null],
    ['E0621: Simples withheld, declared pAliq not checked', 2, 2, 'E0621', 5, null],
    ['E0625: Simples not withheld (DAS rate) not checked', 2, null, 'E0625', 5, null],
    ['E0600: MEI not checked', 0, null, 'E0600', 5, null],
    ['E0602: not taxable not checked', 0, null, 'E0602', 5, null],
  ] as const)('%s', (_name, aliquota, pAliq, rule, parametrised, expected) => {
    const result = checkParametrisedRate({
      ...base,
      aliquota,
      pAliq,
      pAliqRule: rule,
      rate: parametrised === null ? null : rate(parametrised),
    });
    if (expected === null) {
      expect(result).toEqual({ ok: true });
      return;
    }
    expect(result).toMatchObject({
      ok: false,
      field: 'valores.aliquotaIss',
      governmentCode: expected,
      expected: parametrised,
    });
    if (!result.ok) {
      expect(result.hint).toBe(`send valores.aliquotaIss ${parametrised}`);
      expect(result.message).toContain(expected);
    }
  });

  it('no parametrised rate in the answer (Aliq null) is not checked', () => {
    expect(checkParametrisedRate({ ...base, aliquota: 2, pAliqRule: 'E0617', rate: rate(null) })).toEqual({ ok: true });
  });
});
