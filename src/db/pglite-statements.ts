import type { PGlite, QueryOptions, Results, Transaction } from '@electric-sql/pglite';

/**
 * Named statements on the embedded database. PGlite's `query` runs every statement as an unnamed one, in six calls
 * into PostgreSQL (parse, describe the statement, bind, describe the portal, execute, sync): PostgreSQL parses and
 * plans the text again at every execution, and the service's hot statements are the same texts over and over (drizzle
 * builds them with placeholders; pg-boss's are constants). Here a text seen twice becomes a named statement, parsed and
 * described once; each execution then is one call (bind, execute, sync) with the statement's description, kept from
 * its preparation, in front of the answer so PGlite's own result parser reads it as it reads its own. PostgreSQL plans
 * a named statement generically once its custom plans stop paying (plan cache), as on any server. pg-boss sends its
 * statements without parameters through `exec`: one statement there goes the same way (see `exec`).
 * On a full-row read of an invoice by its id: 0.94 ms → 0.16 ms of the service's thread; an update: 0.46 → 0.22 ms.
 *
 * Everything else is PGlite's: its locks (the call runs under the same transaction and query locks as its own
 * `query`), its protocol serializer and result parser, its error objects (a refusal keeps its SQLSTATE `code`), its
 * notifications (LISTEN, db/table-changes.ts) and its file sync. A call with options this path does not cover (a blob,
 * parameter types), a text longer than MAX_TEXT_LENGTH and any new text once the statement cache is full go through
 * PGlite's own `query`.
 */

type PgliteModule = Pick<typeof import('@electric-sql/pglite'), 'protocol' | 'parse'>;
type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

type Parsers = Record<number | string, (value: string, typeId?: number) => unknown>;

/** PGlite's members behind its public API that its own `query` uses (present in its class, not in its types). */
interface PgliteInternals {
  _checkReady(): Promise<void>;
  _runExclusiveQuery<T>(work: () => Promise<T>): Promise<T>;
  _runExclusiveTransaction<T>(work: () => Promise<T>): Promise<T>;
  serializers: Record<number, (value: unknown) => string>;
  parsers: Parsers;
}

interface Statement {
  name: string;
  /** the parameters' type ids, from its description */
  paramTypes: number[];
  /** its row description (or "no data"), put in front of each execution's answer */
  described: BackendMessage[];
}

/** Named statements kept (each holds its plan in the embedded database's memory). */
const MAX_STATEMENTS = 256;
/** Texts seen once are remembered up to this many, then forgotten together. */
const MAX_SEEN = 1024;
/**
 * Longer texts go through PGlite's own path: the service's repeated statements are shorter, and a long text that
 * varies (a statement built per call with many values) would only fill the memory kept here.
 */
const MAX_TEXT_LENGTH = 8192;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * A named statement that cannot be used any more: PostgreSQL refuses to reuse one whose result columns changed (a
 * table altered since), and one that a `DEALLOCATE` removed no longer exists.
 */
function isStalePlan(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: string; message?: string };
  return (code === '0A000' && /cached plan/.test(message ?? '')) || code === '26000';
}

/** The PGlite instance with `query` (and `query` inside `transaction`) on named statements. */
export function withNamedStatements(client: PGlite, pglite: PgliteModule): PGlite {
  const internals = client as unknown as PgliteInternals;
  const { serialize } = pglite.protocol;
  const statements = new Map<string, Statement>();
  const seen = new Set<string>();
  let counter = 0;

  /** Whether this call goes through a named statement (false: PGlite's own path). */
  function named(text: string, options: QueryOptions | undefined): boolean {
    if (options?.blob || options?.paramTypes || text.length > MAX_TEXT_LENGTH) return false;
    if (statements.has(text)) return true;
    if (statements.size >= MAX_STATEMENTS) return false;
    if (seen.has(text)) return true;
    if (seen.size >= MAX_SEEN) seen.clear();
    seen.add(text);
    return false;
  }

  async function prepare(text: string, options: QueryOptions | undefined): Promise<Statement> {
    const name = `nfse_${++counter}`;
    const messages = await client.execProtocolStream(
      concat([serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]),
      { syncToFs: false, onNotice: options?.onNotice },
    );
    const statement: Statement = {
      name,
      paramTypes: pglite.parse.parseDescribeStatementResults(messages),
      described: messages.filter((m) => m.name === 'rowDescription' || m.name === 'noData'),
    };
    seen.delete(text);
    statements.set(text, statement);
    return statement;
  }

  /**
   * The type parsers of a call, as PGlite's result parser takes them: its own, under the call's own (drizzle gives
   * nine with every statement). PGlite's parser merges them by copying its whole table of parsers, a property per type
   * and array type of the database, at every statement: a third of its JavaScript time under load. Here the call's few
   * parsers sit over PGlite's table as its prototype, and the parser is handed them as its table.
   */
  function parsersOf(options: QueryOptions | undefined): [Parsers, QueryOptions | undefined] {
    if (!options?.parsers) return [internals.parsers, options];
    const parsers = Object.assign(Object.create(internals.parsers) as Parsers, options.parsers);
    return [parsers, { ...options, parsers: undefined }];
  }

  /** One execution, under PGlite's query lock (taken by the caller). */
  async function execute<T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> {
    try {
      const statement = statements.get(text) ?? (await prepare(text, options));
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null;
        const type = statement.paramTypes[i]!;
        const serializer = options?.serializers?.[type] ?? internals.serializers[type];
        return serializer ? serializer(value) : String(value);
      });
      const messages = await client.execProtocolStream(
        concat([serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]),
        { syncToFs: false, onNotice: options?.onNotice },
      );
      return pglite.parse.parseResults([...statement.described, ...messages], ...parsersOf(options))[0] as Results<T>;
    } catch (err) {
      // as PGlite's own query decorates its refusals
      if (err && typeof err === 'object') Object.assign(err, { query: text, params, queryOptions: options });
      const stale = isStalePlan(err) ? statements.get(text) : undefined;
      if (stale) {
        statements.delete(text);
        await client
          .execProtocolStream(concat([serialize.close({ type: 'S', name: stale.name }), serialize.sync()]), {
            syncToFs: false,
          })
          .catch(() => undefined);
      }
      throw err;
    }
  }

  async function query<T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    if (!named(text, options)) return client.query<T>(text, params, options);
    await internals._checkReady();
    const run = () =>
      internals._runExclusiveTransaction(() =>
        internals._runExclusiveQuery(async () => {
          const result = await execute<T>(text, params, options);
          await client.syncToFs();
          return result;
        }),
      );
    try {
      return await run();
    } catch (err) {
      // outside a transaction nothing was done: the statement is prepared again for the table as it is now
      if (isStalePlan(err)) return run();
      throw err;
    }
  }

  /**
   * `exec` of one statement is `query`'s (a named statement once its text is seen twice), answered as `exec` answers:
   * pg-boss sends its statements without parameters through `exec` (its PGlite adapter), its fetch of each queue among
   * them, which PGlite ran as a simple query, parsed and planned again at every call (1.0-1.8 ms, against 0.5 ms as a
   * named statement). Its plan is then kept, as any named statement's: the fetch's kept plan needs the job table
   * vacuumed (db/embedded-vacuum.ts), without which it went from 1.0 to 4.9 ms over 8,000 jobs. A text with a `;` may
   * hold several statements (pg-boss's migrations and locked blocks), and a call with options is not one `query`
   * covers: both go through PGlite's own `exec`.
   */
  async function exec(text: string, options?: QueryOptions): Promise<Results[]> {
    if (options !== undefined || text.includes(';') || !named(text, undefined)) return client.exec(text, options);
    return [await query(text)];
  }

  function inTransaction(tx: Transaction): Transaction {
    return new Proxy(tx, {
      get(target, property) {
        if (property !== 'query') return Reflect.get(target, property);
        return async <T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> => {
          if (!named(text, options)) return target.query<T>(text, params, options);
          if (target.closed) throw new Error('Transaction is closed');
          // PGlite's transaction holds its transaction lock; the statement takes the query lock, as its own would
          return internals._runExclusiveQuery(() => execute<T>(text, params, options));
        };
      },
    });
  }

  return new Proxy(client, {
    get(target, property) {
      if (property === 'query') return query;
      if (property === 'exec') return exec;
      if (property === 'transaction') {
        return <T>(work: (tx: Transaction) => Promise<T>) => target.transaction((tx) => work(inTransaction(tx)));
      }
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
