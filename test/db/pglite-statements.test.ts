import * as pgliteModule from '@electric-sql/pglite';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withNamedStatements } from '../../src/db/pglite-statements.ts';

/**
 * Named statements on the embedded database (db/pglite-statements.ts): the same answers, errors, locks and
 * notifications as PGlite's own `query`, with a text seen twice parsed and described once.
 */
describe('named statements on PGlite', () => {
  let raw: PGlite;
  let db: PGlite;
  const ID = '11111111-1111-4111-8111-111111111111';
  beforeAll(async () => {
    raw = await PGlite.create();
    db = withNamedStatements(raw, pgliteModule);
    await raw.exec(`
      create table items (id uuid primary key, doc jsonb not null, name text, n int not null default 0,
        at timestamptz not null default now(), big bigint, flag boolean);
      create table log (id serial primary key, item uuid, note text);`);
  }, 60_000);
  afterAll(async () => {
    await raw?.close();
  });

  /** The named statements of the session (pg_prepared_statements lists those made by the protocol too). */
  const prepared = async () =>
    (await raw.query<{ name: string }>(`select name from pg_prepared_statements where name like 'nfse_%'`)).rows.map(
      (r) => r.name,
    );

  it('answers as PGlite does, in object and array rows, from the second time a text is seen', async () => {
    const doc = { a: 'é', list: [1, 2, { b: null }] };
    const insert = 'insert into items (id, doc, name, big, flag) values ($1, $2, $3, $4, $5) returning id, at';
    const first = await db.query(insert, [ID, JSON.stringify(doc), "O'Brien", 9_007_199_254_740_991n, true]);
    expect(first.affectedRows).toBe(1);
    expect(await prepared()).toEqual([]); // seen once: PGlite's own path
    const select = 'select id, doc, name, n, at, big, flag from items where id = $1';
    for (const rowMode of ['object', 'array'] as const) {
      const own = await raw.query(select, [ID], { rowMode });
      const once = await db.query(select, [ID], { rowMode });
      const twice = await db.query(select, [ID], { rowMode });
      const thrice = await db.query(select, [ID], { rowMode });
      for (const answer of [once, twice, thrice]) {
        expect(answer.rows).toEqual(own.rows);
        expect(answer.fields).toEqual(own.fields);
      }
    }
    expect((await prepared()).length).toBe(1); // one text, one statement (object and array rows share it)
    const rows = (await db.query<{ doc: unknown; big: bigint; at: Date }>(select, [ID])).rows;
    expect(rows[0]!.doc).toEqual(doc);
    expect(rows[0]!.at).toBeInstanceOf(Date);
  });

  it('binds arrays, of uuids, numbers with nulls, text and JSON, as PGlite does', async () => {
    await raw.exec('create table arrays (id uuid, n int, s text, doc jsonb)');
    const insert = `insert into arrays select * from unnest($1::uuid[], $2::int[], $3::text[], $4::jsonb[])`;
    const ids = ['55555555-5555-4555-8555-555555555555', '66666666-6666-4666-8666-666666666666'];
    const docs = [JSON.stringify({ q: 'a "b" \\ c', list: [1, null] }), '[]'];
    const before = (await prepared()).length;
    for (let i = 0; i < 3; i++) await db.query(insert, [ids, [i, null], ['x, {y}', null], docs]);
    expect((await prepared()).length).toBe(before + 1); // the second and third went through the named statement
    const rows = (await db.query('select * from arrays order by n nulls last, id')).rows;
    expect(rows).toHaveLength(6);
    expect(rows[0]).toEqual({ id: ids[0], n: 0, s: 'x, {y}', doc: { q: 'a "b" \\ c', list: [1, null] } });
    expect(rows.at(-1)).toEqual({ id: ids[1], n: null, s: null, doc: [] });
  });

  it('leaves long texts to PGlite', async () => {
    const long = `select $1::int as v -- ${'x'.repeat(9000)}`;
    const before = (await prepared()).length;
    for (let i = 0; i < 3; i++) expect((await db.query<{ v: number }>(long, [i])).rows[0]!.v).toBe(i);
    expect((await prepared()).length).toBe(before);
  });

  it('counts affected rows, binds nulls and dates, and answers statements without rows', async () => {
    const update = 'update items set name = $1, at = $2, n = n + 1 where id = $3';
    const at = new Date('2026-01-02T03:04:05.678Z');
    for (let i = 0; i < 3; i++) expect((await db.query(update, [null, at, ID])).affectedRows).toBe(1);
    expect((await db.query(update, [null, at, '22222222-2222-4222-8222-222222222222'])).affectedRows).toBe(0);
    const row = (await db.query<{ name: string | null; at: Date; n: number }>('select name, at, n from items'))
      .rows[0]!;
    expect(row).toEqual({ name: null, at, n: 3 });
  });

  it('keeps the SQLSTATE of a refusal, and the statement stays usable after it', async () => {
    const insert = 'insert into items (id, doc) values ($1, $2)';
    const other = '33333333-3333-4333-8333-333333333333';
    await db.query(insert, [other, '{}']); // seen once
    const duplicate = db.query(insert, [other, '{}']); // prepared now, refused at execution
    await expect(duplicate).rejects.toMatchObject({ code: '23505', query: insert });
    await expect(db.query(insert, ['not-a-uuid', '{}'])).rejects.toMatchObject({ code: '22P02' });
    const fresh = '44444444-4444-4444-8444-444444444444';
    expect((await db.query(insert, [fresh, '{}'])).affectedRows).toBe(1);
    // a text PostgreSQL cannot parse is refused both times, and never kept
    for (let i = 0; i < 2; i++)
      await expect(db.query('selec 1 where $1', [1])).rejects.toMatchObject({ code: '42601' });
  });

  it('runs inside transactions: committed together, rolled back together, an error aborting the transaction', async () => {
    const note = 'insert into log (item, note) values ($1, $2) returning id';
    await db.query(note, [ID, 'warm']);
    await db.transaction(async (tx) => {
      await tx.query(note, [ID, 'a']);
      await tx.query(note, [ID, 'b']);
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query(note, [ID, 'c']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    await expect(
      db.transaction(async (tx) => {
        await tx.query(note, [ID, 'd']);
        await tx.query(note, ['not-a-uuid', 'e']).catch(() => undefined);
        await tx.query(note, [ID, 'f']); // the transaction is aborted
      }),
    ).rejects.toMatchObject({ code: '25P02' });
    const notes = (await db.query<{ note: string }>('select note from log order by id')).rows.map((r) => r.note);
    expect(notes).toEqual(['warm', 'a', 'b']);
    // a closed transaction refuses statements, as PGlite's own does
    let leaked: pgliteModule.Transaction | undefined;
    await db.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked!.query(note, [ID, 'late'])).rejects.toThrow('Transaction is closed');
  });

  it('serializes with other statements: concurrent calls and transactions never interleave', async () => {
    const bump = 'update items set n = n + 1 where id = $1 returning n';
    await db.query('update items set n = 0 where id = $1', [ID]);
    const calls = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0
        ? db.transaction(async (tx) => {
            await tx.query(bump, [ID]);
            await tx.query(bump, [ID]);
          })
        : db.query(bump, [ID]),
    );
    await Promise.all(calls);
    expect((await db.query<{ n: number }>('select n from items where id = $1', [ID])).rows[0]!.n).toBe(50);
  });

  it('delivers notifications raised by its statements', async () => {
    const heard: string[] = [];
    await raw.listen('items_changed', (payload) => heard.push(payload));
    const notify = 'select pg_notify($1, $2)';
    for (let i = 0; i < 3; i++) await db.query(notify, ['items_changed', `n${i}`]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual(['n0', 'n1', 'n2']);
  });

  it('runs a one-statement exec as a named statement from its second time, answering as PGlite’s exec', async () => {
    // pg-boss's fetch of a queue is a constant text without parameters, sent through exec
    const fetch = `update items set n = n + 1 where id = '${ID}' returning id, n, doc`;
    const before = await prepared();
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await db.exec(fetch));
    const own = await raw.exec(fetch);
    expect((await prepared()).length).toBe(before.length + 1); // parsed and planned once, then bound and executed
    for (const [i, answer] of answers.entries()) {
      expect(answer).toHaveLength(1);
      expect(answer[0]!.fields).toEqual(own[0]!.fields);
      expect(answer[0]!.affectedRows).toBe(1);
      expect(answer[0]!.rows).toEqual([{ ...own[0]!.rows[0], n: (own[0]!.rows[0] as { n: number }).n - 3 + i }]);
    }
    // several statements (pg-boss's migrations and locked blocks) stay PGlite's simple query: every answer is there
    const block = `begin; update items set n = n + 1 where id = '${ID}'; select n from items where id = '${ID}'; commit`;
    for (let i = 0; i < 2; i++) {
      const results = await db.exec(block);
      expect(results).toHaveLength(4);
      expect(results[2]!.rows).toEqual([{ n: (own[0]!.rows[0] as { n: number }).n + 1 + i }]);
    }
    expect((await prepared()).length).toBe(before.length + 1);
    // a refusal keeps its SQLSTATE, and the statement stays usable
    const refused = `insert into log (id, item) values (9001, '${ID}')`;
    await db.exec(refused);
    await expect(db.exec(refused)).rejects.toMatchObject({ code: '23505' });
    expect((await db.exec(`select count(*)::int as n from log where id = 9001`))[0]!.rows).toEqual([{ n: 1 }]);
  });

  it('prepares again a statement whose table changed its result columns', async () => {
    await raw.exec('create table shapes (id int primary key, a text)');
    const read = 'select * from shapes where id = $1';
    await raw.exec(`insert into shapes values (1, 'x')`);
    await db.query(read, [1]);
    expect((await db.query(read, [1])).rows).toEqual([{ id: 1, a: 'x' }]);
    await raw.exec(`alter table shapes add column b text default 'y'`);
    expect((await db.query(read, [1])).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
    expect((await db.query(read, [1])).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
  });

  it('prepares again the statements a DEALLOCATE removed', async () => {
    const read = 'select count(*)::int as n from items where n >= $1';
    await db.query(read, [0]);
    const before = (await db.query<{ n: number }>(read, [0])).rows[0]!.n;
    await raw.exec('deallocate all');
    expect((await db.query<{ n: number }>(read, [0])).rows[0]!.n).toBe(before);
    expect(await prepared()).toHaveLength(1);
  });

  it('keeps at most 256 named statements; further texts use PGlite’s own path', async () => {
    const twice = async (text: string, expected: number) => {
      await db.query(text, [1]);
      expect((await db.query<{ v: number }>(text, [1])).rows[0]!.v).toBe(expected);
    };
    for (let i = 0; i < 300; i++) await twice(`select $1::int + ${i} as v`, 1 + i);
    const kept = (await prepared()).length;
    expect(kept).toBeGreaterThan(200); // the earlier tests' statements count too (some deallocated above)
    expect(kept).toBeLessThanOrEqual(256);
    for (let i = 0; i < 10; i++) await twice(`select $1::int - ${i} as v`, 1 - i);
    expect((await prepared()).length).toBe(kept);
  });
});
