import type { ProjectFiscalProfile } from '../domain/project-profile.ts';
import type { SignatureAlgorithm } from '../xml/sign.ts';
import { createNationalEngine } from './national/engine.ts';
import { MtlsClientPool } from './transport/mtls.ts';
import type { EngineFamily } from './types.ts';

export type EngineId = 'national';

export interface EngineRegistryOptions {
  sefinBaseUrl: (ambiente: 1 | 2) => string;
  caPem: string | null;
  timeouts: { connectMs: number; responseMs: number };
  signatureAlgorithm: SignatureAlgorithm;
  validateBeforeSend: boolean;
}

/**
 * Every engine family, registered in one typed map (no autoloading). Municipal families (ABRASF
 * providers, São Paulo, IPM, …) are added here with their routing data; until then every project is
 * routed to the national environment, which also serves MEI providers everywhere (spec 1.4).
 */
export class EngineRegistry {
  readonly clients: MtlsClientPool;
  private readonly engines: Record<EngineId, EngineFamily>;

  constructor(options: EngineRegistryOptions) {
    this.clients = new MtlsClientPool(options.timeouts, options.caPem);
    this.engines = {
      national: createNationalEngine({
        clients: this.clients,
        baseUrl: options.sefinBaseUrl,
        signatureAlgorithm: options.signatureAlgorithm,
        validateBeforeSend: options.validateBeforeSend,
      }),
    } satisfies Record<EngineId, EngineFamily>;
  }

  /** The engine that serves a project (routing by municipality and regime). */
  engineIdFor(_project: ProjectFiscalProfile): EngineId {
    return 'national';
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
