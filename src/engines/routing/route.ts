import type { RegimeTributario } from '../../domain/project-profile.ts';
import type { FamilyId } from './families.ts';
import type { MunicipalityRegistry, MunicipalityRoute } from './municipality-registry.ts';

/**
 * Routing (spec 1.3, 1.4), a pure function of the registry entry, the regime and the set of families this
 * service implements:
 * 1. MEI (regime 2) always goes to the national environment, wherever it is.
 * 2. A municipality adherent to the national environment — ACBr maps it to `PadraoNacional`, or ACBr maps no
 *    provider and it is flagged in the national-emitter adhesion list — goes to the national environment for
 *    every regime. (A flag does not override an own provider: São Paulo is flagged and keeps its engine.)
 * 3. Otherwise its provider's family, when this service implements it and the provider has a production
 *    web service.
 * Anything else is refused (never issued in the wrong system).
 */

/**
 * What the lookup and the refusal report about a municipality:
 * - `covered`: an engine serves every regime here — the national environment (adherent municipality) or the
 *   family of the municipality's provider, which has a production web service. Implemented here or not: see
 *   `implemented`.
 * - `not_covered`: ACBr names a municipal provider here but knows no production web service for it (awaiting
 *   certification, or homologation only), or its layout is unknown: non-MEI providers cannot be served; MEI
 *   providers still issue through the national environment.
 * - `national_only_mei`: no municipal provider is known and the municipality is not adherent to the national
 *   environment: only MEI providers can issue, through the national environment.
 */
export type CoverageStatus = 'covered' | 'not_covered' | 'national_only_mei';

/**
 * The engine that issues for a family in a municipality: the national environment is one engine; a municipal
 * family has one engine per provider (`dps-provider:betha`), since providers of one family differ by transport.
 */
export function engineKeyOf(family: FamilyId, provider: string | null): string {
  return family === 'national' || !provider ? family : `${family}:${provider.toLowerCase()}`;
}

/** The family that serves non-MEI providers in this municipality, if any. */
export function familyForEveryRegime(route: MunicipalityRoute): FamilyId | null {
  if (route.family === 'national') return 'national';
  if (route.family === null) return route.provider === null && route.nationalEmitter ? 'national' : null;
  const production = route.parameters?.endpoints.production ?? {};
  return Object.keys(production).length > 0 ? route.family : null;
}

export function coverageStatus(route: MunicipalityRoute): CoverageStatus {
  if (familyForEveryRegime(route)) return 'covered';
  return route.provider === null ? 'national_only_mei' : 'not_covered';
}

export type RoutingDecision =
  | {
      ok: true;
      family: FamilyId;
      /** the engine key (`engineKeyOf`) */
      engine: string;
      reason: 'mei' | 'national-adherent' | 'municipal-engine' | 'no-municipality';
      route: MunicipalityRoute | null;
    }
  | {
      ok: false;
      /** the family that would serve this municipality (null: none known) */
      family: FamilyId | null;
      status: CoverageStatus;
      route: MunicipalityRoute | null;
      message: string;
    };

export interface RoutingInput {
  codigoMunicipio: string | null;
  regimeTributario: RegimeTributario | null;
}

/**
 * Which engines this service implements: a set of engine keys, or a predicate that also asks whether the engine
 * serves that municipality (an engine may cover only some cities of its provider: a layout version, a table).
 */
export type Implemented = ReadonlySet<string> | ((engine: string, municipality: string) => boolean);

export function isImplementedIn(implemented: Implemented, engine: string, municipality: string): boolean {
  return typeof implemented === 'function' ? implemented(engine, municipality) : implemented.has(engine);
}

export function routeProject(
  project: RoutingInput,
  registry: MunicipalityRegistry,
  /** engine keys (`engineKeyOf`) this service implements */
  implemented: Implemented,
): RoutingDecision {
  const route = project.codigoMunicipio ? (registry.find(project.codigoMunicipio) ?? null) : null;
  if (project.regimeTributario === '2')
    return { ok: true, family: 'national', engine: 'national', reason: 'mei', route };
  if (!project.codigoMunicipio) {
    // nothing to route by: the invoice rules refuse a project without municipality (project.codigoMunicipio)
    return { ok: true, family: 'national', engine: 'national', reason: 'no-municipality', route: null };
  }
  if (!route) {
    return {
      ok: false,
      family: null,
      status: 'national_only_mei',
      route: null,
      message: `The municipality ${project.codigoMunicipio} is not in the routing registry; only MEI providers can issue (national environment)`,
    };
  }
  const family = familyForEveryRegime(route);
  const engine = family ? engineKeyOf(family, route.provider) : null;
  if (family && engine && isImplementedIn(implemented, engine, route.code)) {
    return {
      ok: true,
      family,
      engine,
      reason: family === 'national' ? 'national-adherent' : 'municipal-engine',
      route,
    };
  }
  const status = coverageStatus(route);
  const place = `${route.name}/${route.uf} (${route.code})`;
  const provider = route.provider ?? 'no municipal provider known';
  const message =
    status === 'covered'
      ? `${place} issues through its own system (provider ${provider}, ${route.routingId}), which this service does not implement yet; only MEI providers can issue here for now (national environment)`
      : status === 'not_covered'
        ? `${place} uses provider ${provider}, whose production web service is not known; only MEI providers can issue here (national environment)`
        : `${place} has no municipal engine (${provider}) and does not adhere to the national environment; only MEI providers can issue here (national environment)`;
  return { ok: false, family: route.family, status, route, message };
}
