import { readFileSync } from 'node:fs';
import { Compile, type Validator } from 'typebox/compile';
import { findMunicipality, foldName } from '../../domain/municipalities.ts';
import {
  type AuthKind,
  type Capabilities,
  type Credential,
  FAMILIES,
  type FamilyId,
  isFamilyId,
  type ProjectField,
  type RouteParameters,
  type Transport,
} from './families.ts';
import { authKindOf, credentialsOf, FAMILY_PROVIDER_TRAITS } from './providers.ts';

/** Families whose NFS-e is an ABRASF `InfNfse`, which the DANFSe renderer can print (documents/danfse/abrasf-model.ts). */
const ABRASF_SHAPED: ReadonlySet<FamilyId> = new Set(['abrasf-v1', 'abrasf-v2', 'ginfes']);

/**
 * The municipality registry: every IBGE code → its routing (engine family, layout version, provider) and the
 * merged per-city parameters, read from the generated `municipalities.json` (scripts/import-routing.ts).
 * Provider-level values are stored once and merged under the city's own, the way ACBr merges them.
 */
export type Endpoints = { production?: Record<string, string>; homologation?: Record<string, string> };

export interface ProviderEntry {
  version?: string;
  options?: Record<string, string | boolean>;
  endpoints?: Endpoints;
  links?: { production?: string; homologation?: string };
  soap?: Record<string, string>;
  transport: Transport;
  auth: AuthKind;
  xmlSignature: boolean;
  credentials: Credential[];
  /** whether the traits come from the provider table or from the family's defaults */
  traitsFrom: 'provider' | 'family-default';
}

export interface CityEntry {
  /** ACBr provider; absent when ACBr maps none */
  provider?: string;
  family?: FamilyId;
  /** layout version when it differs from the provider's */
  version?: string;
  options?: Record<string, string | boolean>;
  /** ACBr `Params=*`: the city does not inherit the provider's Params */
  ownOptionsOnly?: true;
  endpoints?: Endpoints;
  links?: { production?: string; homologation?: string };
  soap?: Record<string, string>;
  projectFields?: ProjectField[];
  /** flagged in the national-emitter adhesion list (Conveniado Ativo + AderenteEmissorNacional) */
  nationalEmitter?: true;
  /** IBGE 2020 estimate */
  population?: number;
}

export interface RegistryData {
  format: 1;
  generatedAt: string;
  generatedBy: string;
  sources: { file: string; repository: string; path: string; commit: string | null; date: string; sha256: string }[];
  families: FamilyId[];
  providers: Record<string, ProviderEntry>;
  municipalities: Record<string, CityEntry>;
}

/** One municipality with its routing resolved. */
export interface MunicipalityRoute {
  code: string;
  name: string;
  uf: string;
  population: number | null;
  /** in the national-emitter adhesion list */
  nationalEmitter: boolean;
  /** ACBr provider (null: ACBr maps none) */
  provider: string | null;
  /** the family ACBr's provider belongs to (null: no provider, or a provider of unknown layout) */
  family: FamilyId | null;
  version: string | null;
  /** `national`, or `<family>:<provider>@<version>` */
  routingId: string | null;
  /** merged parameters (null when there is no provider) */
  parameters: RouteParameters | null;
  capabilities: Capabilities | null;
}

export function routingIdOf(family: FamilyId, provider: string, version: string): string {
  return family === 'national' ? 'national' : `${family}:${provider.toLowerCase()}@${version}`;
}

function mergeEndpoints(provider: Endpoints | undefined, city: Endpoints | undefined): RouteParameters['endpoints'] {
  const production = { ...provider?.production, ...city?.production };
  const homologation = { ...provider?.homologation, ...city?.homologation };
  return Object.keys(homologation).length > 0 ? { production, homologation } : { production };
}

/** One compiled validator per family schema (compiled on first use). */
const validators = new Map<FamilyId, Validator>();
function validatorOf(family: FamilyId): Validator {
  let validator = validators.get(family);
  if (!validator) {
    validator = Compile(FAMILIES[family].parameters);
    validators.set(family, validator);
  }
  return validator;
}

export class MunicipalityRegistry {
  private readonly routes = new Map<string, MunicipalityRoute>();
  private byFoldedName: { folded: string; code: string }[] | undefined;

  constructor(readonly data: RegistryData) {}

  get size(): number {
    return Object.keys(this.data.municipalities).length;
  }

  codes(): string[] {
    return Object.keys(this.data.municipalities);
  }

  /** The resolved entry of an IBGE code, or undefined for a code the registry does not hold. */
  find(code: string): MunicipalityRoute | undefined {
    const cached = this.routes.get(code);
    if (cached) return cached;
    const city = this.data.municipalities[code];
    if (!city) return undefined;
    const route = this.resolve(code, city);
    this.routes.set(code, route);
    return route;
  }

  all(): MunicipalityRoute[] {
    return this.codes().map((c) => this.find(c)!);
  }

  private resolve(code: string, city: CityEntry): MunicipalityRoute {
    const ibge = findMunicipality(code);
    const base = {
      code,
      name: ibge?.name ?? code,
      uf: ibge?.uf ?? '',
      population: city.population ?? null,
      nationalEmitter: city.nationalEmitter === true,
    };
    const provider = city.provider ? this.data.providers[city.provider] : undefined;
    if (!city.provider || !provider || !city.family || !isFamilyId(city.family)) {
      return {
        ...base,
        provider: city.provider ?? null,
        family: null,
        version: null,
        routingId: null,
        parameters: null,
        capabilities: null,
      };
    }
    const family = FAMILIES[city.family];
    const version = city.version ?? provider.version ?? '1.00';
    const links = { ...provider.links, ...city.links };
    const soap = { ...provider.soap, ...city.soap };
    const familyTraits = FAMILY_PROVIDER_TRAITS[`${city.family}:${city.provider}`];
    const parameters: RouteParameters = {
      provider: city.provider,
      version,
      endpoints: mergeEndpoints(provider.endpoints, city.endpoints),
      ...(Object.keys(links).length > 0 ? { links } : {}),
      options: city.ownOptionsOnly ? { ...city.options } : { ...provider.options, ...city.options },
      ...(Object.keys(soap).length > 0 ? { soap } : {}),
      transport: familyTraits?.transport ?? provider.transport,
      auth: familyTraits ? authKindOf(familyTraits) : provider.auth,
      xmlSignature: familyTraits?.xmlSignature ?? provider.xmlSignature,
      credentials: familyTraits ? credentialsOf(familyTraits) : [...provider.credentials],
      projectFields: [...new Set([...family.projectFields, ...(city.projectFields ?? [])])],
    };
    const capabilities: Capabilities = {
      ...family.capabilities,
      // a municipal note without a provider PDF is linked at the city's consultation page where one is published,
      // and an ABRASF note is otherwise rendered here (documents/pdf-source.ts)
      pdf:
        family.capabilities.pdf !== 'none'
          ? family.capabilities.pdf
          : links.production
            ? 'portal'
            : ABRASF_SHAPED.has(family.id)
              ? 'local'
              : 'none',
      homologation: parameters.endpoints.homologation !== undefined || family.id === 'national',
    };
    return {
      ...base,
      provider: city.provider,
      family: family.id,
      version,
      routingId: routingIdOf(family.id, city.provider, version),
      parameters,
      capabilities,
    };
  }

  /**
   * Every entry's merged parameters against its family's schema, plus the registry's own invariants
   * (all 5,571 IBGE codes present, known families and providers). Returns the problems found.
   */
  validate(): string[] {
    const problems: string[] = [];
    for (const [code, city] of Object.entries(this.data.municipalities)) {
      if (!findMunicipality(code)) problems.push(`${code}: not an IBGE municipality`);
      if (city.provider && !this.data.providers[city.provider])
        problems.push(`${code}: unknown provider ${city.provider}`);
      if (city.family !== undefined && !isFamilyId(city.family))
        problems.push(`${code}: unknown family ${city.family}`);
      const route = this.find(code)!;
      if (!route.family || !route.parameters) continue;
      const validator = validatorOf(route.family);
      if (!validator.Check(route.parameters)) {
        for (const error of validator.Errors(route.parameters).slice(0, 3)) {
          problems.push(
            `${code} (${route.routingId}): ${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`,
          );
        }
      }
    }
    return problems;
  }

  /** Municipalities per family (null: no family) — a quick summary for the import script. */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.all()) out[r.family ?? '(none)'] = (out[r.family ?? '(none)'] ?? 0) + 1;
    return out;
  }

  /**
   * A 7-digit code finds that municipality; otherwise the folded text (accents, case and spacing ignored) is
   * matched against the folded names: exact names first, then names starting with it, then containing it.
   */
  search(query: string, limit = 20): MunicipalityRoute[] {
    const q = query.trim();
    if (/^\d{7}$/.test(q)) {
      const found = this.find(q);
      return found ? [found] : [];
    }
    const wanted = foldName(q);
    this.byFoldedName ??= this.codes().map((code) => ({ code, folded: foldName(this.find(code)!.name) }));
    const rank = (folded: string) => (folded === wanted ? 0 : folded.startsWith(wanted) ? 1 : 2);
    return this.byFoldedName
      .filter((m) => m.folded.includes(wanted))
      .sort(
        (a, b) => rank(a.folded) - rank(b.folded) || a.folded.localeCompare(b.folded) || a.code.localeCompare(b.code),
      )
      .slice(0, limit)
      .map((m) => this.find(m.code)!);
  }
}

let shared: MunicipalityRegistry | undefined;

/**
 * The registry generated into `src/engines/routing/municipalities.json`, read once per process. It is validated
 * where it is made and where it ships from, not at every start (5,571 routes resolved and checked against their
 * family's schema cost a fifth of a second of start-up): `npm run import-routing` refuses to write an invalid one,
 * and test/routing/registry.test.ts fails on any problem `validate()` finds, so no build passes CI with one.
 */
export function municipalityRegistry(): MunicipalityRegistry {
  shared ??= new MunicipalityRegistry(
    JSON.parse(readFileSync(new URL('./municipalities.json', import.meta.url), 'utf8')) as RegistryData,
  );
  return shared;
}
