import type { ProjectFiscalProfile } from '../domain/project-profile.ts';
import type { SignatureAlgorithm } from '../xml/sign.ts';
import { createEngine } from './kit/engine.ts';
import type { FamilyDefinition } from './kit/family.ts';
import { GovernmentHttpClient } from './kit/http-client.ts';
import { AdnParametersClient } from './national/adn-parameters.ts';
import { nationalFamily } from './national/family.ts';
import type { FamilyId } from './routing/families.ts';
import { type MunicipalityRegistry, municipalityRegistry } from './routing/municipality-registry.ts';
import { type RoutingDecision, routeProject } from './routing/route.ts';
import type { EngineFamily } from './types.ts';

/**
 * The families this service implements (a subset of `FamilyId`, see routing/families.ts), each a definition run by
 * the engine kit (kit/engine.ts), registered in one typed map: adding a family is one line here. The coverage
 * report reads this list.
 */
export const FAMILY_DEFINITIONS = {
  national: nationalFamily,
} as const satisfies Partial<Record<FamilyId, FamilyDefinition>>;
export type EngineId = keyof typeof FAMILY_DEFINITIONS;
export const IMPLEMENTED_FAMILIES = Object.keys(FAMILY_DEFINITIONS) as EngineId[];

export interface EngineRegistryOptions {
  sefinBaseUrl: (ambiente: 1 | 2) => string;
  adnParametersBaseUrl: (ambiente: 1 | 2) => string;
  caPem: string | null;
  timeouts: { connectMs: number; responseMs: number };
  signatureAlgorithm: SignatureAlgorithm;
  validateBeforeSend: boolean;
}

/**
 * Every implemented engine family, registered in one typed map (no autoloading), and the routing of projects
 * to them through the municipality registry (routing/). Municipal families (ABRASF providers, São Paulo, IPM,
 * …) are described in routing/families.ts; a project whose municipality needs one that is not implemented is
 * refused (ENGINE_NOT_AVAILABLE) unless it is MEI (spec 1.4).
 */
export class EngineRegistry {
  readonly clients: GovernmentHttpClient;
  readonly municipalities: MunicipalityRegistry;
  /** The ADN "Parâmetros Municipais" API (municipal breakdowns and rates), over the same mTLS pool. */
  readonly adnParameters: AdnParametersClient;
  private readonly engines: Record<EngineId, EngineFamily>;
  readonly implemented: ReadonlySet<FamilyId>;

  constructor(options: EngineRegistryOptions) {
    this.municipalities = municipalityRegistry();
    this.clients = new GovernmentHttpClient(options.timeouts, options.caPem);
    this.adnParameters = new AdnParametersClient({ clients: this.clients, baseUrl: options.adnParametersBaseUrl });
    const common = {
      http: this.clients,
      signatureAlgorithm: options.signatureAlgorithm,
      validateBeforeSend: options.validateBeforeSend,
    };
    this.engines = {
      national: createEngine(FAMILY_DEFINITIONS.national, {
        ...common,
        endpoints: { url: (_operation, ambiente) => options.sefinBaseUrl(ambiente) },
      }),
    } satisfies Record<EngineId, EngineFamily>;
    this.implemented = new Set<FamilyId>(IMPLEMENTED_FAMILIES);
  }

  /** Routing of a project (municipality and regime) to an implemented engine, or why there is none. */
  route(project: Pick<ProjectFiscalProfile, 'codigoMunicipio' | 'regimeTributario'>): RoutingDecision {
    return routeProject(project, this.municipalities, this.implemented);
  }

  isImplemented(family: FamilyId): family is EngineId {
    return this.implemented.has(family);
  }

  get(id: string): EngineFamily {
    const engine = this.engines[id as EngineId];
    if (!engine) throw new Error(`unknown engine ${id}`);
    return engine;
  }

  async close(): Promise<void> {
    await this.clients.close();
  }
}
