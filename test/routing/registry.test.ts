import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allMunicipalities } from '../../src/domain/municipalities.ts';
import { FAMILIES, FAMILY_IDS } from '../../src/engines/routing/families.ts';
import {
  MunicipalityRegistry,
  municipalityRegistry,
  type RegistryData,
} from '../../src/engines/routing/municipality-registry.ts';
import { coverageStatus, routeProject } from '../../src/engines/routing/route.ts';

const registry = municipalityRegistry();
const NATIONAL_ONLY = new Set(['national'] as const);

describe('the municipality registry (generated data)', () => {
  it('holds all 5,571 IBGE codes with provenance', () => {
    expect(registry.size).toBe(5571);
    expect(new Set(registry.codes())).toEqual(new Set(allMunicipalities().map((m) => m.code)));
    const files = registry.data.sources.map((s) => s.file);
    expect(files).toEqual(expect.arrayContaining(['ACBrNFSeXServicos.ini', 'emissor_nacional.json']));
    for (const s of registry.data.sources) expect(s.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(registry.data.sources.find((s) => s.file === 'ACBrNFSeXServicos.ini')).toMatchObject({
      commit: '7be4dac253653c416c87830ad37980de58973fcb',
      date: '2026-06-28',
    });
    expect(Number.isNaN(Date.parse(registry.data.generatedAt))).toBe(false);
  });

  it("validates every entry's parameters against its family's schema", () => {
    expect(registry.validate()).toEqual([]);
    expect(registry.data.families).toEqual([...FAMILY_IDS]);
  });

  it('finds the problems of an invalid entry (schema of the family, unknown provider)', () => {
    const data = structuredClone(registry.data) as RegistryData;
    data.municipalities['1100023'] = { ...data.municipalities['1100023']!, version: '9.99' };
    data.municipalities['1100015'] = {
      ...data.municipalities['1100015']!,
      endpoints: { production: { Recepcionar: 'ftp://x' } },
    };
    data.municipalities['1100031'] = { provider: 'NoSuchProvider', family: 'abrasf-v2' };
    const problems = new MunicipalityRegistry(data).validate();
    expect(problems.some((p) => p.startsWith('1100023 (abrasf-v2:fiorilli@9.99): /version'))).toBe(true);
    expect(problems.some((p) => p.startsWith('1100015') && p.includes('/endpoints/production/Recepcionar'))).toBe(true);
    expect(problems).toContain('1100031: unknown provider NoSuchProvider');
  });

  it('groups the ACBr mapping into families (figures of the 2026-06-28 table)', () => {
    expect(registry.counts()).toEqual({
      national: 2151,
      'dps-provider': 558,
      'abrasf-v2': 1488,
      'abrasf-v1': 132,
      ginfes: 15,
      'sao-paulo': 1,
      ipm: 132,
      'own-layout': 200,
      '(none)': 894,
    });
    expect(registry.find('3550308')).toMatchObject({ family: 'sao-paulo', provider: 'ISSSaoPaulo', version: '1.00' });
    // Fiorilli's provider section is API Própria (DPS) at 1.00; Ariquemes pins ABRASF 2.00 with its own URL
    const ariquemes = registry.find('1100023')!;
    expect(ariquemes).toMatchObject({ family: 'abrasf-v2', routingId: 'abrasf-v2:fiorilli@2.00' });
    expect(ariquemes.parameters!.endpoints.production).toEqual({
      Recepcionar: 'https://nfse.ariquemes.ro.gov.br/IssWeb-ejb/IssWebWS/IssWebWS',
    });
    // provider-level defaults are merged under the city's values
    const betha = registry.all().find((r) => r.provider === 'Betha')!;
    expect(betha.family).toBe('dps-provider');
    expect(betha.parameters!.endpoints.production.Recepcionar).toBe('https://nota-eletronica.betha.cloud:443/dps/ws');
    expect(betha.parameters!.options.APIPropria).toBe(true);
    // `Params=*`: SpeedGov cities that do not inherit the provider's API Própria stay on ABRASF 1.00
    const acailandia = registry.find('2100055')!;
    expect(acailandia).toMatchObject({ family: 'abrasf-v1', routingId: 'abrasf-v1:speedgov@1.00' });
    expect(acailandia.parameters!.options).toEqual({});
    expect(registry.find('2104800')).toMatchObject({ family: 'dps-provider', provider: 'SpeedGov' });
    expect(registry.find('5300108')!.parameters!.projectFields).toContain('cnae');
    expect(registry.find('3550308')!.parameters!.projectFields).toContain('codigoServicoSp');
    for (const id of FAMILY_IDS) expect(FAMILIES[id].id).toBe(id);
  });
});

const ROUTING_DIR = new URL('../../../shared/reference/routing', import.meta.url).pathname;
const runScript = (args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', ...args], { encoding: 'utf8', timeout: 120_000 });

describe('the scripts', () => {
  it.skipIf(!existsSync(ROUTING_DIR))('npm run import-routing reproduces the committed registry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'routing-'));
    try {
      const out = join(dir, 'municipalities.json');
      const run = runScript(['scripts/import-routing.ts', '--routing', ROUTING_DIR, '--out', out]);
      expect(run.status, run.stderr).toBe(0);
      const fresh = JSON.parse(readFileSync(out, 'utf8')) as RegistryData;
      expect(fresh.municipalities).toEqual(registry.data.municipalities);
      expect(fresh.providers).toEqual(registry.data.providers);
      expect(fresh.sources).toEqual(registry.data.sources);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('npm run coverage-report adds up to 5,571 municipalities and 211.76 M people', () => {
    const run = runScript(['scripts/coverage-report.ts', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.grand.municipalities).toBe(5571);
    expect(report.grand.population).toBe(211_755_692);
    // the national environment (ACBr PadraoNacional + the adhesion list), then the municipal engines implemented
    expect(report.byFamily.national.implemented.municipalities).toBe(2151 + 225);
    const municipal = report.byFamily['dps-provider'].implemented.municipalities;
    expect(municipal).toBeGreaterThanOrEqual(508); // Betha 229, Pronim 159, ABase 34, … (README, "Routing and coverage")
    // the total is the families' sum (each family counts only the cities its engines serve)
    const families = Object.values(report.byFamily) as { implemented: { municipalities: number } }[];
    expect(report.total.implemented.municipalities).toBe(
      families.reduce((n, f) => n + f.implemented.municipalities, 0),
    );
    expect(report.total.nationalOnly.municipalities).toBe(669);
    expect(report.total.implemented.municipalities + report.total.mapped.municipalities).toBe(5571 - 669);
    expect(report.byFamily['sao-paulo'].implemented).toEqual({ municipalities: 1, population: 12_325_232 });
    // the national emitter by the project's choice (emissorNacional): a part of "mapped", never of "implemented"
    expect(report.total.byChoice.municipalities).toBe(131);
    expect(report.total.byChoice.municipalities).toBeLessThanOrEqual(report.total.mapped.municipalities);
    expect(report.byFamily.national.byChoice.municipalities).toBe(0);
    expect(report.byChoiceProviders).toMatchObject({ Tecnos: 29, Citta: 17, Adm: 9 });
  });
});

describe('routing (pure)', () => {
  const route = (codigoMunicipio: string | null, regimeTributario: '1' | '2' | '3' | '3e' | null) =>
    routeProject({ codigoMunicipio, regimeTributario }, registry, NATIONAL_ONLY);

  it('MEI always goes to the national environment', () => {
    for (const code of ['3550308', '3509502', '2303709', '3304557', '4300471']) {
      expect(route(code, '2')).toMatchObject({ ok: true, family: 'national', reason: 'mei' });
    }
  });

  it('a national-adherent municipality goes to the national environment for every regime', () => {
    for (const regime of ['1', '3', '3e', null] as const) {
      expect(route('3304557', regime)).toMatchObject({ ok: true, family: 'national', reason: 'national-adherent' });
      // not mapped by ACBr, flagged in the adhesion list
      expect(route('1300029', regime)).toMatchObject({ ok: true, family: 'national', reason: 'national-adherent' });
    }
  });

  it('an own engine that is not implemented refuses non-MEI, even when the adhesion flag is set (São Paulo)', () => {
    expect(route('3550308', '1')).toMatchObject({ ok: false, family: 'sao-paulo', status: 'covered' });
    expect(route('3509502', '3')).toMatchObject({ ok: false, family: 'abrasf-v2', status: 'covered' });
    expect(route('2303709', '1')).toMatchObject({ ok: false, family: null, status: 'national_only_mei' });
    expect(route('4300471', '1')).toMatchObject({ ok: false, family: 'dps-provider', status: 'not_covered' });
    const refused = route('3509502', '1');
    expect(!refused.ok && refused.message).toContain('ISSCampinas');
  });

  it("routes to a municipal provider's engine once it is implemented (one engine per provider of a family)", () => {
    const withCampinas = new Set(['national', 'abrasf-v2:isscampinas']);
    expect(routeProject({ codigoMunicipio: '3509502', regimeTributario: '3' }, registry, withCampinas)).toMatchObject({
      ok: true,
      family: 'abrasf-v2',
      engine: 'abrasf-v2:isscampinas',
      reason: 'municipal-engine',
    });
    // another provider of the same family is not served by it
    const otherProvider = new Set(['national', 'abrasf-v2:fiorilli']);
    expect(routeProject({ codigoMunicipio: '3509502', regimeTributario: '3' }, registry, otherProvider)).toMatchObject({
      ok: false,
      family: 'abrasf-v2',
      status: 'covered',
    });
    // a provider without a production web service stays refused
    const citta = routeProject(
      { codigoMunicipio: '4300471', regimeTributario: '3' },
      registry,
      new Set(['national', 'dps-provider:citta']),
    );
    expect(citta).toMatchObject({ ok: false, status: 'not_covered' });
  });

  it('a provider of unknown layout (no family) is not_covered', () => {
    const data = structuredClone(registry.data) as RegistryData;
    data.providers.NewProvider = { ...data.providers.Betha!, traitsFrom: 'family-default' };
    data.municipalities['2303709'] = { provider: 'NewProvider' };
    const entry = new MunicipalityRegistry(data).find('2303709')!;
    expect(coverageStatus(entry)).toBe('not_covered');
  });
});
