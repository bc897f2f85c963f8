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
 * Between 1 and 2, the project's choice (`emissorNacional`, issue #13): a project that chose the national emitter
 * goes to the national environment for every regime where the municipality is in the adhesion list, whatever its
 * own provider (implemented or not); Sefin Nacional asks only for the municipality's active convênio (E0037/E0038).
 * Where the municipality does not (or no longer) adhere, the choice is refused, never replaced by the municipality's
 * own system.
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

/**
 * Whether a project here may choose the national environment (`emissorNacional`): the municipality is in the
 * official national-emitter adhesion list (Conveniado Ativo + AderenteEmissorNacional).
 */
export function acceptsNationalEmitter(route: MunicipalityRoute | null | undefined): boolean {
  return route?.nationalEmitter === true;
}

/**
 * The national environment is available here by the project's choice, and the choice changes the engine: the
 * municipality adheres to the national emitter and its default engine is its own provider's (implemented here or
 * not, with a production web service or not). False where the national environment is the default already.
 */
export function nationalEmitterByChoice(route: MunicipalityRoute): boolean {
  return acceptsNationalEmitter(route) && familyForEveryRegime(route) !== 'national';
}

/** Why a project with `emissorNacional: true` cannot be in this municipality (null: it can). */
export function nationalEmitterChoiceProblem(
  codigoMunicipio: string | null,
  route: MunicipalityRoute | null | undefined,
): string | null {
  if (acceptsNationalEmitter(route)) return null;
  if (!codigoMunicipio) return 'needs a codigoMunicipio that adheres to the national emitter';
  const place = route ? `${route.name}/${route.uf} (${route.code})` : `the municipality ${codigoMunicipio}`;
  const already =
    route && familyForEveryRegime(route) === 'national'
      ? '; its projects issue through the national environment without emissorNacional'
      : '';
  return `${place} does not adhere to the national emitter (it is not in the official adhesion list: Conveniado Ativo and AderenteEmissorNacional), so it cannot be chosen with emissorNacional${already}`;
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
      /** national-emitter-choice: the project chose the national environment (`emissorNacional`) */
      reason: 'mei' | 'national-adherent' | 'national-emitter-choice' | 'municipal-engine' | 'no-municipality';
      route: MunicipalityRoute | null;
    }
  | {
      ok: false;
      /** the family that would serve this municipality (null: none known) */
      family: FamilyId | null;
      status: CoverageStatus;
      route: MunicipalityRoute | null;
      /** the project field the refusal is about */
      field: 'codigoMunicipio' | 'emissorNacional';
      message: string;
    };

export interface RoutingInput {
  codigoMunicipio: string | null;
  regimeTributario: RegimeTributario | null;
  /** the project's choice of the national environment instead of the municipality's own system (default false) */
  emissorNacional?: boolean;
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
      field: 'codigoMunicipio',
      message: `The municipality ${project.codigoMunicipio} is not in the routing registry; only MEI providers can issue (national environment)`,
    };
  }
  const family = familyForEveryRegime(route);
  const place = `${route.name}/${route.uf} (${route.code})`;
  // the project's choice; where the national environment is this municipality's own engine, nothing to choose
  if (project.emissorNacional && family !== 'national') {
    const problem = nationalEmitterChoiceProblem(project.codigoMunicipio, route);
    if (!problem && isImplementedIn(implemented, 'national', route.code)) {
      return { ok: true, family: 'national', engine: 'national', reason: 'national-emitter-choice', route };
    }
    // refused, never issued through the municipality's own system instead
    return {
      ok: false,
      family: 'national',
      status: coverageStatus(route),
      route,
      field: 'emissorNacional',
      message: `The project chose the national emitter (emissorNacional true), but ${problem ?? 'this service does not implement the national environment'}; set emissorNacional to false (the municipality's own system then applies) or change codigoMunicipio`,
    };
  }
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
  const provider = route.provider ?? 'no municipal provider known';
  const choice = nationalEmitterByChoice(route)
    ? `. ${place} adheres to the national emitter: set the project's emissorNacional to true to issue through the national environment (Sefin Nacional) instead of the municipality's own system`
    : '';
  const message =
    status === 'covered'
      ? `${place} issues through its own system (provider ${provider}, ${route.routingId}), which this service does not implement yet; only MEI providers can issue here for now (national environment)`
      : status === 'not_covered'
        ? `${place} uses provider ${provider}, whose production web service is not known; only MEI providers can issue here (national environment)`
        : `${place} has no municipal engine (${provider}) and does not adhere to the national environment; only MEI providers can issue here (national environment)`;
  return { ok: false, family: route.family, status, route, field: 'codigoMunicipio', message: message + choice };
}
