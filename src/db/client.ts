import {
  closeSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { Db as QueueDb } from 'pg-boss';
import { fromPglite } from 'pg-boss';
import { withForegroundPriority } from './priority.ts';
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
  close(): Promise<void>;
}

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

/** The embedded database's data directory is held by another live process (start-up refuses with this message). */
export class DataDirectoryInUseError extends Error {}

/**
 * PGlite has no cross-process lock: one process per data directory. A lock file with the owner's pid is
 * taken at open; a lock left by a dead process (kill -9) is taken over.
 */
function takeDataDirLock(dir: string): () => void {
  const path = resolve(dir, 'nfse.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new DataDirectoryInUseError(
          `the data directory ${dir} is in use by process ${owner}; the embedded database allows one process (use DATABASE_URL for several)`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not lock ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

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
      async close() {
        await pool.end();
      },
    };
  }
  const dir = resolve(options.dataDir, 'db');
  mkdirSync(options.dataDir, { recursive: true });
  const release = takeDataDirLock(options.dataDir);
  seedFromTemplate(dir);
  mkdirSync(dir, { recursive: true });
  // the embedded engine (~70 MB of WASM) is loaded only in embedded mode
  const { PGlite: PGliteEngine } = await import('@electric-sql/pglite');
  const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite');
  let client: PGlite;
  try {
    client = await PGliteEngine.create(dir);
  } catch (err) {
    release();
    throw err;
  }
  const prioritized = withForegroundPriority(client);
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
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
      release();
    },
  };
}

/**
 * A migrated PGlite cluster (with the job queue's schema) made by `npm run build` in dist/pglite-template/.
 * Creating a cluster (initdb inside WebAssembly) is most of a first start; copying the template takes a fraction.
 * Resolved next to the running code, so only the compiled service (dist/) has one: from the sources (tests, `npm
 * run dev`) the cluster is created as before. Migrations still run after the copy (nothing to do if current).
 */
const pgliteTemplate = fileURLToPath(new URL('../../pglite-template', import.meta.url));

function seedFromTemplate(dir: string): void {
  if (existsSync(join(dir, 'PG_VERSION')) || !existsSync(join(pgliteTemplate, 'PG_VERSION'))) return;
  if (existsSync(dir) && readdirSync(dir).length > 0) return; // someone else's files: leave them to PGlite
  cpSync(pgliteTemplate, dir, { recursive: true, mode: constants.COPYFILE_FICLONE });
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
