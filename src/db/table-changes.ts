import type { PGlite } from '@electric-sql/pglite';

/**
 * Which tables changed, as the database itself tells: the triggers of migration 0011 notify the channel
 * `nfse_table_changed` with the table's name for every statement that changes a watched table, delivered when its
 * transaction commits. On the embedded database (PGlite allows one process per data directory, and this process
 * holds it) every change is seen here, and before the statement that committed it has answered its caller: a
 * row kept in memory is exactly as current as the database. On PostgreSQL other processes write too, and their
 * notifications arrive later than their commits: there nothing is kept (`null`), reads only share a query in flight.
 */
export const WATCHED_TABLES = ['api_keys', 'projects', 'adn_parameters_cache', 'certificates'] as const;
export type WatchedTable = (typeof WATCHED_TABLES)[number];

export const TABLE_CHANGED_CHANNEL = 'nfse_table_changed';

export interface TableChanges {
  /** A number that grows every time one of the tables changes (any row, any statement). */
  generation(tables: readonly WatchedTable[]): number;
}

/** Listens on the embedded database's own connection; `stop` ends it. */
export async function watchEmbeddedTableChanges(
  client: PGlite,
): Promise<{ changes: TableChanges; stop: () => Promise<void> }> {
  const generations = new Map<string, number>(WATCHED_TABLES.map((t) => [t, 0]));
  const stop = await client.listen(TABLE_CHANGED_CHANNEL, (table) => {
    generations.set(table, (generations.get(table) ?? 0) + 1);
  });
  return {
    changes: {
      generation(tables) {
        let sum = 0;
        for (const t of tables) sum += generations.get(t) ?? 0;
        return sum;
      },
    },
    stop,
  };
}

/**
 * Reads of rows by a key, shared: concurrent reads of one key share one query; with `changes` (the embedded
 * database) the answer is kept until one of `tables` changes, so a request reads nothing the database has changed
 * since, and a change committed before a request arrived is always seen. Without it, nothing is kept once the
 * query answers. A read is kept only when no change came while it ran. Kept answers are frozen: callers share them.
 */
export class SharedReads<V> {
  private readonly entries = new Map<string, { generation: number; value: Promise<V> }>();

  constructor(
    private readonly changes: TableChanges | null,
    private readonly tables: readonly WatchedTable[],
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, read: () => Promise<V>): Promise<V> {
    const generation = this.changes?.generation(this.tables) ?? 0;
    const entry = this.entries.get(key);
    // a read in flight or kept is shared only while nothing changed since it started
    if (entry && entry.generation === generation) return entry.value;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const fresh = { generation, value: read() };
    this.entries.set(key, fresh);
    fresh.value.then(
      (value) => {
        deepFreeze(value);
        const keep = this.changes !== null && this.changes.generation(this.tables) === generation;
        if (!keep && this.entries.get(key) === fresh) this.entries.delete(key);
      },
      () => {
        if (this.entries.get(key) === fresh) this.entries.delete(key);
      },
    );
    return fresh.value;
  }
}

const readsByOwner = new WeakMap<object, Map<string, SharedReads<unknown>>>();

/** The `SharedReads` called `name` of `owner` (a database handle), made on its first use. */
export function sharedReads<V>(
  owner: object,
  name: string,
  changes: TableChanges | null,
  tables: readonly WatchedTable[],
): SharedReads<V> {
  let byName = readsByOwner.get(owner);
  if (!byName) {
    byName = new Map();
    readsByOwner.set(owner, byName);
  }
  let reads = byName.get(name) as SharedReads<V> | undefined;
  if (!reads) {
    reads = new SharedReads<V>(changes, tables);
    byName.set(name, reads as SharedReads<unknown>);
  }
  return reads;
}

function deepFreeze(value: unknown): void {
  if (!value || typeof value !== 'object' || Object.isFrozen(value) || value instanceof Date) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}
