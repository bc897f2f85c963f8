/**
 * Prints municipalities and population per engine family and in total, split into
 *   implemented            — this service issues there today for every regime;
 *   mapped, not implemented — an engine family serves every regime there, not implemented here yet
 *                             (incl. providers without a known production web service: `not_covered`);
 *   national-only (MEI)     — no municipal provider known and not adherent: only MEI issues there.
 * and, reported apart (a part of "mapped, not implemented", never added to "implemented"):
 *   national emitter by the project's choice — mapped, not implemented, and adherent to the national emitter: a
 *                             project there issues only if it sets `emissorNacional: true` (the national environment
 *                             instead of the municipality's own system).
 *
 *   npm run coverage-report [-- --json]
 *
 * The implemented families are the engine registry's `IMPLEMENTED_FAMILIES` (src/engines/registry.ts), the keys
 * of its typed engine map.
 */
import { ENGINE_DEFINITIONS, IMPLEMENTED_FAMILIES } from '../src/engines/registry.ts';
import { FAMILY_IDS } from '../src/engines/routing/families.ts';
import { municipalityRegistry } from '../src/engines/routing/municipality-registry.ts';
import {
  coverageStatus,
  engineKeyOf,
  familyForEveryRegime,
  nationalEmitterByChoice,
} from '../src/engines/routing/route.ts';

const IMPLEMENTED: ReadonlySet<string> = new Set(IMPLEMENTED_FAMILIES);
/** implemented, and serving that municipality (a definition may cover only some cities of its provider) */
const serves = (engine: string, municipality: string) =>
  IMPLEMENTED.has(engine) && (ENGINE_DEFINITIONS[engine]?.serves?.(municipality) ?? true);

type Bucket = 'implemented' | 'mapped' | 'nationalOnly';
/** `byChoice`: of `mapped`, those where a project can choose the national emitter (emissorNacional) */
type Column = Bucket | 'byChoice';
interface Tally {
  municipalities: number;
  population: number;
}
const empty = (): Record<Column, Tally> => ({
  implemented: { municipalities: 0, population: 0 },
  mapped: { municipalities: 0, population: 0 },
  nationalOnly: { municipalities: 0, population: 0 },
  byChoice: { municipalities: 0, population: 0 },
});

const registry = municipalityRegistry();
const byFamily = new Map<string, Record<Column, Tally>>();
/** mapped-not-implemented municipalities a project can serve by choosing the national emitter, by provider */
const byChoiceProviders = new Map<string, number>();
const total = empty();
let notCovered = { municipalities: 0, population: 0 };

for (const route of registry.all()) {
  const serving = familyForEveryRegime(route);
  const status = coverageStatus(route);
  const bucket: Bucket =
    serving && serves(engineKeyOf(serving, serving === 'national' ? null : route.provider), route.code)
      ? 'implemented'
      : status === 'national_only_mei'
        ? 'nationalOnly'
        : 'mapped';
  const key = serving ?? route.family ?? '(no provider)';
  const row = byFamily.get(key) ?? empty();
  byFamily.set(key, row);
  const population = route.population ?? 0;
  const columns: Column[] = [bucket];
  if (bucket === 'mapped' && nationalEmitterByChoice(route) && serves('national', route.code)) {
    columns.push('byChoice');
    const provider = route.provider ?? '(unknown)';
    byChoiceProviders.set(provider, (byChoiceProviders.get(provider) ?? 0) + 1);
  }
  for (const column of columns) {
    for (const t of [row[column], total[column]]) {
      t.municipalities++;
      t.population += population;
    }
  }
  if (status === 'not_covered') {
    notCovered = { municipalities: notCovered.municipalities + 1, population: notCovered.population + population };
  }
}

const grand = [total.implemented, total.mapped, total.nationalOnly].reduce(
  (a, t) => ({ municipalities: a.municipalities + t.municipalities, population: a.population + t.population }),
  { municipalities: 0, population: 0 },
);

if (process.argv.includes('--json')) {
  console.log(
    JSON.stringify(
      {
        generatedAt: registry.data.generatedAt,
        byFamily: Object.fromEntries(byFamily),
        total,
        grand,
        notCovered,
        byChoiceProviders: Object.fromEntries(byChoiceProviders),
      },
      null,
      2,
    ),
  );
} else {
  const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1).padStart(5)} %`;
  const millions = (n: number) => `${(n / 1e6).toFixed(2).padStart(7)} M`;
  const cell = (t: Tally) =>
    `${String(t.municipalities).padStart(5)} ${pct(t.municipalities, grand.municipalities)} ${millions(t.population)} ${pct(t.population, grand.population)}`;
  const head = (s: string) => s.padEnd(34);
  const src = registry.data.sources.map((s) => `${s.file} (${s.date})`).join(', ');
  console.log(`Municipality registry generated ${registry.data.generatedAt} from ${src}`);
  console.log(`Implemented families: ${[...IMPLEMENTED].join(', ')}\n`);
  console.log(
    `${head('family')}${'implemented'.padEnd(34)}${'mapped, not implemented'.padEnd(34)}${'national-only (MEI)'.padEnd(34)}of mapped: national emitter by choice`,
  );
  const order = [...FAMILY_IDS, '(no provider)'];
  for (const key of order) {
    const row = byFamily.get(key);
    if (!row) continue;
    console.log(
      `${head(key)}${cell(row.implemented).padEnd(34)}${cell(row.mapped).padEnd(34)}${cell(row.nationalOnly).padEnd(34)}${cell(row.byChoice)}`,
    );
  }
  console.log(
    `${head('TOTAL')}${cell(total.implemented).padEnd(34)}${cell(total.mapped).padEnd(34)}${cell(total.nationalOnly).padEnd(34)}${cell(total.byChoice)}`,
  );
  console.log(
    `\n${grand.municipalities} municipalities, ${(grand.population / 1e6).toFixed(2)} M people (IBGE 2020 estimates; one municipality has none).`,
  );
  console.log(
    `Of the mapped ones, ${notCovered.municipalities} (${millions(notCovered.population).trim()}) have a provider without a known production web service (status not_covered).`,
  );
  const providers = [...byChoiceProviders]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([p, n]) => `${p} ${n}`)
    .join(', ');
  console.log(
    `National emitter by the project's choice: of the mapped, not implemented ones, ${total.byChoice.municipalities} (${millions(total.byChoice.population).trim()}) adhere to the national emitter; a project there issues through the national environment when it sets emissorNacional: true (not counted as implemented). By provider: ${providers}.`,
  );
  console.log('Columns: municipalities, share of municipalities, population, share of population.');
}
