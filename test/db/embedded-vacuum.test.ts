import * as pgliteModule from '@electric-sql/pglite';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vacuumEmbedded } from '../../src/db/embedded-vacuum.ts';
import { withNamedStatements } from '../../src/db/pglite-statements.ts';

/**
 * The embedded database's vacuum (db/embedded-vacuum.ts): PGlite has no autovacuum, so the service vacuums the tables
 * past an autovacuum-like rule itself, through the same named statements as the service's.
 */
describe('vacuum of the embedded database', () => {
  let raw: PGlite;
  let db: PGlite;
  beforeAll(async () => {
    raw = await PGlite.create();
    db = withNamedStatements(raw, pgliteModule);
    await raw.exec(`
      create table churned (id int primary key, state text not null, n int not null default 0);
      create index churned_state on churned (state);
      create table quiet (id int primary key, n int not null default 0);
      insert into churned select g, 'queued' from generate_series(1, 3000) g;
      insert into quiet select g from generate_series(1, 100) g;
      analyze churned; analyze quiet;`);
  }, 60_000);
  afterAll(async () => {
    await raw?.close();
  });

  /** PostgreSQL flushes a backend's counts at most once a second: flushed now, for the next statement. */
  const flush = async () => {
    await raw.query('select pg_stat_force_next_flush()');
    await raw.query('select 1');
  };
  /** The vacuum as it runs every few seconds in the service, on counts flushed since the last changes. */
  const vacuum = async () => {
    await flush();
    return vacuumEmbedded(db);
  };
  const stats = async (table: string) => {
    await flush();
    const { rows } = await raw.query<{ dead: number; vacuums: number }>(
      `select n_dead_tup::int as dead, vacuum_count::int as vacuums from pg_stat_user_tables where relname = $1`,
      [table],
    );
    return rows[0]!;
  };

  it('vacuums a table past its dead-rows rule, and only that one', async () => {
    // as pg-boss's jobs: each row updated twice on an indexed column (no HOT update), 6,000 dead versions
    await raw.exec(
      `update churned set state = 'active'; update churned set state = 'completed'; update quiet set n = 1`,
    );
    expect((await stats('churned')).dead).toBe(6000);
    expect((await stats('quiet')).dead).toBe(100);

    const done = await vacuum();
    expect(done.map((t) => [t.table, t.deadRows])).toEqual([['public.churned', 6000]]);
    expect(await stats('churned')).toMatchObject({ dead: 0, vacuums: 1 });
    expect(await stats('quiet')).toMatchObject({ dead: 100, vacuums: 0 });
    // nothing due any more: nothing done
    expect(await vacuum()).toEqual([]);
  });

  it('leaves a table that only grew, and vacuums a larger table later (the rule grows with it)', async () => {
    await raw.exec('insert into quiet select g from generate_series(101, 2100) g');
    expect(await vacuum()).toEqual([]);

    // 1,050 dead rows (an indexed column changed: no HOT update, which pruning would clean): past the rule of a
    // 100-row table (1,002), not of this 3,000-row one (1,060)
    await raw.exec(`update churned set state = 'requeued' where id <= 1050`);
    expect((await stats('churned')).dead).toBe(1050);
    expect(await vacuum()).toEqual([]);
    await raw.exec(`update churned set state = 'queued' where id <= 20`);
    expect((await vacuum()).map((t) => t.table)).toEqual(['public.churned']);
  });

  it('quotes the names it vacuums', async () => {
    await raw.exec(`create schema "odd ""schema"""; create table "odd ""schema"""."a table" (id int primary key)`);
    await raw.exec(`insert into "odd ""schema"""."a table" select g from generate_series(1, 1500) g`);
    await raw.exec(`delete from "odd ""schema"""."a table"`);
    const done = await vacuum();
    expect(done.map((t) => [t.table, t.deadRows])).toEqual([['odd "schema".a table', 1500]]);
  });
});
