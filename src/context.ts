import type { FastifyBaseLogger } from 'fastify';
import type { CertificateStore } from './certificates/store.ts';
import type { Config } from './config.ts';
import type { Database, Db } from './db/client.ts';
import type { EngineRegistry } from './engines/registry.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { DocumentStorage } from './storage/types.ts';

/**
 * Everything a route or a job handler may use, built once at start (src/main.ts) or by the test
 * harness. Collaborators are passed explicitly; nothing reaches for globals.
 */
export interface AppContext {
  config: Config;
  database: Database;
  db: Db;
  queue: JobQueue;
  storage: DocumentStorage;
  rateLimiter: RateLimits;
  logger: FastifyBaseLogger;
  /** the clock of the business rules (tests may move it) */
  now: () => Date;
  /** extension slots filled by the engine layer (government endpoints, trust anchors) */
  government: GovernmentEndpoints;
  engines: EngineRegistry;
  certificates: CertificateStore;
}

/**
 * The request limits shared by every API process (implemented over the database by `http/rate-limit.ts`; the
 * worker's housekeeping prunes them).
 */
export interface RateLimits {
  /** Counts one request of `bucket`; null when admitted, else the seconds until one may be (for Retry-After). */
  take(bucket: string, limitPerMinute: number): Promise<number | null>;
  /** Drops the counters of closed windows. */
  prune(): Promise<void>;
}

export interface GovernmentEndpoints {
  /** Base URL of Sefin Nacional per ambiente (1 production, 2 produção restrita), without trailing slash. */
  sefinBaseUrl: (ambiente: 1 | 2) => string;
  /**
   * Base URL of the ADN "Parâmetros Municipais" API per ambiente (`…/parametrizacao`), without trailing slash; in
   * sandbox mode the local sandbox serves it beside Sefin.
   */
  adnParametersBaseUrl: (ambiente: 1 | 2) => string;
  /** Sandbox mode: the base URL of a municipal engine's local sandbox (by engine key); null in live mode. */
  municipalSandboxUrl: ((engine: string, ambiente: 1 | 2) => string) | null;
  /** Extra trust anchors for the government TLS servers (the sandbox CA); null in live mode. */
  caPem: string | null;
}
