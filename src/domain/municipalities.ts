import { getMunicipalities } from '@brazilian-utils/brazilian-utils/get-municipalities';

export interface Municipality {
  code: string;
  name: string;
  uf: string;
}

let byCode: Map<string, Municipality> | undefined;
let byFoldedName: Map<string, Municipality[]> | undefined;

function index(): Map<string, Municipality> {
  if (!byCode) {
    byCode = new Map(getMunicipalities().map((m) => [m.code, { code: m.code, name: m.name, uf: m.stateCode }]));
  }
  return byCode;
}

/** The IBGE table of the 5,571 municipalities. */
export function findMunicipality(code: string): Municipality | undefined {
  return index().get(code);
}

export function allMunicipalities(): Municipality[] {
  return [...index().values()];
}

export function foldName(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

function nameIndex(): Map<string, Municipality[]> {
  if (!byFoldedName) {
    byFoldedName = new Map();
    for (const m of index().values()) {
      const key = foldName(m.name);
      const list = byFoldedName.get(key);
      if (list) list.push(m);
      else byFoldedName.set(key, [m]);
    }
  }
  return byFoldedName;
}

/** Every municipality with this name (accents, case and spacing ignored), optionally within a state. */
export function findMunicipalitiesByName(name: string, uf?: string | null): Municipality[] {
  const found = nameIndex().get(foldName(name)) ?? [];
  const state = uf?.toUpperCase();
  return state ? found.filter((m) => m.uf === state) : found;
}

/** Resolves a city name (accents and case ignored), optionally within a state, to its IBGE municipality. */
export function findMunicipalityByName(name: string, uf?: string): Municipality | undefined {
  return findMunicipalitiesByName(name, uf)[0];
}

/** Municipalities whose name contains the query (accents and case ignored). */
export function searchMunicipalities(query: string, limit = 20): Municipality[] {
  const wanted = foldName(query);
  const out: Municipality[] = [];
  for (const [folded, list] of nameIndex()) {
    if (!folded.includes(wanted)) continue;
    for (const m of list) {
      out.push(m);
      if (out.length >= limit) return out;
    }
  }
  return out;
}
