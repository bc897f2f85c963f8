import type { ProjectFiscalProfile } from '../domain/project-profile.ts';
import type { SignatureAlgorithm } from '../xml/sign.ts';
import { ABRASF_V1_DEFINITIONS } from './abrasf-v1/index.ts';
import { ABRASF_V2_DEFINITIONS } from './abrasf-v2/index.ts';
import { DPS_PROVIDER_DEFINITIONS } from './dps-provider/index.ts';
import { GINFES_DEFINITIONS } from './ginfes/index.ts';
import { IPM_DEFINITIONS } from './ipm/index.ts';
import { OWN_LAYOUT_DEFINITIONS } from './own-layout/index.ts';
import { SAO_PAULO_DEFINITIONS } from './sao-paulo/index.ts';
import { createEngine } from './kit/engine.ts';
import { type Endpoints, type FamilyDefinition, UnknownEndpointError } from './kit/family.ts';
import { GovernmentHttpClient } from './kit/http-client.ts';
import { AdnParametersClient } from './national/adn-parameters.ts';
import { nationalFamily } from './national/family.ts';
import { type MunicipalityRegistry, municipalityRegistry } from './routing/municipality-registry.ts';
import { engineKeyOf, type RoutingDecision, routeProject } from './routing/route.ts';
import type { EngineFamily } from './types.ts';

/**
 * Every engine this service implements, keyed by engine key (routing `engineKeyOf`): the national environment, and
 * one per municipal provider of a family (`dps-provider:betha`). Each is a definition run by the engine kit
 * (kit/engine.ts), registered in this one typed map: adding a provider is one line here. The coverage report and
 * `/cobertura/cidades` read its keys.
 */
export const ENGINE_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  national: nationalFamily,
  ...DPS_PROVIDER_DEFINITIONS,
  ...ABRASF_V1_DEFINITIONS,
  ...ABRASF_V2_DEFINITIONS,
  ...GINFES_DEFINITIONS,
  ...IPM_DEFINITIONS,
  ...OWN_LAYOUT_DEFINITIONS,
  ...SAO_PAULO_DEFINITIONS,
};
export type EngineId = string;
export const IMPLEMENTED_FAMILIES: readonly string[] = Object.keys(ENGINE_DEFINITIONS);

export interface EngineRegistryOptions {
  sefinBaseUrl: (ambiente: 1 | 2) => string;
  /**
   * Sandbox mode: the base URL of a municipal engine's local sandbox (by engine key). Null in live mode, where each
   * municipality's URL comes from its registry entry (`endpoints.production` / `homologation`).
   */
  municipalSandboxUrl: ((engine: string, ambiente: 1 | 2) => string) | null;
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
  readonly implemented: ReadonlySet<string>;

  constructor(options: EngineRegistryOptions) {
    this.municipalities = municipalityRegistry();
    this.clients = new GovernmentHttpClient(options.timeouts, options.caPem);
    this.adnParameters = new AdnParametersClient({ clients: this.clients, baseUrl: options.adnParametersBaseUrl });
    const common = {
      http: this.clients,
      signatureAlgorithm: options.signatureAlgorithm,
      validateBeforeSend: options.validateBeforeSend,
    };
    this.engines = Object.fromEntries(
      Object.entries(ENGINE_DEFINITIONS).map(([key, definition]) => {
        const expected = engineKeyOf(definition.id, definition.provider ?? null);
        if (expected !== key) throw new Error(`engine ${key}: its definition is ${expected}`);
        return [key, createEngine(definition, { ...common, endpoints: this.endpointsOf(key, options) })];
      }),
    );
    this.implemented = new Set(IMPLEMENTED_FAMILIES);
  }

  /** Where an engine's operations go: the Sefin base, the local sandbox, or each municipality's registry entry. */
  private endpointsOf(key: string, options: EngineRegistryOptions): Endpoints {
    if (key === 'national') return { url: (_operation, ambiente) => options.sefinBaseUrl(ambiente) };
    const sandbox = options.municipalSandboxUrl;
    if (sandbox) return { url: (_operation, ambiente) => sandbox(key, ambiente) };
    const national = ENGINE_DEFINITIONS[key]?.nationalOperations ?? [];
    return {
      url: (operation, ambiente, municipality) => {
        if (national.includes(operation)) return options.sefinBaseUrl(ambiente);
        const route = municipality ? this.municipalities.find(municipality) : undefined;
        const urls = route?.parameters?.endpoints[ambiente === 1 ? 'production' : 'homologation'] ?? {};
        // `pdf`: the provider's public link of a note (registry `links`, e.g. IPM `…?codauten=%CodVerif%`)
        const link = route?.parameters?.links?.[ambiente === 1 ? 'production' : 'homologation'];
        const url = operation === 'pdf' ? link : (urls.Recepcionar ?? Object.values(urls)[0]);
        if (!url) {
          throw new UnknownEndpointError(
            `no ${ambiente === 1 ? 'production' : 'homologation'} URL is known for ${key} in municipality ${municipality}`,
          );
        }
        return url;
      },
    };
  }

  /** Routing of a project (municipality, regime, its emissorNacional choice) to an implemented engine, or why there is none. */
  route(
    project: Pick<ProjectFiscalProfile, 'codigoMunicipio' | 'regimeTributario'> & { emissorNacional?: boolean },
  ): RoutingDecision {
    return routeProject(project, this.municipalities, this.implementedIn);
  }

  /** Whether an engine is implemented and serves that municipality (its definition's `serves`). */
  readonly implementedIn = (engine: string, municipality: string): boolean =>
    this.implemented.has(engine) && (ENGINE_DEFINITIONS[engine]?.serves?.(municipality) ?? true);

  isImplemented(engine: string): boolean {
    return this.implemented.has(engine);
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
