/**
 * Fault injection of the sandbox kit: what a flaky government service does to its clients.
 *
 * Order for each request of a service that opts in: the latency is waited out, then the connection may be dropped
 * before anything is processed, then the request may be answered with an injected 5xx (nothing processed); a write
 * that passes may be processed and committed, then dropped without an answer ("commit, then drop": the case that
 * makes a client resend what already exists).
 */

export interface SandboxFaults {
  /** Added before every request of the service is processed. */
  latencyMs?: number;
  /** Up to this many extra milliseconds, uniformly random. */
  latencyJitterMs?: number;
  /** Share of requests answered with the service's injected 5xx, with nothing processed. */
  errorRate?: number;
  /** Share of requests whose connection is destroyed before processing (nothing processed). */
  dropBeforeProcessRate?: number;
  /** Share of writes processed (and committed), then dropped without an answer. */
  commitThenDropRate?: number;
}

export type FaultKind = 'error' | 'drop-before' | 'commit-then-drop';

export class SandboxHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Checks and copies a fault configuration (unknown keys are dropped); SandboxHttpError 400 when invalid. */
export function sanitizeFaults(input: unknown): SandboxFaults {
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw new SandboxHttpError(400, 'faults must be a JSON object');
  }
  const source = input as Record<string, unknown>;
  const out: SandboxFaults = {};
  for (const key of ['latencyMs', 'latencyJitterMs'] as const) {
    const value = source[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new SandboxHttpError(400, `${key} must be ≥ 0`);
    }
    out[key] = value;
  }
  for (const key of ['errorRate', 'dropBeforeProcessRate', 'commitThenDropRate'] as const) {
    const value = source[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
      throw new SandboxHttpError(400, `${key} must be within [0, 1]`);
    }
    out[key] = value;
  }
  return out;
}

export interface FaultPlan {
  delayMs: number;
  /** Set when the request is not processed at all. */
  before: 'drop-before' | 'error' | null;
  /** Process, then drop the answer. */
  commitThenDrop: boolean;
}

/**
 * Draws the faults of one request. The draws are made in a fixed order (jitter, drop, error, then commit-then-drop
 * for writes only), so a pinned `random` gives reproducible runs.
 */
export function planFaults(faults: SandboxFaults, isWrite: boolean, random: () => number): FaultPlan {
  const delayMs = (faults.latencyMs ?? 0) + random() * (faults.latencyJitterMs ?? 0);
  if (random() < (faults.dropBeforeProcessRate ?? 0)) return { delayMs, before: 'drop-before', commitThenDrop: false };
  if (random() < (faults.errorRate ?? 0)) return { delayMs, before: 'error', commitThenDrop: false };
  const commitThenDrop = isWrite && random() < (faults.commitThenDropRate ?? 0);
  return { delayMs, before: null, commitThenDrop };
}
