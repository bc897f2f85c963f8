import {
  type AuthKind,
  type Capabilities,
  type Credential,
  FAMILIES,
  type FamilyId,
  type ProjectField,
  type Transport,
} from './families.ts';
import type { MunicipalityRegistry, MunicipalityRoute } from './municipality-registry.ts';
import {
  type CoverageStatus,
  coverageStatus,
  engineKeyOf,
  familyForEveryRegime,
  type Implemented,
  isImplementedIn,
  nationalEmitterByChoice,
} from './route.ts';

/** What the coverage lookup says about one municipality (GET /cobertura/cidades). */
export interface MunicipalityCoverage {
  code: string;
  name: string;
  uf: string;
  population: number | null;
  status: CoverageStatus;
  /** the family that serves non-MEI providers here (covered), or the one of the known provider (not_covered) */
  family: FamilyId | null;
  routingId: string | null;
  /** ACBr provider; null when ACBr maps none */
  provider: string | null;
  layoutVersion: string | null;
  /** this service issues here today for every regime (the family above is implemented and serves here) */
  implemented: boolean;
  /** flagged in the official national-emitter adhesion list */
  nationalEmitterAdherent: boolean;
  /**
   * a project here can choose the national environment instead of the municipality's own system (`emissorNacional`):
   * adherent, and the default engine is its own provider's (`nationalEmitterByChoice`)
   */
  nationalEmitterByChoice: boolean;
  /** requirements and capabilities of the engine above (null when no engine is known) */
  engine: {
    projectFields: ProjectField[];
    credentials: Credential[];
    auth: AuthKind;
    transport: Transport;
    xmlSignature: boolean;
    capabilities: Capabilities;
  } | null;
}

function nationalEngine(registry: MunicipalityRegistry): NonNullable<MunicipalityCoverage['engine']> {
  const provider = registry.data.providers.PadraoNacional;
  if (!provider) throw new Error('the registry has no PadraoNacional provider');
  return {
    projectFields: [...FAMILIES.national.projectFields],
    credentials: [...provider.credentials],
    auth: provider.auth,
    transport: provider.transport,
    xmlSignature: provider.xmlSignature,
    capabilities: { ...FAMILIES.national.capabilities, homologation: true },
  };
}

export function coverageOf(
  route: MunicipalityRoute,
  registry: MunicipalityRegistry,
  implemented: Implemented,
): MunicipalityCoverage {
  const serving = familyForEveryRegime(route);
  const status = coverageStatus(route);
  // an adherent municipality that ACBr leaves unmapped is served by the national environment
  const viaAdhesion = serving === 'national' && route.family === null;
  const engine =
    viaAdhesion || (route.family === 'national' && !route.parameters)
      ? nationalEngine(registry)
      : route.parameters && route.capabilities
        ? {
            projectFields: route.parameters.projectFields,
            credentials: route.parameters.credentials,
            auth: route.parameters.auth,
            transport: route.parameters.transport,
            xmlSignature: route.parameters.xmlSignature,
            capabilities: route.capabilities,
          }
        : null;
  return {
    code: route.code,
    name: route.name,
    uf: route.uf,
    population: route.population,
    status,
    family: viaAdhesion ? 'national' : route.family,
    routingId: viaAdhesion ? 'national' : route.routingId,
    provider: route.provider,
    layoutVersion: viaAdhesion ? (registry.data.providers.PadraoNacional?.version ?? null) : route.version,
    implemented:
      serving !== null &&
      isImplementedIn(implemented, engineKeyOf(serving, serving === 'national' ? null : route.provider), route.code),
    nationalEmitterAdherent: route.nationalEmitter,
    nationalEmitterByChoice:
      nationalEmitterByChoice(route) && isImplementedIn(implemented, engineKeyOf('national', null), route.code),
    engine,
  };
}
