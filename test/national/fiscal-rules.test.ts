import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IBSCBS_CALENDAR, ibsCbsObligation } from '../../src/domain/fiscal-calendar.ts';
import { findClassificacaoTributaria } from '../../src/domain/ibscbs.ts';
import {
  checkInvoiceRequest,
  type InvoiceCheckResult,
  type InvoiceRequest,
  type NormalizedInvoice,
} from '../../src/domain/invoice-request.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import type { ProjectFiscalProfile, RegimeTributario } from '../../src/domain/project-profile.ts';
import { findServiceCode, listServiceCodes } from '../../src/domain/service-codes.ts';
import { WARNING_CATALOGUE } from '../../src/domain/warnings.ts';
import { buildDps, checkDpsRequirements } from '../../src/engines/national/dps-builder.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * Table-driven cases of the fiscal rules (issue 8, items 1-4 and 6) against the official tables in
 * shared/reference/tables/derived (read here directly, not through our generated JSON): the IBS/CBS fiscal calendar
 * and Anexo VIII framings, spec-only bodies (foreign taker), warnings, strict types (over HTTP), the statutory ISS
 * rate bounds and the place of incidence of every code of Anexo I. Every case meant to issue builds its DPS, which
 * must satisfy the national requirements and validate against the official XSD.
 */

const TABLES = new URL('../../../shared/reference/tables/derived/', import.meta.url);
const RIO = '3304557';
const NITEROI = '3303302';
const NOW = new Date('2026-11-20T15:00:00Z');
const DH_EMI = new Date(NOW.getTime() - 60_000);

/** RFC 4180 CSV → rows keyed by header. */
function readCsv(name: string): Record<string, string>[] {
  const text = readFileSync(new URL(name, TABLES), 'utf8').replace(/^\uFEFF/, '');
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field || row.length) rows.push([...row, field]);
  const [header, ...body] = rows.filter((r) => r.length > 1);
  return body.map((r) => Object.fromEntries(header!.map((h, i) => [h.trim(), (r[i] ?? '').trim()])));
}

function project(overrides: Partial<ProjectFiscalProfile> = {}): ProjectFiscalProfile {
  return fiscalProfile({
    id: 'prj_rules',
    inscricaoMunicipal: '12345',
    codigoMunicipio: RIO,
    email: 'fiscal@exemplo.com.br',
    telefone: '2133334444',
    aliquotaSimples: 6,
    ...overrides,
  });
}
const SIMPLES = { regimeTributario: '3' as const };

const TAKER = {
  cnpj: '11444777000161',
  nome: 'Cliente SA',
  endereco: {
    logradouro: 'Rua da Assembleia',
    numero: '10',
    bairro: 'Centro',
    cidade: 'Rio de Janeiro',
    uf: 'RJ',
    cep: '20010010',
  },
};
/** The foreign taker of spec 2.7, with its fields only. */
const SPEC_FOREIGN_TAKER = {
  nif: 'DE811234567',
  nome: 'Kunde GmbH',
  endereco: { logradouro: 'Unter den Linden', numero: '5', cidade: 'Berlin', cep: '10117', pais: 'DE', uf: 'EX' },
};
const EXPORT = { modoPrestacao: 1, codigoMoeda: '978', valorServicoMoeda: 520, paisResultado: 'DE' };

type Body = InvoiceRequest & Record<string, unknown>;
function body(change: (b: Body) => void = () => {}): Body {
  const b = structuredClone({
    tomador: TAKER,
    servico: { descricao: 'Desenvolvimento de software', codigo: '010101' },
    valores: { total: 1500, aliquotaIss: 2 },
  }) as Body;
  change(b);
  return b;
}

let dpsNumber = 0;
/** The DPS of an accepted case: national requirements met and valid against the official XSD. */
function expectIssuable(prj: ProjectFiscalProfile, invoice: NormalizedInvoice): string {
  expect(checkDpsRequirements(prj, invoice)).toEqual([]);
  const { xml } = buildDps({
    project: prj,
    invoice,
    serie: prj.serieNfse,
    nDPS: ++dpsNumber,
    dhEmi: DH_EMI,
    tpAmb: 2,
    verAplic: 'rules-1.0',
  });
  const result = validateXml('DPS', xml);
  expect(result.ok ? [] : result.errors).toEqual([]);
  return xml;
}

interface RuleCase {
  name: string;
  project?: Partial<ProjectFiscalProfile>;
  body: Body;
  /** Accepted: the warning codes (exactly, in any order) and DPS fragments; refused: the code and fields. */
  expect:
    | { ok: true; warnings?: string[]; contains?: string[]; lacks?: string[] }
    | { ok: false; code?: string; fields: string[]; message?: RegExp };
}

function runCase(c: RuleCase): void {
  const prj = project(c.project);
  const result: InvoiceCheckResult = checkInvoiceRequest(c.body, prj, { now: NOW });
  if (c.expect.ok) {
    if (!result.ok) throw new Error(`expected ok, got ${result.code}: ${JSON.stringify(result.errors)}`);
    if (c.expect.warnings) expect(result.warnings.map((w) => w.code).sort()).toEqual([...c.expect.warnings].sort());
    for (const w of result.warnings) expect(Object.keys(WARNING_CATALOGUE)).toContain(w.code);
    const xml = expectIssuable(prj, result.value);
    for (const fragment of c.expect.contains ?? []) expect(xml).toContain(fragment);
    for (const fragment of c.expect.lacks ?? []) expect(xml).not.toContain(fragment);
  } else {
    if (result.ok) throw new Error(`expected a refusal, got ok with warnings ${JSON.stringify(result.warnings)}`);
    if (c.expect.code) expect(result.code).toBe(c.expect.code);
    expect(result.errors.map((e) => e.field)).toEqual(c.expect.fields);
    if (c.expect.message) expect(result.errors.map((e) => e.message).join(' ')).toMatch(c.expect.message);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Official tables
// ---------------------------------------------------------------------------------------------------------------

const validClassTrib = new Set(
  readCsv('cClassTrib_2025-12-12.csv')
    .filter((r) => r.indNFSe === '1')
    .map((r) => r.cClassTrib!),
);
const validIndOp = new Set(readCsv('cIndOp_anexo_c_v1-01.csv').map((r) => Object.values(r)[0]!.padStart(6, '0')));

/** Anexo VIII: subitem → set of `nbs|cIndOp|cClassTrib` (rows whose codes exist in their own official tables). */
function annexFramings(): Map<string, Set<string>> {
  const rows = readCsv('correlacao_item_nbs_cIndOp_cClassTrib_anexo_viii_v1-00-00.csv');
  const byDescription = new Map<string, string>();
  for (const r of rows) if (r.item_lc116) byDescription.set(r.descricao_item!, r.item_lc116);
  const out = new Map<string, Set<string>>();
  for (const r of rows) {
    const item = r.item_lc116 || byDescription.get(r.descricao_item!) || '';
    const op = /^\d{1,6}$/.test(r.cIndOp!) ? r.cIndOp!.padStart(6, '0') : '';
    if (!/^\d{2}\.\d{2}$/.test(item) || !/^\d{9}$/.test(r.nbs_digitos!)) continue;
    if (!validIndOp.has(op) || !validClassTrib.has(r.cClassTrib!)) continue;
    const set = out.get(item) ?? new Set<string>();
    set.add(`${r.nbs_digitos}|${op}|${r.cClassTrib}`);
    out.set(item, set);
  }
  return out;
}
const FRAMINGS = annexFramings();

/** The first national code of each subitem (national list, Anexo B). */
const FIRST_CODE = new Map<string, string>();
for (const r of readCsv('lista_servico_nacional_cTribNac.csv')) {
  if (r.nivel !== 'desdobro' || !/^\d{6}$/.test(r.cTribNac!)) continue;
  const subitem = `${r.item}.${r.subitem}`;
  if (!FIRST_CODE.has(subitem)) FIRST_CODE.set(subitem, r.cTribNac!);
}

/** Adds the group a code requires (obra E0370, atvEvento E0390) and the place of service it is due at. */
function withRequiredGroups(b: Body, code: string): Body {
  const sc = findServiceCode(code)!;
  if (sc.requiredGroup === 'obra') b.servico.obra = { codigoObra: '900012345678' };
  if (sc.requiredGroup === 'atvEvento') {
    b.servico.evento = { nome: 'Festival', dataInicio: '2026-11-01', dataFim: '2026-11-02', id: 'EVT-1' };
  }
  return b;
}

// ---------------------------------------------------------------------------------------------------------------
// Item 1: the fiscal calendar and Anexo VIII
// ---------------------------------------------------------------------------------------------------------------

describe('item 1: IBS/CBS obligation by regime and competência (fiscal calendar)', () => {
  it('cites a source on every row, and the rows of a regime do not overlap', () => {
    for (const row of IBSCBS_CALENDAR) {
      expect(row.source.length).toBeGreaterThan(20);
      expect(row.from <= row.until).toBe(true);
    }
    for (const regime of ['1', '2', '3', '3e'] as RegimeTributario[]) {
      const rows = IBSCBS_CALENDAR.filter((r) => r.regimes.includes(regime)).sort((a, b) =>
        a.from.localeCompare(b.from),
      );
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.from > rows[i - 1]!.until).toBe(true);
    }
  });

  const grid: [RegimeTributario, string, boolean][] = [];
  for (const regime of ['1', '2', '3', '3e'] as RegimeTributario[]) {
    for (const competencia of ['2025-12', '2026-01', '2026-07', '2026-08', '2026-11']) {
      const obliged = regime === '1' && competencia >= '2026-08';
      grid.push([regime, competencia, obliged]);
    }
  }
  it.each(grid)('regime %s, competência %s: obliged %s', (regime, competencia, obliged) => {
    expect(ibsCbsObligation(regime, competencia).obliged).toBe(obliged);
    // 01.01 with NBS 1.1502.90.00 has three framings; nothing else is given
    const c: RuleCase = {
      name: `${regime} ${competencia}`,
      project: { regimeTributario: regime },
      body: body((b) => {
        b.competencia = competencia;
        b.servico.nbs = '115029000';
        if (regime === '2') b.valores.aliquotaIss = 0;
      }),
      expect: obliged
        ? { ok: false, code: 'IBSCBS_FRAMING_AMBIGUOUS', fields: ['valores.ibscbs'] }
        : {
            ok: true,
            // 3e without regimeIss: regApTribSN 2 assumed (told back too)
            warnings: regime === '3e' ? ['IBSCBS_GROUP_OMITTED', 'PROJECT_DEFAULT_APPLIED'] : ['IBSCBS_GROUP_OMITTED'],
            lacks: ['<IBSCBS>'],
            contains: ['<cNBS>115029000</cNBS>'],
          },
    };
    runCase(c);
  });

  it('01.01 with NBS 1.1502.90.00 (regime 1) lists 000001, 200043 and 200044 with their CST', () => {
    const result = checkInvoiceRequest(
      body((b) => (b.servico.nbs = '115029000')),
      project(),
      { now: NOW },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('IBSCBS_FRAMING_AMBIGUOUS');
    expect((result.details as { combinations: unknown[] }).combinations).toEqual([
      { nbs: '115029000', indicadorOperacao: '100301', classificacaoTributaria: '000001', cst: '000' },
      { nbs: '115029000', indicadorOperacao: '100301', classificacaoTributaria: '200043', cst: '200' },
      { nbs: '115029000', indicadorOperacao: '100301', classificacaoTributaria: '200044', cst: '200' },
    ]);
  });

  const dataCases: RuleCase[] = [
    {
      name: 'Simples with a classification in the request: the framing must resolve (ambiguous → 400)',
      project: SIMPLES,
      body: body((b) => (b.valores.ibscbs = { indicadorOperacao: '100301' })),
      expect: { ok: false, code: 'IBSCBS_FRAMING_AMBIGUOUS', fields: ['valores.ibscbs'] },
    },
    {
      name: 'Simples with consumidorFinal only in servico.ibscbs: a datum, so the framing must resolve',
      project: SIMPLES,
      body: body((b) => (b.servico.ibscbs = { consumidorFinal: '1' })),
      expect: { ok: false, code: 'IBSCBS_FRAMING_AMBIGUOUS', fields: ['valores.ibscbs'] },
    },
    {
      name: 'Simples with project defaults: the framing resolves from them, told back',
      project: { ...SIMPLES, defaultNbs: '115029000', defaultClassificacaoTributaria: '200043' },
      body: body(),
      expect: {
        ok: true,
        warnings: ['PROJECT_DEFAULT_APPLIED', 'PROJECT_DEFAULT_APPLIED'],
        contains: ['<cClassTrib>200043</cClassTrib>', '<CST>200</CST>', '<cNBS>115029000</cNBS>'],
      },
    },
    {
      name: 'Simples with a full framing in the request: declared',
      project: SIMPLES,
      body: body((b) => {
        b.servico.nbs = '115029000';
        b.valores.ibscbs = { classificacaoTributaria: '200044', indicadorOperacao: '100301' };
      }),
      expect: { ok: true, warnings: [], contains: ['<cClassTrib>200044</cClassTrib>'] },
    },
    {
      name: 'regime 1 with a single framing in the annex (17.08): resolved automatically',
      body: body((b) => (b.servico.codigo = '170801')),
      expect: { ok: true, warnings: [], contains: ['<cClassTrib>000001</cClassTrib>', '<cIndOp>100301</cIndOp>'] },
    },
    {
      name: 'regime 1, item outside Anexo VIII (99.01): group omitted and told',
      body: body((b) => {
        b.servico.codigo = '990101';
        b.valores.aliquotaIss = 0;
        b.valores.tribISSQN = 4;
      }),
      expect: { ok: true, warnings: ['IBSCBS_GROUP_OMITTED'], lacks: ['<IBSCBS>'] },
    },
    {
      name: 'regime 1 before 08/2026 without data: not obliged, omitted',
      body: body((b) => (b.competencia = '2026-06')),
      expect: { ok: true, warnings: ['IBSCBS_GROUP_OMITTED'], lacks: ['<IBSCBS>'] },
    },
    {
      name: 'a classification that is not a framing of the item: the field named',
      body: body((b) => (b.valores.ibscbs = { nbs: '115021000', classificacaoTributaria: '200043' })),
      expect: { ok: false, code: 'VALIDATION_FAILED', fields: ['valores.ibscbs.classificacaoTributaria'] },
    },
  ];
  it.each(dataCases.map((c) => [c.name, c] as const))('%s', (_name, c) => runCase(c));
});

describe('item 1: every subitem of Anexo VIII (official CSV), regime 1 obliged, no IBS/CBS data', () => {
  const subitems = [...FRAMINGS.keys()].filter((s) => FIRST_CODE.has(s)).sort();
  it('covers the annex', () => {
    expect(subitems.length).toBeGreaterThanOrEqual(150);
  });
  it.each(subitems)('%s: resolved when the annex gives one framing, else 400 listing them all', (subitem) => {
    const code = FIRST_CODE.get(subitem)!;
    const expected = [...FRAMINGS.get(subitem)!].sort();
    const b = withRequiredGroups(
      body((x) => {
        x.servico.codigo = code;
      }),
      code,
    );
    const prj = project();
    const result = checkInvoiceRequest(b, prj, { now: NOW });
    if (expected.length === 1) {
      if (!result.ok) throw new Error(`${code}: ${JSON.stringify(result.errors)}`);
      const [nbs, op, ct] = expected[0]!.split('|');
      expect(result.value.ibscbs).toMatchObject({ nbs, indicadorOperacao: op, classificacaoTributaria: ct });
      const xml = expectIssuable(prj, result.value);
      expect(xml).toContain(`<cClassTrib>${ct}</cClassTrib>`);
      expect(xml).toContain(`<CST>${findClassificacaoTributaria(ct!)!.cst}</CST>`);
    } else {
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.code).toBe('IBSCBS_FRAMING_AMBIGUOUS');
      const listed = (result.details as { combinations: Record<string, string>[] }).combinations;
      expect(listed.map((c) => `${c.nbs}|${c.indicadorOperacao}|${c.classificacaoTributaria}`).sort()).toEqual(
        expected,
      );
      for (const c of listed) expect(c.cst).toBe(findClassificacaoTributaria(c.classificacaoTributaria!)!.cst);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Items 2 and 3: spec-only bodies and warnings
// ---------------------------------------------------------------------------------------------------------------

describe('items 2 and 3: spec-conformant bodies issue, every adjustment told back', () => {
  const foreign = (change: (b: Body) => void = () => {}) =>
    body((b) => {
      b.tomador = structuredClone(SPEC_FOREIGN_TAKER) as Body['tomador'];
      b.servico.nbs = '115021000';
      b.valores.aliquotaIss = 0;
      b.valores.exportacao = { ...EXPORT } as Body['valores']['exportacao'];
      change(b);
    });
  const cases: RuleCase[] = [
    {
      name: 'spec-only foreign taker (Simples): region and district defaulted',
      project: SIMPLES,
      body: foreign(),
      expect: {
        ok: true,
        warnings: ['FOREIGN_ADDRESS_DEFAULT_APPLIED', 'FOREIGN_ADDRESS_DEFAULT_APPLIED', 'IBSCBS_GROUP_OMITTED'],
        contains: [
          '<NIF>DE811234567</NIF>',
          '<endExt><cPais>DE</cPais><cEndPost>10117</cEndPost><xCidade>Berlin</xCidade><xEstProvReg>Berlin</xEstProvReg></endExt>',
          '<xBairro>Não informado</xBairro>',
          '<tribISSQN>3</tribISSQN>',
        ],
      },
    },
    {
      name: 'spec-only foreign taker (regime 1): the export is not framed from the table',
      body: foreign(),
      expect: {
        ok: true,
        warnings: ['FOREIGN_ADDRESS_DEFAULT_APPLIED', 'FOREIGN_ADDRESS_DEFAULT_APPLIED', 'IBSCBS_GROUP_OMITTED'],
        lacks: ['<IBSCBS>'],
      },
    },
    {
      name: 'foreign taker with the extension estadoProvincia and bairro: no default',
      project: SIMPLES,
      body: foreign((b) => {
        Object.assign(b.tomador.endereco!, { estadoProvincia: 'Land Berlin', bairro: 'Mitte' });
      }),
      expect: {
        ok: true,
        warnings: ['IBSCBS_GROUP_OMITTED'],
        contains: ['<xEstProvReg>Land Berlin</xEstProvReg>', '<xBairro>Mitte</xBairro>'],
      },
    },
    {
      name: 'foreign taker with a real uf: it is the region',
      project: SIMPLES,
      body: foreign((b) => {
        b.tomador.endereco = { ...SPEC_FOREIGN_TAKER.endereco, pais: 'US', uf: 'TX', cidade: 'Austin', cep: '78701' };
        b.valores.exportacao!.paisResultado = 'US';
      }),
      expect: {
        ok: true,
        warnings: ['FOREIGN_ADDRESS_DEFAULT_APPLIED', 'IBSCBS_GROUP_OMITTED'],
        contains: ['<xEstProvReg>TX</xEstProvReg>'],
      },
    },
    {
      name: 'foreign taker without NIF (motivoNaoNif 2)',
      project: SIMPLES,
      body: foreign((b) => {
        b.tomador = { motivoNaoNif: 2, nome: 'Cliente', endereco: { ...SPEC_FOREIGN_TAKER.endereco } };
      }),
      expect: { ok: true, contains: ['<cNaoNIF>2</cNaoNIF>'] },
    },
    {
      name: 'NIF taker with a Brazilian address: refused naming pais',
      project: SIMPLES,
      body: foreign((b) => (b.tomador.endereco = { ...TAKER.endereco })),
      expect: { ok: false, fields: ['tomador.endereco.pais'] },
    },
    {
      name: "uf 'EX' without pais: refused naming pais",
      project: SIMPLES,
      body: foreign((b) => {
        const { pais: _pais, ...rest } = SPEC_FOREIGN_TAKER.endereco;
        b.tomador.endereco = rest;
      }),
      // without pais the address is Brazilian: EX, the postal code and the city are all wrong there
      expect: {
        ok: false,
        fields: ['tomador.endereco.pais', 'tomador.endereco.cep', 'tomador.endereco.cidade', 'tomador.endereco.pais'],
      },
    },
    {
      name: 'federal fields from a Simples provider: ignored, one warning per field',
      project: SIMPLES,
      body: body((b) => {
        b.valores.pisCofins = { cst: '01', aliquotaPis: 0.65, aliquotaCofins: 3 };
        b.valores.retencaoIrrf = 15;
      }),
      expect: {
        ok: true,
        warnings: ['FEDERAL_TAXES_IGNORED', 'FEDERAL_TAXES_IGNORED', 'IBSCBS_GROUP_OMITTED'],
        lacks: ['<tribFed>'],
      },
    },
    {
      name: 'federal fields from a MEI provider: ignored',
      project: { regimeTributario: '2' },
      body: body((b) => {
        b.valores.aliquotaIss = 0;
        b.valores.retencaoCsll = 5;
      }),
      expect: { ok: true, warnings: ['FEDERAL_TAXES_IGNORED', 'IBSCBS_GROUP_OMITTED'] },
    },
    {
      name: 'service code with dots: normalised',
      project: SIMPLES,
      body: body((b) => (b.servico.codigo = '01.01.01')),
      expect: { ok: true, warnings: ['SERVICE_CODE_NORMALIZED', 'IBSCBS_GROUP_OMITTED'] },
    },
    {
      name: 'four zeros: normalised to 000000 (rental of movable goods)',
      project: SIMPLES,
      body: body((b) => {
        b.servico.codigo = '0000';
        b.valores.aliquotaIss = 0;
      }),
      expect: { ok: true, warnings: ['SERVICE_CODE_NORMALIZED', 'IBSCBS_GROUP_OMITTED'] },
    },
    {
      name: 'no servico.codigo: the project code, told back',
      project: SIMPLES,
      body: body((b) => delete (b.servico as { codigo?: string }).codigo),
      expect: { ok: true, warnings: ['PROJECT_DEFAULT_APPLIED', 'IBSCBS_GROUP_OMITTED'] },
    },
    {
      name: 'PIS/COFINS from the project defaults (regime 1): told back',
      project: { cstPisCofins: '01', aliquotaPis: 0.65, aliquotaCofins: 3 },
      body: body((b) => (b.servico.codigo = '170801')),
      expect: { ok: true, warnings: ['PROJECT_DEFAULT_APPLIED'], contains: ['<CST>01</CST>'] },
    },
    {
      name: 'tipoEnteGovernamental 9: not expressible, omitted and told',
      body: body((b) => {
        b.servico.codigo = '170801';
        b.valores.ibscbs = { tipoEnteGovernamental: 9 };
      }),
      expect: { ok: true, warnings: ['TIPO_ENTE_GOVERNAMENTAL_NOT_EXPRESSIBLE'], lacks: ['<tpEnteGov>'] },
    },
    {
      name: 'tipoEnteGovernamental "4" (string alternative of the spec)',
      body: body((b) => {
        b.servico.codigo = '170801';
        b.valores.ibscbs = { tipoEnteGovernamental: '4', tipoOperacao: '3', consumidorFinal: '1' };
      }),
      expect: { ok: true, warnings: [], contains: ['<tpEnteGov>4</tpEnteGov>', '<tpOper>3</tpOper>'] },
    },
    {
      name: 'regime 3e without regimeIss: regApTribSN 2 assumed, told back',
      project: { regimeTributario: '3e' },
      body: body(),
      expect: { ok: true, warnings: ['PROJECT_DEFAULT_APPLIED', 'IBSCBS_GROUP_OMITTED'] },
    },
    {
      name: 'export with the project IBS/CBS defaults: not applied, told back',
      project: { defaultIndicadorOperacao: '100301', defaultClassificacaoTributaria: '000001' },
      body: foreign(
        (b) => (b.tomador.endereco = { ...SPEC_FOREIGN_TAKER.endereco, estadoProvincia: 'Berlin', bairro: 'Mitte' }),
      ),
      expect: { ok: true, warnings: ['PROJECT_DEFAULT_IGNORED', 'IBSCBS_GROUP_OMITTED'] },
    },
  ];
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => runCase(c));
});

// ---------------------------------------------------------------------------------------------------------------
// Item 6: ISS rate bounds and the incidence table
// ---------------------------------------------------------------------------------------------------------------

describe('item 6: statutory ISS rate bounds, before a number is spent', () => {
  const rate = (
    name: string,
    code: string,
    aliquotaIss: number,
    ok: boolean,
    projectOverrides: Partial<ProjectFiscalProfile> = SIMPLES_OUTSIDE_DAS,
    extra: (b: Body) => void = () => {},
  ): RuleCase => ({
    name,
    project: projectOverrides,
    body: withRequiredGroups(
      body((b) => {
        b.servico.codigo = code;
        b.valores.aliquotaIss = aliquotaIss;
        if (findServiceCode(code)!.incidence === 'LP') b.servico.localPrestacao = RIO;
        extra(b);
      }),
      code,
    ),
    expect: ok ? { ok: true } : { ok: false, fields: ['valores.aliquotaIss'] },
  });
  const cases: RuleCase[] = [
    {
      ...rate('01.01 at 1 % (regime 1)', '010101', 1, false, {}),
      expect: { ok: false, fields: ['valores.aliquotaIss'], message: /E0429.*between 2 and 5/ },
    },
    rate('01.01 at 1.99 %', '010101', 1.99, false),
    rate('01.01 at 2 %', '010101', 2, true),
    rate('01.01 at 3.5 %', '010101', 3.5, true),
    rate('01.01 at 5 %', '010101', 5, true),
    {
      ...rate('01.01 at 5.01 %', '010101', 5.01, false),
      expect: { ok: false, fields: ['valores.aliquotaIss'], message: /E0595/ },
    },
    rate('01.01 at 0 % while taxable (regime 1)', '010101', 0, false, {}),
    rate('07.02 at 1 % (art. 8-A §1 exception)', '070201', 1, true),
    rate('07.05 at 0.5 % (exception)', '070501', 0.5, true),
    rate('16.01 at 1 % (exception)', '160101', 1, true),
    rate('16.02 at 1 % (not an exception)', '160201', 1, false),
    rate('07.04 at 1 % (not an exception)', '070401', 1, false),
    rate('17.08 at 1.5 %', '170801', 1.5, false),
    rate('Simples in the DAS without withholding: rate not declared, any 0-5', '010101', 1, true, SIMPLES),
    rate(
      'Simples with withholding at 1.8 % (E0621/E0628)',
      '010101',
      1.8,
      true,
      SIMPLES,
      (b) => (b.valores.issRetido = true),
    ),
    rate('Simples with withholding at 1.5 %', '010101', 1.5, false, SIMPLES, (b) => (b.valores.issRetido = true)),
    rate('MEI: no rate declared', '010101', 0, true, { regimeTributario: '2' }),
    rate('immunity with a rate: must be 0', '010101', 2, false, SIMPLES, (b) => {
      b.valores.tribISSQN = 2;
      b.valores.tipoImunidade = 1;
    }),
    rate('immunity at 0 %', '010101', 0, true, SIMPLES, (b) => {
      b.valores.tribISSQN = 2;
      b.valores.tipoImunidade = 1;
    }),
    rate('no incidence at 0 %', '010101', 0, true, SIMPLES, (b) => (b.valores.tribISSQN = 4)),
  ];
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => runCase(c));
});
/** A Simples ME/EPP paying the ISS outside the DAS (regApTribSN 2): the statutory bounds bind it. */
const SIMPLES_OUTSIDE_DAS: Partial<ProjectFiscalProfile> = { regimeTributario: '3', regimeIss: 2 };

describe('item 6: the place of ISS incidence of every code against Anexo I (MUN.INCID_INFO.SERV.)', () => {
  const rows = readCsv('incidencia_issqn_por_cTribNac_anexo_i.csv');
  /** Codes of the national list the annex sheet lacks, with the place LC 116/2003 gives them. */
  const SUPPLEMENT: Record<string, 'EP' | 'LP'> = { '141403': 'EP', '141404': 'EP', '200102': 'LP' };
  const expected = new Map<string, 'EP' | 'LP' | 'ET' | null>();
  for (const r of rows) {
    const summary = r.local_incidencia_resumo;
    // 200101 is marked "(**) X" in the LP column without a summary
    const place = summary || (r.LP_local_prestacao!.includes('X') ? 'LP' : '');
    expected.set(r.cTribNac!, place === 'EP' || place === 'LP' || place === 'ET' ? place : null);
  }
  for (const [code, place] of Object.entries(SUPPLEMENT)) expected.set(code, place);

  it.each([...expected.entries()])('%s → %s', (code, place) => {
    expect(findServiceCode(code)?.incidence).toBe(place);
  });

  it('every code of the national list has its place, and the counts are documented against the spec', () => {
    const codes = listServiceCodes().filter((c) => c.code !== '000000');
    expect(codes.map((c) => c.code).sort()).toEqual([...expected.keys()].sort());
    const byCode: Record<string, number> = {};
    for (const c of codes) byCode[String(c.incidence)] = (byCode[String(c.incidence)] ?? 0) + 1;
    expect(byCode).toEqual({ EP: 282, LP: 54, ET: 1, null: 1 });
    // the annex sheet alone: 280 EP, 52 LP + 200101 "(**)", 1 ET, 990101 unmarked
    const sheet: Record<string, number> = {};
    for (const r of rows) sheet[r.local_incidencia_resumo || '-'] = (sheet[r.local_incidencia_resumo || '-'] ?? 0) + 1;
    expect(sheet).toEqual({ EP: 280, LP: 52, ET: 1, '-': 2 });
    // per LC 116 subitem (201): 16.01 is split (160101 at the provider, 160102-160104 at the place of service)
    const places = new Map<string, Set<string>>();
    for (const c of codes) places.set(c.subitem, (places.get(c.subitem) ?? new Set()).add(String(c.incidence)));
    const bySubitem: Record<string, number> = {};
    for (const set of places.values()) {
      const key = [...set].sort().join('+');
      bySubitem[key] = (bySubitem[key] ?? 0) + 1;
    }
    expect(bySubitem).toEqual({ EP: 160, LP: 38, 'EP+LP': 1, ET: 1, null: 1 });
    // spec 2.7: "277 subitems at the provider, 58 at the place of service" (335 in all) does not match the annex
    expect(byCode.EP).not.toBe(277);
    expect(byCode.LP).not.toBe(58);
  });

  it('20.01.02 (port services in marine waters) goes to the place of service like 20.01.01', () => {
    expect(findServiceCode('200101')!.incidence).toBe('LP');
    expect(findServiceCode('200102')!.incidence).toBe('LP');
    const prj = project(SIMPLES);
    const result = checkInvoiceRequest(
      body((b) => {
        b.servico.codigo = '200102';
        b.servico.localPrestacao = NITEROI;
      }),
      prj,
      { now: NOW },
    );
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.value.servico.municipioIncidencia).toBe(NITEROI);
    expect(expectIssuable(prj, result.value)).toContain(`<cLocPrestacao>${NITEROI}</cLocPrestacao>`);
  });

  const lpCodes = [...expected.entries()].filter(([, p]) => p === 'LP').map(([c]) => c);
  it.each(lpCodes)('%s performed in Niterói: incidence there, DPS XSD-valid', (code) => {
    const prj = project(SIMPLES);
    const b = withRequiredGroups(
      body((x) => {
        x.servico.codigo = code;
        x.servico.localPrestacao = NITEROI;
      }),
      code,
    );
    const result = checkInvoiceRequest(b, prj, { now: NOW });
    if (!result.ok) throw new Error(`${code}: ${JSON.stringify(result.errors)}`);
    expect(result.value.servico.municipioIncidencia).toBe(NITEROI);
    expectIssuable(prj, result.value);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Over HTTP: item 4 (strict types) and the must-shows of items 1-3
// ---------------------------------------------------------------------------------------------------------------

describe('over HTTP: strict fiscal types, warnings in the 202 / batch / status, spec-only bodies issue', () => {
  let t: TestService;
  let regular: OnboardedProject;
  let simples: OnboardedProject;
  // Recife: national-adherent and not parametrised in the sandbox ADN, so only the rules' own warnings appear
  // (municipal breakdowns have their own suite, test/issuing/municipal-breakdowns.test.ts)
  const home = {
    codigoMunicipio: '2611606',
    endereco: {
      logradouro: 'Avenida Guararapes',
      numero: '100',
      bairro: 'Santo Antônio',
      cidade: 'Recife',
      uf: 'PE',
      cep: '50010000',
    },
  };
  beforeAll(async () => {
    t = await startTestService();
    regular = await onboardProject(t, {
      project: {
        ...home,
        defaultNbs: null,
        defaultIndicadorOperacao: null,
        defaultClassificacaoTributaria: null,
        defaultCstIbscbs: null,
      },
    });
    simples = await onboardProject(t, {
      cnpj: '11222333000262',
      project: {
        ...home,
        regimeTributario: '3',
        aliquotaSimples: 6,
        defaultNbs: null,
        defaultIndicadorOperacao: null,
        defaultClassificacaoTributaria: null,
        defaultCstIbscbs: null,
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const strict: [string, (b: Body) => void, string][] = [
    ['total true', (b) => ((b.valores as Record<string, unknown>).total = true), 'valores.total'],
    ['total "100"', (b) => ((b.valores as Record<string, unknown>).total = '100'), 'valores.total'],
    ['total [100]', (b) => ((b.valores as Record<string, unknown>).total = [100]), 'valores.total'],
    ['total null', (b) => ((b.valores as Record<string, unknown>).total = null), 'valores.total'],
    ['aliquotaIss null', (b) => ((b.valores as Record<string, unknown>).aliquotaIss = null), 'valores.aliquotaIss'],
    ['aliquotaIss "2"', (b) => ((b.valores as Record<string, unknown>).aliquotaIss = '2'), 'valores.aliquotaIss'],
    ['issRetido "true"', (b) => ((b.valores as Record<string, unknown>).issRetido = 'true'), 'valores.issRetido'],
    ['issRetido 1', (b) => ((b.valores as Record<string, unknown>).issRetido = 1), 'valores.issRetido'],
    ['tribISSQN "1"', (b) => ((b.valores as Record<string, unknown>).tribISSQN = '1'), 'valores.tribISSQN'],
    [
      'exportacao.compartilharMdic "false"',
      (b) => ((b.valores as Record<string, unknown>).exportacao = { ...EXPORT, compartilharMdic: 'false' }),
      'valores.exportacao.compartilharMdic',
    ],
    [
      'pisCofins.aliquotaPis "0.65"',
      (b) => ((b.valores as Record<string, unknown>).pisCofins = { cst: '01', aliquotaPis: '0.65' }),
      'valores.pisCofins.aliquotaPis',
    ],
    ['retencaoIrrf "10"', (b) => ((b.valores as Record<string, unknown>).retencaoIrrf = '10'), 'valores.retencaoIrrf'],
    [
      'consumidorFinal "yes"',
      (b) => (b.valores.ibscbs = { consumidorFinal: 'yes' } as never),
      'valores.ibscbs.consumidorFinal',
    ],
    ['tipoOperacao "7"', (b) => (b.valores.ibscbs = { tipoOperacao: '7' } as never), 'valores.ibscbs.tipoOperacao'],
    ['tomador.nome 123', (b) => ((b.tomador as Record<string, unknown>).nome = 123), 'tomador.nome'],
  ];
  it.each(strict)('%s → 400 naming the field, nothing queued', async (_name, change, field) => {
    const res = await t.request('POST', '/emitir', { key: simples.apiKey, body: body(change) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('the same coercible values in a batch item are refused naming the item', async () => {
    const res = await t.request('POST', '/emitir/batch', {
      key: simples.apiKey,
      body: { items: [body(), body((b) => ((b.valores as Record<string, unknown>).total = '100'))] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('items.1.valores.total');
  });

  it('org routes still coerce their querystrings', async () => {
    const res = await t.request('GET', '/org/projects?page=1&limit=5', { key: regular.orgToken });
    expect(res.status, res.text).toBe(200);
  });

  it('01.01 with NBS 1.1502.90.00: 400 listing 000001, 200043, 200044 (regime 1); 202 with a warning (Simples)', async () => {
    const request = body((b) => (b.servico.nbs = '115029000'));
    const refused = await t.request('POST', '/emitir', { key: regular.apiKey, body: request });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('IBSCBS_FRAMING_AMBIGUOUS');
    expect(
      refused.body.combinations.map((c: { classificacaoTributaria: string }) => c.classificacaoTributaria),
    ).toEqual(['000001', '200043', '200044']);
    for (const c of refused.body.combinations)
      expect(Object.keys(c).sort()).toEqual(['classificacaoTributaria', 'cst', 'indicadorOperacao', 'nbs']);

    const accepted = await t.request('POST', '/emitir', {
      key: simples.apiKey,
      body: request,
      headers: { 'idempotency-key': 'simples-0101' },
    });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body.warnings).toEqual([
      expect.objectContaining({ code: 'IBSCBS_GROUP_OMITTED', field: 'valores.ibscbs' }),
    ]);
    // an idempotent replay returns the same warnings
    const replay = await t.request('POST', '/emitir', {
      key: simples.apiKey,
      body: request,
      headers: { 'idempotency-key': 'simples-0101' },
    });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(accepted.body);
    const status = await waitForInvoice(t, simples.apiKey, accepted.body.invoiceId, 30_000);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.warnings).toEqual(accepted.body.warnings);
  });

  it('a spec-only foreign taker is issued, with its defaults told in the 202 and the status', async () => {
    const res = await t.request('POST', '/emitir', {
      key: simples.apiKey,
      body: body((b) => {
        b.tomador = structuredClone(SPEC_FOREIGN_TAKER) as Body['tomador'];
        b.servico.nbs = '115021000';
        b.valores.aliquotaIss = 0;
        b.valores.exportacao = { ...EXPORT } as Body['valores']['exportacao'];
      }),
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body.warnings.map((w: { field: string }) => w.field)).toEqual(
      expect.arrayContaining(['tomador.endereco.estadoProvincia', 'tomador.endereco.bairro']),
    );
    const status = await waitForInvoice(t, simples.apiKey, res.body.invoiceId, 30_000);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.warnings).toEqual(res.body.warnings);
  });

  it('a batch answers each item with its invoiceId and its warnings', async () => {
    const res = await t.request('POST', '/emitir/batch', {
      key: simples.apiKey,
      body: {
        items: [
          body(),
          body((b) => {
            b.valores.retencaoIrrf = 10;
          }),
        ],
      },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body.items).toHaveLength(2);
    expect(res.body.items[0].warnings.map((w: { code: string }) => w.code)).toEqual(['IBSCBS_GROUP_OMITTED']);
    expect(res.body.items[1].warnings.map((w: { code: string }) => w.code).sort()).toEqual([
      'FEDERAL_TAXES_IGNORED',
      'IBSCBS_GROUP_OMITTED',
    ]);
    const status = await t.request('GET', `/invoices/${res.body.items[1].invoiceId}/status`, { key: simples.apiKey });
    expect(status.body.warnings).toEqual(res.body.items[1].warnings);
  });

  it('01.01 at 1 % is refused before a number is spent (E0429)', async () => {
    const res = await t.request('POST', '/emitir', {
      key: regular.apiKey,
      body: body((b) => {
        b.valores.aliquotaIss = 1;
        b.valores.ibscbs = { nbs: '115021000' };
      }),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'valores.aliquotaIss' })]);
    expect(res.body.errors[0].message).toContain('E0429');
  });
});
