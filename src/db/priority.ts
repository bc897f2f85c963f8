import { AsyncLocalStorage } from 'node:async_hooks';
import type { PGlite } from '@electric-sql/pglite';

/**
 * Foreground first on the embedded database. PGlite runs one statement at a time, in arrival order, on the
 * service's own thread: with the job workers' statements queued in front of it, an API request waited for all of
 * them (seconds under load). Work started by the job queue and the workers runs marked as background
 * (`runInBackground`), and at most BACKGROUND_SLOTS of its statements (or transactions) wait in PGlite's queue at a
 * time; an API request's statements are never held back, so they queue behind at most those few.
 * PostgreSQL needs none of this (connections run in parallel there).
 */

const marker = new AsyncLocalStorage<true>();

/** Runs `work` (and everything it starts: timers, loops, promises) as background database work. */
export function runInBackground<T>(work: () => T): T {
  return marker.run(true, work);
}

export function isBackground(): boolean {
  return marker.getStore() === true;
}

const BACKGROUND_SLOTS = 2;

class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly slots: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.slots) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** The PGlite instance as the application and the job queue see it: background statements go through the gate. */
export function withForegroundPriority(client: PGlite): PGlite {
  const gate = new Gate(BACKGROUND_SLOTS);
  const gated = new Set<PropertyKey>(['query', 'exec', 'transaction', 'sql']);
  return new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (!gated.has(property)) return value.bind(target);
      return (...args: unknown[]) => {
        const call = () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        return isBackground() ? gate.run(call) : call();
      };
    },
  });
}
