import { sql } from 'drizzle-orm';
import { fromDrizzle, PgBoss } from 'pg-boss';
import type { Database, DbOrTx } from '../db/client.ts';
import { JOB_NAMES, JOB_POLICIES, type JobName, type JobPayloads } from './catalogue.ts';

export interface SendOptions {
  /** enqueue inside this transaction: the job exists only if the transaction commits */
  tx?: DbOrTx;
  startAfter?: Date | number;
  /** at most one queued job with this key (pg-boss singleton) */
  singletonKey?: string;
}

export interface JobContext {
  id: string;
  /** 0 on the first attempt */
  retryCount: number;
  /** whether a failure now is the last allowed attempt */
  isLastAttempt: boolean;
}

/** A handler that throws asks for a retry under the job's policy; returning settles the job. */
export type JobHandler<N extends JobName> = (data: JobPayloads[N], job: JobContext) => Promise<void>;

/** The PostgreSQL-backed job queue (pg-boss), on PGlite in embedded mode and on PostgreSQL in production. */
export class JobQueue {
  private readonly boss: PgBoss;
  private started = false;

  private readonly options: ConstructorParameters<typeof PgBoss>[0];

  constructor(database: Database) {
    const connection = database.queueConnection;
    this.options = {
      ...('db' in connection ? { db: connection.db } : { connectionString: connection.connectionString, max: 4 }),
      schema: 'pgboss',
      useListenNotify: database.kind === 'postgres',
      superviseIntervalSeconds: 5,
      monitorIntervalSeconds: 5,
    } as ConstructorParameters<typeof PgBoss>[0];
    this.boss = new PgBoss(this.options);
    this.boss.on('error', (err: unknown) => {
      // connection blips are retried by pg-boss; surfaced through the logger hook below
      this.onError?.(err);
    });
  }

  onError?: (err: unknown) => void;

  async start(): Promise<void> {
    if (this.started) return;
    // Queues are created by a short-lived instance first, so the real one caches every queue when it
    // starts: a send inside a transaction must never look a queue up on another connection (on the
    // single-connection PGlite that would wait for the transaction itself).
    const setup = new PgBoss({ ...this.options, supervise: false, schedule: false } as ConstructorParameters<
      typeof PgBoss
    >[0]);
    setup.on('error', (err: unknown) => this.onError?.(err));
    await setup.start();
    try {
      for (const name of JOB_NAMES) {
        const p = JOB_POLICIES[name];
        const options = {
          retryLimit: p.retryLimit,
          retryDelay: p.retryDelaySeconds,
          retryBackoff: p.retryBackoff,
          ...(p.retryDelayMaxSeconds !== undefined ? { retryDelayMax: p.retryDelayMaxSeconds } : {}),
          expireInSeconds: p.expireInSeconds,
          ...(p.heartbeatSeconds !== undefined ? { heartbeatSeconds: p.heartbeatSeconds } : {}),
          notify: true,
        };
        const existing = await setup.getQueue(name);
        if (existing) await setup.updateQueue(name, options);
        else await setup.createQueue(name, options);
      }
    } finally {
      await setup.stop({ graceful: false, close: !('db' in (this.options as object)) });
    }
    await this.boss.start();
    this.started = true;
  }

  async send<N extends JobName>(name: N, data: JobPayloads[N], options: SendOptions = {}): Promise<void> {
    await this.boss.send(name, data as object, {
      ...(options.tx ? { db: fromDrizzle(options.tx as never, sql as never) } : {}),
      ...(options.startAfter !== undefined
        ? {
            startAfter:
              options.startAfter instanceof Date ? options.startAfter : new Date(Date.now() + options.startAfter),
          }
        : {}),
      ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
    });
  }

  /** Many jobs of one kind in one statement (optionally inside a transaction). */
  async insert<N extends JobName>(name: N, items: JobPayloads[N][], options: { tx?: DbOrTx } = {}): Promise<void> {
    if (items.length === 0) return;
    await this.boss.insert(
      name,
      items.map((data) => ({ data: data as object })),
      options.tx ? { db: fromDrizzle(options.tx as never, sql as never) } : undefined,
    );
  }

  async work<N extends JobName>(name: N, concurrency: number, handler: JobHandler<N>): Promise<void> {
    const retryLimit = JOB_POLICIES[name].retryLimit;
    // Two pollers per process, each fetching a batch and running its jobs concurrently, settled one by one.
    const batchSize = Math.max(1, Math.ceil(concurrency / 2));
    await this.boss.work(
      name,
      {
        batchSize,
        localConcurrency: 2,
        pollingIntervalSeconds: 0.5,
        includeMetadata: true,
        perJobResults: true,
        burstWhenBatchFull: true,
      } as never,
      (async (jobs: { id: string; data: unknown; retryCount?: number }[]) =>
        Promise.all(
          jobs.map(async (job) => {
            const retryCount = job.retryCount ?? 0;
            try {
              await handler(job.data as JobPayloads[N], {
                id: job.id,
                retryCount,
                isLastAttempt: retryCount >= retryLimit,
              });
              return { id: job.id, status: 'completed' as const };
            } catch (err) {
              this.onError?.(err);
              return {
                id: job.id,
                status: 'failed' as const,
                output: { message: err instanceof Error ? err.message : String(err) },
              };
            }
          }),
        )) as never,
    );
  }

  async stop(options: { graceful?: boolean; timeoutMs?: number } = {}): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.boss.stop({ graceful: options.graceful ?? true, timeout: options.timeoutMs ?? 10_000, close: true });
  }
}
