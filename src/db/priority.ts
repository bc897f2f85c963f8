import { AsyncLocalStorage } from 'node:async_hooks';
import type { PGlite } from '@electric-sql/pglite';

/**
 * Foreground first on the embedded database. PGlite runs one statement at a time, in arrival order, on the
 * service's own thread: with the job workers' statements queued in front of it, an API request waited for all of
 * them (seconds under load). Work started by the job queue and the workers runs marked as background
 * (`runInBackground`), and at most BACKGROUND_SLOTS of its statements (or transactions) wait in PGlite's queue at a
 * time; an API request's statements are never held back, so they queue behind at most those few. While API requests
 * are in flight (`foregroundRequest`, marked by the HTTP edge), background statements only trickle through (one at
 * a time, at most one every TRICKLE_MS, never while an API statement waits): since PGlite executes on this thread,
 * holding back a job's statements also holds back its CPU work (signing, parsing, rendering) until the burst ends.
 * PostgreSQL needs none of this (connections run in parallel there, and the workers have a process of their own).
 */

const marker = new AsyncLocalStorage<true>();
/**
 * Whether this process has a gate (an embedded database, `withForegroundPriority`): only then is background work
 * marked. On PostgreSQL nothing reads the mark, and an AsyncLocalStorage in use costs every promise the process
 * creates (on Node 20 it installs a promise hook): every request and every job paid for a mark no one read.
 */
let marking = false;

/** Runs `work` (and everything it starts: timers, loops, promises) as background database work. */
export function runInBackground<T>(work: () => T): T {
  return marking ? marker.run(true, work) : work();
}

export function isBackground(): boolean {
  return marker.getStore() === true;
}

const BACKGROUND_SLOTS = 2;
/**
 * While API requests are in flight, background statements are held back and let through one at a time, at most one
 * every TRICKLE_MS (and not while an API statement waits): a burst of requests gets the event loop and the database
 * first, and the issuing in flight still moves on (it catches up when the burst ends).
 */
const TRICKLE_MS = 20;

/** API requests in flight in this process (`foregroundRequest`), read by the gate. */
let foregroundRequests = 0;
/** API statements waiting for or running in PGlite. */
let foregroundStatements = 0;
const gates = new Set<Gate>();

/**
 * Marks an API request in flight (the HTTP edge calls it when a request arrives and calls the returned function when
 * it ends): background database work yields to it. Idempotent end.
 */
export function foregroundRequest(): () => void {
  foregroundRequests++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    foregroundRequests--;
    for (const gate of gates) gate.pump();
  };
}

class Gate {
  private active = 0;
  private lastAdmitted = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly slots: number) {}

  /** Whether one more background statement may go now (else when, in ms from now, to look again). */
  private admissible(now: number): true | number {
    if (foregroundRequests === 0) return this.active < this.slots || 0;
    if (this.active > 0 || foregroundStatements > 0) return 0;
    const wait = this.lastAdmitted + TRICKLE_MS - now;
    return wait <= 0 || wait;
  }

  /** Admits what may go now; schedules the next look when the trickle holds the rest. */
  pump(): void {
    while (this.waiting.length > 0) {
      const now = Date.now();
      const verdict = this.admissible(now);
      if (verdict !== true) {
        if (verdict > 0 && !this.timer) {
          this.timer = setTimeout(() => {
            this.timer = null;
            this.pump();
          }, verdict);
        }
        return;
      }
      this.active++;
      this.lastAdmitted = now;
      this.waiting.shift()!();
    }
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.pump();
    });
    try {
      // a statement of its own macrotask: PGlite executes on this thread and its answers resolve as microtasks, so a
      // job's statements would otherwise run back to back without the event loop ever reading the sockets (API
      // requests waited unread in them, invisible to the gate); this lets the poll phase in before each one
      await new Promise<void>((resolve) => setImmediate(resolve));
      return await task();
    } finally {
      this.active--;
      this.pump();
    }
  }
}

/** The PGlite instance as the application and the job queue see it: background statements go through the gate. */
export function withForegroundPriority(client: PGlite): PGlite {
  marking = true;
  const gate = new Gate(BACKGROUND_SLOTS);
  gates.add(gate);
  const gated = new Set<PropertyKey>(['query', 'exec', 'transaction', 'sql']);
  return new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property === 'close') {
        return (...args: unknown[]) => {
          gates.delete(gate);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      if (!gated.has(property)) return value.bind(target);
      return (...args: unknown[]) => {
        const call = () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (isBackground()) return gate.run(call);
        foregroundStatements++;
        return call().finally(() => {
          foregroundStatements--;
          gate.pump();
        });
      };
    },
  });
}
