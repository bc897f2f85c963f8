import type { PGlite } from '@electric-sql/pglite';

/**
 * The embedded database's vacuum. On a PostgreSQL server autovacuum, a background process, removes the dead row
 * versions that updates and deletes leave and keeps the planner's statistics current; PGlite is one backend with no
 * autovacuum, so on the embedded default nothing ever did. Every job goes through three versions of its row
 * (queued, active, completed) in pg-boss's job table, each written into that table's 12 indexes, and a note's invoice
 * row through five or six: the dead versions and their index entries stayed, and the statements that scan them got
 * slower as notes were issued. Measured on PGlite (pg-boss's fetch of one job, then its completion, over 8,000 jobs):
 * the fetch as a named statement went from 1.0 to 4.9 ms and the completion took 1.2-1.5 ms; with the job table
 * vacuumed after every 500 jobs (2 ms each time), 0.5 and 0.7 ms throughout.
 *
 * `vacuumEmbedded` does what autovacuum would, by the same kind of rule: a table with more dead row versions than
 * VACUUM_BASE + VACUUM_SCALE × its live rows is vacuumed, one table per statement (VACUUM runs alone). The rule grows
 * with the table because a vacuum reads each index of the table whole: a larger table is vacuumed less often, for
 * about the same cost per dead row. The worker wiring calls it every few seconds, as background work.
 *
 * It does not analyse (autovacuum's other half): `VACUUM (ANALYZE)` of the invoices table took 84 ms of the service's
 * one thread, against 16-22 ms for the vacuum alone, at every few hundred notes (their five updates count as
 * changes), for no measured gain: the service's statements read by keys, and PostgreSQL estimates from the tables'
 * sizes, which the vacuum keeps current. The embedded database has never been analysed by the service.
 */

/** Dead row versions a table may hold before it is vacuumed: this many, plus VACUUM_SCALE × its live rows. */
const VACUUM_BASE = 1000;
const VACUUM_SCALE = 0.02;

export interface VacuumedTable {
  table: string;
  /** the dead row versions counted before */
  deadRows: number;
  ms: number;
}

const DUE = `select schemaname as schema, relname as name, n_dead_tup::float8 as dead
from pg_stat_user_tables
where n_dead_tup > ${VACUUM_BASE} + ${VACUUM_SCALE} * n_live_tup
order by n_dead_tup desc`;

const quoted = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/**
 * Vacuums the tables of the embedded database that are due, one statement each, through `client` (the
 * caller's: the service passes its gated instance, so the statements wait behind the API's). Returns what it did.
 */
export async function vacuumEmbedded(client: PGlite): Promise<VacuumedTable[]> {
  const { rows } = await client.query<{ schema: string; name: string; dead: number }>(DUE);
  const done: VacuumedTable[] = [];
  for (const row of rows) {
    const table = `${quoted(row.schema)}.${quoted(row.name)}`;
    const started = performance.now();
    await client.exec(`VACUUM ${table}`);
    done.push({ table: `${row.schema}.${row.name}`, deadRows: row.dead, ms: performance.now() - started });
  }
  return done;
}
