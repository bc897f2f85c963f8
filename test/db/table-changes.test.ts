import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getTableColumns, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase, runMigrations } from '../../src/db/client.ts';
import { apiKeys } from '../../src/db/schema.ts';
import { SharedReads, sharedReads, type TableChanges, WATCHED_TABLES } from '../../src/db/table-changes.ts';

/**
 * Rows kept in memory on the embedded database (db/table-changes.ts): the triggers of migration 0011 tell the
 * process which tables changed, before the changing statement answers, and SharedReads keeps an answer only while
 * its tables are unchanged.
 */
describe('table changes on the embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'table-changes-'));
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ databaseUrl: null, dataDir: join(dir, 'data') });
    await runMigrations(database, null);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const generation = (table: (typeof WATCHED_TABLES)[number]) => database.changes!.generation([table]);

  it('counts every statement that changes a watched table, as soon as it has answered', async () => {
    expect(database.changes).not.toBeNull();
    for (const table of WATCHED_TABLES) {
      const before = generation(table);
      // a statement-level trigger fires even when no row matches
      await database.db.execute(sql.raw(`delete from ${table} where false`));
      expect(generation(table), table).toBe(before + 1);
    }
  });

  it('sees a change committed by a transaction when the transaction ends, not before', async () => {
    const before = generation('projects');
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`update projects set active = active where false`);
      expect(generation('projects')).toBe(before);
    });
    expect(generation('projects')).toBe(before + 1);
  });

  it('does not count a rolled-back change', async () => {
    const before = generation('api_keys');
    await database.db
      .transaction(async (tx) => {
        await tx.execute(sql`update api_keys set active = false where false`);
        tx.rollback();
      })
      .catch(() => undefined);
    expect(generation('api_keys')).toBe(before);
  });

  it('ignores api_keys.last_used_at, written as keys are used', async () => {
    const before = generation('api_keys');
    await database.db.execute(sql`update api_keys set last_used_at = now() where false`);
    expect(generation('api_keys')).toBe(before);
    await database.db.execute(sql`update api_keys set last_used_at = now(), active = active where false`);
    expect(generation('api_keys')).toBe(before + 1);
  });
});

describe('the api_keys trigger', () => {
  it('names every column of api_keys except last_used_at (a new column must be added to it)', () => {
    const migration = readFileSync(
      fileURLToPath(new URL('../../src/db/migrations/0011_table_change_notifications.sql', import.meta.url)),
      'utf8',
    );
    const listed = /UPDATE OF ([a-z_, ]+)\s+ON api_keys/
      .exec(migration)?.[1]
      ?.split(',')
      .map((c) => c.trim());
    const columns = Object.values(getTableColumns(apiKeys)).map((c) => c.name);
    expect(listed?.sort()).toEqual(columns.filter((c) => c !== 'last_used_at').sort());
  });
});

describe('SharedReads', () => {
  function counter() {
    let generation = 0;
    const changes: TableChanges = { generation: () => generation };
    return { changes, bump: () => generation++ };
  }

  it('keeps an answer until its tables change', async () => {
    const { changes, bump } = counter();
    const reads = new SharedReads<{ n: number }>(changes, ['projects']);
    let queries = 0;
    const read = async () => ({ n: ++queries });
    expect(await reads.get('k', read)).toEqual({ n: 1 });
    expect(await reads.get('k', read)).toEqual({ n: 1 });
    expect(queries).toBe(1);
    bump();
    expect(await reads.get('k', read)).toEqual({ n: 2 });
    expect(await reads.get('other', read)).toEqual({ n: 3 });
  });

  it('does not keep, nor share, a read during which the tables changed', async () => {
    const { changes, bump } = counter();
    const reads = new SharedReads<number>(changes, ['projects']);
    let queries = 0;
    let release!: () => void;
    const first = reads.get(
      'k',
      () =>
        new Promise<number>((resolve) => {
          const n = ++queries;
          release = () => resolve(n);
        }),
    );
    bump(); // a change commits while the first read runs: a request arriving now must not join it
    const second = reads.get('k', async () => ++queries);
    release();
    expect(await first).toBe(1);
    expect(await second).toBe(2);
    expect(await reads.get('k', async () => ++queries)).toBe(2); // the second read was kept
  });

  it('without changes (PostgreSQL) only shares a read in flight', async () => {
    const reads = new SharedReads<number>(null, ['projects']);
    let queries = 0;
    const read = async () => ++queries;
    const [a, b] = await Promise.all([reads.get('k', read), reads.get('k', read)]);
    expect([a, b]).toEqual([1, 1]);
    expect(await reads.get('k', read)).toBe(2);
  });

  it('forgets a failed read, and freezes kept answers (callers share them)', async () => {
    const { changes } = counter();
    const reads = new SharedReads<{ list: string[] }>(changes, ['projects']);
    await expect(reads.get('k', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    const value = await reads.get('k', async () => ({ list: ['a'] }));
    expect(Object.isFrozen(value) && Object.isFrozen(value.list)).toBe(true);
  });

  it('are made once per owner and name (sharedReads)', async () => {
    const [a, b] = [{}, {}];
    const reads = sharedReads<number>(a, 'x', null, ['projects']);
    expect(sharedReads<number>(a, 'x', null, ['projects'])).toBe(reads);
    expect(sharedReads<number>(a, 'y', null, ['projects'])).not.toBe(reads);
    expect(sharedReads<number>(b, 'x', null, ['projects'])).not.toBe(reads);
  });
});
