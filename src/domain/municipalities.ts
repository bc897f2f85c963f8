import { getMunicipalities } from '@brazilian-utils/brazilian-utils';

export interface Municipality {
  code: string;
  name: string;
  uf: string;
}

let byCode: Map<string, Municipality> | undefined;

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

function fold(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .trim();
}

/** Resolves a city name (accents and case ignored), optionally within a state, to its IBGE municipality. */
export function findMunicipalityByName(name: string, uf?: string): Municipality | undefined {
  const wanted = fold(name);
  const state = uf?.toUpperCase();
  for (const m of index().values()) {
    if (fold(m.name) === wanted && (!state || m.uf === state)) return m;
  }
  return undefined;
}

/** Municipalities whose name contains the query (accents and case ignored). */
export function searchMunicipalities(query: string, limit = 20): Municipality[] {
  const wanted = fold(query);
  const out: Municipality[] = [];
  for (const m of index().values()) {
    if (fold(m.name).includes(wanted)) {
      out.push(m);
      if (out.length >= limit) break;
    }
  }
  return out;
}
