import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Db, DbOrTx } from './client.ts';

/**
 * Statements that every issued note runs several times (a row by its id), prepared once per database handle.
 * Drizzle builds a query's SQL each time it runs it, and that costs in proportion to the columns it names: a select
 * of the invoices' whole row took about 0.17 ms of the worker's CPU to build, several times per note. A prepared
 * statement is built once and only binds its parameters (on PostgreSQL it is also a named statement, parsed once per
 * connection). A transaction is another handle, short-lived: there the statement is built for it at each call.
 */
const statements = new WeakMap<Db, Map<string, unknown>>();

export function prepared<T>(db: DbOrTx, name: string, prepare: (db: DbOrTx) => T): T {
  if (db instanceof PgTransaction) return prepare(db);
  const handle = db as Db;
  let byName = statements.get(handle);
  if (!byName) {
    byName = new Map();
    statements.set(handle, byName);
  }
  let statement = byName.get(name) as T | undefined;
  if (statement === undefined) {
    statement = prepare(handle);
    byName.set(name, statement);
  }
  return statement;
}
