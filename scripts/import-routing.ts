/**
 * Regenerates the municipality registry `src/engines/routing/municipalities.json` from the routing reference
 * data: ACBr's provider table (`ACBrNFSeXServicos.ini`), the national-emitter adhesion list
 * (`emissor_nacional.json`), the IBGE 2020 population estimates and the derived per-municipality CSV (its
 * `layout` column: the payload standard of each provider class, read from ACBr's Pascal units).
 *
 *   npm run import-routing -- [--routing <dir>] [--out <file>]
 *
 * `--routing` defaults to ../shared/reference/routing (or NFSE_ROUTING_DIR); `--out` to the registry file.
 *
 * Each municipality's provider, layout version and API-Própria flag are resolved with ACBr's own rules
 * (ACBrNFSeXConfiguracoes.pas): the city's `Versao` wins, else the provider section's, else 1.00; `Params` of
 * provider and city are concatenated; `APIPropria` counts only for versions 1.00 and 1.01. The result is
 * checked against the derived CSV (same provider and version for every code) and the generated registry is
 * validated against the family schemas before it is written. Provider-level endpoints and parameters are
 * written once (`providers`); a municipality keeps only what differs.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAMILIES, type FamilyId, type ProjectField } from '../src/engines/routing/families.ts';
import {
  type ProviderEntry,
  type RegistryData,
  type CityEntry,
  MunicipalityRegistry,
  type Endpoints,
} from '../src/engines/routing/municipality-registry.ts';
import { authKindOf, credentialsOf, FAMILY_DEFAULT_TRAITS, PROVIDER_TRAITS } from '../src/engines/routing/providers.ts';

function argValue(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const routingDir =
  argValue('--routing') ??
  process.env.NFSE_ROUTING_DIR ??
  new URL('../../shared/reference/routing', import.meta.url).pathname;
const outPath =
  argValue('--out') ?? fileURLToPath(new URL('../src/engines/routing/municipalities.json', import.meta.url));

/** Where each input comes from (shared/reference/routing/SOURCES.md); the sha256 is computed from the file read. */
const SOURCES = {
  ini: {
    file: 'ACBrNFSeXServicos.ini',
    repository: 'edsontmarques/ACBr (mirror of Projeto ACBr SVN)',
    path: 'Fontes/ACBrDFe/ACBrNFSeX/ACBrNFSeXServicos.ini',
    commit: '7be4dac253653c416c87830ad37980de58973fcb',
    date: '2026-06-28',
  },
  adhesion: {
    file: 'emissor_nacional.json',
    repository: 'marcosbarbosaeb/NFSE (derived from gov.br municipios-aderentes-20260928.xlsx)',
    path: 'backend/app/data/emissor_nacional.json',
    commit: '8401f8d71efff6b52f6709c6ee51011a775ff1e5',
    date: '2026-09-28',
  },
  population: {
    file: 'population/populacao-por-municipio-2020.csv',
    repository: 'turicas/covid19-br',
    path: 'covid19br/data/populacao-por-municipio-2020.csv',
    commit: 'b5dfeb19a80c8e0b58781e995e921c1ee4a7f55a',
    date: '2020 (IBGE estimates)',
  },
  derived: {
    file: 'derived/municipio_provedor_acbr_20260628.csv',
    repository: 'shared/reference/routing (derivation, see SOURCES.md)',
    path: 'derived/municipio_provedor_acbr_20260628.csv',
    commit: null,
    date: '2026-06-28',
  },
} as const;

/** Project fields a particular municipality adds to its family's (spec 1.3 / 4.8: the Federal District needs the CNAE). */
const CITY_PROJECT_FIELDS: Record<string, ProjectField[]> = { '5300108': ['cnae'] };

const raw: Record<keyof typeof SOURCES, Buffer> = {
  ini: readFileSync(join(routingDir, SOURCES.ini.file)),
  adhesion: readFileSync(join(routingDir, SOURCES.adhesion.file)),
  population: readFileSync(join(routingDir, SOURCES.population.file)),
  derived: readFileSync(join(routingDir, SOURCES.derived.file)),
};

// --- the .ini (ISO-8859-1) ---------------------------------------------------------------------------------------
const sections = new Map<string, Map<string, string>>();
{
  let current: Map<string, string> | null = null;
  for (const rawLine of raw.ini.toString('latin1').split(/\r?\n/)) {
    const line = rawLine.trim();
    if (!line || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = new Map();
      sections.set(header[1]!.trim(), current);
      continue;
    }
    const eq = line.indexOf('=');
    if (current && eq > 0) current.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
}
const citySections = [...sections].filter(([name]) => /^\d{7}$/.test(name));
const providerSections = new Map([...sections].filter(([name]) => !/^\d{7}$/.test(name)));

const skipped: string[] = [];

/** `Chave1:Valor1|Chave2:Valor2,Valor3|Booleana:` → options (a key without value is true). */
function parseParams(text: string | undefined): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const part of (text ?? '').split('|')) {
    const item = part.trim();
    if (!item) continue;
    const colon = item.indexOf(':');
    const key = (colon >= 0 ? item.slice(0, colon) : item).trim();
    const value = colon >= 0 ? item.slice(colon + 1).trim() : '';
    if (key) out[key] = value === '' ? true : value;
  }
  return out;
}

interface SectionData {
  version?: string;
  options: Record<string, string | boolean>;
  endpoints: Endpoints;
  links: { production?: string; homologation?: string };
  soap: Record<string, string>;
}

function readSection(where: string, section: Map<string, string>): SectionData {
  const data: SectionData = { options: parseParams(section.get('Params')), endpoints: {}, links: {}, soap: {} };
  const version = section.get('Versao');
  if (version && version !== '***') data.version = version;
  for (const [key, value] of section) {
    const env = /^Pro[A-Z]/.test(key) ? 'production' : /^Hom[A-Z]/.test(key) ? 'homologation' : null;
    if (!env) continue;
    const name = key.slice(3);
    if (/^LinkUrl$/i.test(name)) {
      if (value) data.links[env] = value;
    } else if (/^(NameSpace|SoapAction|XMLNameSpace)$/.test(name)) {
      if (value) data.soap[key] = value;
    } else if (value === '' || value === '*') {
      // ACBr: empty or `*` means the operation has no URL of its own (another operation is used)
    } else if (/^https?:\/\/\S+$/.test(value)) {
      const list = data.endpoints[env] ?? {};
      list[name] = value;
      data.endpoints[env] = list;
    } else skipped.push(`${where} ${key}=${value}`);
  }
  return data;
}

function compact<T extends object>(value: T): T | undefined {
  return Object.keys(value).length > 0 ? value : undefined;
}

// --- the other inputs --------------------------------------------------------------------------------------------
function parseCsv(text: string): Record<string, string>[] {
  const [header, ...lines] = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter(Boolean);
  const columns = header!.split(',');
  return lines.map((line) => {
    const cells = line.split(',');
    return Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? '']));
  });
}

const adhesion = new Set((JSON.parse(raw.adhesion.toString('utf8')) as { codigos: string[] }).codigos);
const population = new Map(
  parseCsv(raw.population.toString('utf8')).map((r) => [r.city_ibge_code!, Number(r.estimated_population)]),
);
const derived = new Map(parseCsv(raw.derived.toString('utf8')).map((r) => [r.ibge!, r]));

/** Family of a resolved (provider, layout) pair; null when ACBr maps no provider. */
function familyFor(provider: string, layout: string, apiPropria: boolean): FamilyId | null {
  if (!provider) return null;
  if (provider === 'PadraoNacional') return 'national';
  if (apiPropria || layout.startsWith('DPS')) return 'dps-provider';
  if (provider === 'Ginfes') return 'ginfes';
  if (provider === 'ISSSaoPaulo') return 'sao-paulo';
  if (provider === 'IPM' && layout === 'own layout') return 'ipm';
  if (/^ABRASF 1\./.test(layout)) return 'abrasf-v1';
  if (/^ABRASF 2\.0[0-4]$/.test(layout)) return 'abrasf-v2';
  return 'own-layout';
}

// --- resolve -----------------------------------------------------------------------------------------------------
const providers: Record<string, ProviderEntry> = {};
const providerData = new Map<string, SectionData>();
const mismatches: string[] = [];
const municipalities: Record<string, CityEntry> = {};

for (const [code, section] of citySections.sort(([a], [b]) => a.localeCompare(b))) {
  const providerName = section.get('Provedor') ?? '';
  const city = readSection(code, section);
  const row = derived.get(code);
  const entry: CityEntry = {};
  const pop = population.get(code);
  if (pop !== undefined) entry.population = pop;
  if (adhesion.has(code)) entry.nationalEmitter = true;
  if (providerName) {
    let provider = providerData.get(providerName);
    if (!provider) {
      const providerSection = providerSections.get(providerName);
      provider = providerSection
        ? readSection(providerName, providerSection)
        : { options: {}, endpoints: {}, links: {}, soap: {} };
      providerData.set(providerName, provider);
    }
    const version = city.version ?? provider.version ?? '1.00';
    // `Params=*` in a city: it does not inherit the provider's Params (e.g. SpeedGov cities still on ABRASF 1)
    const ownOptionsOnly = section.get('Params') === '*';
    if (ownOptionsOnly) city.options = {};
    const options = ownOptionsOnly ? {} : { ...provider.options, ...city.options };
    const apiPropria = options.APIPropria !== undefined && (version === '1.00' || version === '1.01');
    const layout = row?.layout ?? '';
    const family = familyFor(providerName, layout, apiPropria)!;
    if (
      row?.acbr_provedor !== providerName ||
      (row.acbr_versao_efetiva || '1.00') !== version ||
      (row.acbr_api_propria === 'S') !== apiPropria
    ) {
      mismatches.push(
        `${code}: ini ${providerName} ${version} ${apiPropria}, derived ${row?.acbr_provedor} ${row?.acbr_versao_efetiva} ${row?.acbr_api_propria}`,
      );
    }
    if (!providers[providerName]) {
      const traits = PROVIDER_TRAITS[providerName] ?? FAMILY_DEFAULT_TRAITS[family];
      providers[providerName] = {
        version: provider.version,
        options: compact(provider.options),
        endpoints: compact(provider.endpoints),
        links: compact(provider.links),
        soap: compact(provider.soap),
        transport: traits.transport,
        auth: authKindOf(traits),
        xmlSignature: traits.xmlSignature,
        credentials: credentialsOf(traits),
        traitsFrom: PROVIDER_TRAITS[providerName] ? 'provider' : 'family-default',
      };
    }
    entry.provider = providerName;
    entry.family = family;
    if (city.version && city.version !== provider.version) entry.version = city.version;
    if (city.version === undefined && version !== (provider.version ?? '1.00')) entry.version = version;
    if (ownOptionsOnly) entry.ownOptionsOnly = true;
    entry.options = compact(city.options);
    entry.endpoints = compact(city.endpoints);
    entry.links = compact(city.links);
    entry.soap = compact(city.soap);
    if (CITY_PROJECT_FIELDS[code]) entry.projectFields = CITY_PROJECT_FIELDS[code];
  } else if (row?.acbr_provedor) {
    mismatches.push(`${code}: ini without provider, derived ${row.acbr_provedor}`);
  }
  municipalities[code] = Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)) as CityEntry;
}
for (const entry of Object.values(providers)) {
  for (const key of Object.keys(entry) as (keyof ProviderEntry)[]) if (entry[key] === undefined) delete entry[key];
}

if (mismatches.length > 0) {
  throw new Error(
    `the ini and the derived CSV disagree on ${mismatches.length} codes:\n${mismatches.slice(0, 20).join('\n')}`,
  );
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const data: RegistryData = {
  format: 1,
  generatedAt: new Date().toISOString(),
  generatedBy: 'scripts/import-routing.ts (npm run import-routing)',
  sources: (Object.keys(SOURCES) as (keyof typeof SOURCES)[]).map((k) => ({ ...SOURCES[k], sha256: sha256(raw[k]) })),
  families: Object.keys(FAMILIES) as FamilyId[],
  providers,
  municipalities,
};

// validate before writing: every entry's merged parameters against its family's schema
const registry = new MunicipalityRegistry(data);
const problems = registry.validate();
if (problems.length > 0) throw new Error(`invalid registry:\n${problems.slice(0, 30).join('\n')}`);

/** Compact but diff-friendly: one provider / one municipality per line. */
const lines = [
  '{',
  ...(['format', 'generatedAt', 'generatedBy', 'sources', 'families'] as const).map(
    (k) => `  ${JSON.stringify(k)}: ${JSON.stringify(data[k])},`,
  ),
  '  "providers": {',
  Object.entries(providers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, p]) => `    ${JSON.stringify(name)}: ${JSON.stringify(p)}`)
    .join(',\n'),
  '  },',
  '  "municipalities": {',
  Object.entries(municipalities)
    .map(([code, m]) => `    ${JSON.stringify(code)}: ${JSON.stringify(m)}`)
    .join(',\n'),
  '  }',
  '}',
  '',
];
writeFileSync(outPath, lines.join('\n'));
const counts = registry.counts();
console.log(
  `wrote ${outPath} (${lines.join('\n').length} bytes): ${Object.keys(municipalities).length} municipalities`,
);
console.log(counts);
if (skipped.length > 0) console.log(`skipped ${skipped.length} values that are not URLs:\n  ${skipped.join('\n  ')}`);
