import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { Db as QueueDb } from 'pg-boss';
import { fromPglite } from 'pg-boss';
import { claimEmbeddedDataDir } from './embedded-dir.ts';
import { type VacuumedTable, vacuumEmbedded } from './embedded-vacuum.ts';
import { type TableChanges, watchEmbeddedTableChanges } from './table-changes.ts';
import { withNamedStatements } from './pglite-statements.ts';
import { runInBackground, withForegroundPriority } from './priority.ts';
import * as schema from './schema.ts';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Either the database or an open transaction: repositories accept both. */
export type DbOrTx = Db | Tx;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** What pg-boss runs on: the same PGlite instance, or its own pool on the same PostgreSQL. */
  queueConnection: { db: QueueDb } | { connectionString: string };
  ping(): Promise<boolean>;
  /**
   * The embedded engine's WebAssembly memory in bytes (it grows and never shrinks; resident only where touched),
   * null on PostgreSQL: the memory trace of `src/main.ts` (NFSE_MEMORY_TRACE) reads it.
   */
  engineMemoryBytes(): number | null;
  /**
   * Which watched tables changed (`db/table-changes.ts`): on the embedded database, where this process sees every
   * change as it commits, so rows of those tables may be kept in memory; null on PostgreSQL.
   */
  changes: TableChanges | null;
  /**
   * On the embedded database, which has no autovacuum: vacuums the tables that are due
   * (`db/embedded-vacuum.ts`), as background work; the worker wiring calls it every few seconds. Null on PostgreSQL,
   * where the server's autovacuum does it.
   */
  vacuum: (() => Promise<VacuumedTable[]>) | null;
  close(): Promise<void>;
}

/**
 * Settings of the embedded PostgreSQL, over PGlite's own start parameters. Its shared buffers live in PGlite's
 * WebAssembly memory, in the service process, and PostgreSQL touches all of them at start: with the cluster's 128 MB
 * that memory grew from PGlite's initial 128 MB to 189 MB, 155 MB of it resident at the peak of bench/intake.ts; with
 * 64 MB, 87 MB of it was resident already when idle; with 16 MB, 35 MB (peak RSS of bench/intake.ts 3 32 pglite:
 * 358-393 MB against 407 MB with 64 MB, same CPU per note relative to the sandbox's). A page missed in the buffers is
 * read from the data directory, which the operating system caches, as PostgreSQL itself relies on. The WAL buffers
 * stay at 4 MB.
 */
const EMBEDDED_SETTINGS = ['shared_buffers=16MB', 'wal_buffers=4MB'];

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

export async function openDatabase(options: { databaseUrl: string | null; dataDir: string }): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    pool.on('error', () => {
      /* idle client errors surface on the next query */
    });
    const db = drizzlePg(pool, { schema }) as unknown as Db;
    return {
      db,
      kind: 'postgres',
      queueConnection: { connectionString: options.databaseUrl },
      async ping() {
        try {
          await pool.query('select 1');
          return true;
        } catch {
          return false;
        }
      },
      engineMemoryBytes: () => null,
      changes: null,
      vacuum: null,
      async close() {
        await pool.end();
      },
    };
  }
  const { dir, seeded, release } = claimEmbeddedDataDir(options.dataDir);
  // the embedded engine (~70 MB of WASM) is loaded only in embedded mode, while a first start's copy finishes
  const engine = Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite')]);
  let client: PGlite;
  let pgliteModule: typeof import('@electric-sql/pglite');
  let drizzlePglite: typeof import('drizzle-orm/pglite')['drizzle'];
  try {
    const [[engineModule, drizzleModule]] = await Promise.all([engine, seeded]);
    const PGliteEngine = engineModule.PGlite;
    pgliteModule = engineModule;
    drizzlePglite = drizzleModule.drizzle;
    mkdirSync(dir, { recursive: true });
    client = await PGliteEngine.create(dir, {
      startParams: [...PGliteEngine.defaultStartParams, ...EMBEDDED_SETTINGS.flatMap((setting) => ['-c', setting])],
    });
  } catch (err) {
    release();
    throw err;
  }
  let watch: Awaited<ReturnType<typeof watchEmbeddedTableChanges>>;
  try {
    watch = await watchEmbeddedTableChanges(client);
  } catch (err) {
    await client.close().catch(() => undefined);
    release();
    throw err;
  }
  const prioritized = withForegroundPriority(withNamedStatements(client, pgliteModule));
  const db = drizzlePglite(prioritized, { schema }) as unknown as Db;
  let closed = false;
  return {
    db,
    kind: 'pglite',
    queueConnection: { db: fromPglite(prioritized) },
    async ping() {
      if (closed) return false;
      try {
        await client.query('select 1');
        return true;
      } catch {
        return false;
      }
    },
    engineMemoryBytes() {
      // PGlite's Emscripten module (not in its public types): its memory, whose buffer is replaced as it grows
      const mod = (client as unknown as { mod?: { wasmMemory?: { buffer: ArrayBuffer } } }).mod;
      return mod?.wasmMemory?.buffer.byteLength ?? null;
    },
    changes: watch.changes,
    vacuum: () => runInBackground(() => vacuumEmbedded(prioritized)),
    async close() {
      if (closed) return;
      closed = true;
      await watch.stop().catch(() => undefined);
      await prioritized.close();
      release();
    },
  };
}

/** Applies the migrations (one set for PGlite and PostgreSQL); concurrent starts on PostgreSQL are serialized. */
export async function runMigrations(database: Database, databaseUrl: string | null): Promise<void> {
  if (database.kind === 'pglite') {
    const { migrate: migratePglite } = await import('drizzle-orm/pglite/migrator');
    // biome-ignore lint/suspicious/noExplicitAny: the drizzle PGlite migrator wants its own database type
    await migratePglite(database.db as any, { migrationsFolder });
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl! });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock(727001)');
    await migratePg(drizzlePg(client), { migrationsFolder });
  } finally {
    await client.query('select pg_advisory_unlock(727001)').catch(() => undefined);
    await client.end();
  }
}
