import { sql } from 'drizzle-orm';
import pg from 'pg';
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

/**
 * Run once a job has run out of attempts, however its last attempt ended (the handler threw, or the attempt
 * expired: worker killed, hung past expireInSeconds, heartbeat lost). `reason` is what pg-boss recorded for the
 * last attempt (the thrown message, "job timed out", "job heartbeat timeout"). May run more than once for one
 * job (a crash of the dead-letter worker retries it), so it must be idempotent.
 */
export type ExhaustedHandler<N extends JobName> = (data: JobPayloads[N], reason: string) => Promise<void>;

/**
 * The dead-letter queue of a job: pg-boss copies a job there, with its original payload, in the same statement
 * that marks it `failed` for good, whichever way that happened (fail() after a throw, or its supervisor expiring
 * an attempt by timeout or heartbeat).
 */
export function deadLetterQueueOf(name: JobName): string {
  return `${name}.exhausted`;
}

/** The retry policy of the dead-letter queues: an on-exhausted step that throws (database blip) is retried. */
const DEAD_LETTER_POLICY = {
  retryLimit: 20,
  retryDelay: 5,
  retryBackoff: true,
  retryDelayMax: 300,
  expireInSeconds: 60,
};

export interface QueueOptions {
  /**
   * Caps every job's retryLimit (tests use 1 so a failing job runs out of attempts in seconds); null keeps
   * the catalogue's policies.
   */
  retryLimitMax?: number | null;
  /** Caps every job's expireInSeconds (tests use 2 so a hung attempt expires in seconds); null keeps the policies. */
  expireSecondsMax?: number | null;
}

/** The PostgreSQL-backed job queue (pg-boss), on PGlite in embedded mode and on PostgreSQL in production. */
export class JobQueue {
  private readonly boss: PgBoss;
  private started = false;

  private readonly options: ConstructorParameters<typeof PgBoss>[0];

  private readonly retryLimitMax: number | null;
  private readonly expireSecondsMax: number | null;
  /** the embedded database (PGlite): the queue's workers share the service's one thread */
  private readonly embedded: boolean;

  constructor(database: Database, queueOptions: QueueOptions = {}) {
    this.retryLimitMax = queueOptions.retryLimitMax ?? null;
    this.expireSecondsMax = queueOptions.expireSecondsMax ?? null;
    this.embedded = database.kind !== 'postgres';
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

  /** The catalogue's policy of a job, with the configured caps on its retries and expiry (tests). */
  policy(name: JobName) {
    const p = JOB_POLICIES[name];
    return {
      ...p,
      retryLimit: this.retryLimitMax === null ? p.retryLimit : Math.min(p.retryLimit, this.retryLimitMax),
      expireInSeconds:
        this.expireSecondsMax === null ? p.expireInSeconds : Math.min(p.expireInSeconds, this.expireSecondsMax),
    };
  }

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
        // the dead-letter queue first: a queue's deadLetter must name an existing queue
        const dead = deadLetterQueueOf(name);
        const deadOptions = { ...DEAD_LETTER_POLICY, notify: true };
        if (await setup.getQueue(dead)) await setup.updateQueue(dead, deadOptions);
        else await setup.createQueue(dead, deadOptions);
        const p = this.policy(name);
        const options = {
          retryLimit: p.retryLimit,
          retryDelay: p.retryDelaySeconds,
          retryBackoff: p.retryBackoff,
          ...(p.retryDelayMaxSeconds !== undefined ? { retryDelayMax: p.retryDelayMaxSeconds } : {}),
          expireInSeconds: p.expireInSeconds,
          ...(p.heartbeatSeconds !== undefined ? { heartbeatSeconds: p.heartbeatSeconds } : {}),
          notify: true,
          deadLetter: dead,
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
    if ('connectionString' in this.options && this.options.connectionString) {
      this.listenForJobs(this.options.connectionString);
    }
  }

  private listener: pg.Client | null = null;

  /**
   * PostgreSQL: every queue of the catalogue is `notify`, so pg-boss runs `pg_notify(<its channel>, <queue>)` in the
   * transaction that inserts a job; listening to that channel wakes this process's loop of the queue when another
   * process (the API process of `npm start`, another API instance) enqueued work, instead of at its next poll.
   * A hint only: the polls stay, and a lost connection is opened again after a second.
   */
  private listenForJobs(connectionString: string): void {
    if (!this.started) return;
    const client = new pg.Client({ connectionString });
    this.listener = client;
    const again = () => {
      if (this.listener !== client) return;
      this.listener = null;
      client.end().catch(() => undefined);
      setTimeout(() => this.listenForJobs(connectionString), 1_000).unref();
    };
    client.on('error', again);
    client.on('end', again);
    client.on('notification', (message) => {
      if (message.payload) this.loops.get(message.payload)?.wake();
    });
    client
      .connect()
      .then(() => client.query(`SELECT ${NOTIFY_CHANNEL_SQL} AS channel`))
      .then(({ rows }) => client.query(`LISTEN "${rows[0].channel}"`))
      .then(() => {
        for (const loop of this.loops.values()) loop.wake(); // what was enqueued before we listened
      })
      .catch(again);
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
    // a delayed job of this process is taken when due, not at the idle loop's next (backed-off) poll
    if (options.startAfter !== undefined) {
      const due = options.startAfter instanceof Date ? options.startAfter.getTime() - Date.now() : options.startAfter;
      this.wakeLater(name, due);
    }
  }

  /** Wakes this process's workers of a queue after `ms` (a delayed job or a retry coming due). */
  private wakeLater(name: string, ms: number): void {
    setTimeout(() => this.loops.get(name)?.wake(), Math.max(0, ms) + 20).unref();
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

  private readonly loops = new Map<string, WorkerLoop>();

  /**
   * Runs up to `concurrency` jobs of a queue at once in this process: one poller fetches as many jobs as
   * there are free slots, each job is settled on its own (complete / fail → retry policy), and a freed
   * slot is refilled at once (no batch waits for its slowest job). Jobs with a heartbeat policy are
   * touched while they run, so a job whose process died is handed to another worker soon after.
   *
   * A job that runs out of attempts is not ended here: pg-boss copies it to its dead-letter queue, and
   * `workExhausted` runs the on-exhausted step from there (one path for a thrown and an expired last attempt).
   */
  async work<N extends JobName>(name: N, concurrency: number, handler: JobHandler<N>): Promise<void> {
    const policy = this.policy(name);
    // on PGlite the jobs share the API's thread: they are started one by one as slots free, so that no group of
    // jobs' synchronous work (build, sign, validate) runs between two reads of the sockets (bench/intake: p99 280 and
    // 312 ms in two of three runs when they started in fours, 81-99 ms one by one)
    const refillAt = this.embedded ? 1 : Math.max(1, Math.min(4, Math.floor(concurrency / 8)));
    const loop = new WorkerLoop(
      concurrency,
      async () => {
        let jobs: { id: string; data: unknown; retryCount?: number }[] = [];
        const wanted = loop.free;
        try {
          jobs = (await this.boss.fetch(name, { batchSize: wanted, includeMetadata: true } as never)) as never;
        } catch (err) {
          this.onError?.(err);
          return 'error';
        }
        for (const job of jobs) {
          loop.run(async () => {
            const attempt = { id: job.id, retryCount: job.retryCount ?? 0 };
            const heartbeat = policy.heartbeatSeconds
              ? setInterval(
                  () => void this.boss.touch(name, attempt).catch((err: unknown) => this.onError?.(err)),
                  (policy.heartbeatSeconds * 1000) / 2,
                )
              : null;
            const isLastAttempt = attempt.retryCount >= policy.retryLimit;
            try {
              await handler(job.data as JobPayloads[N], { id: job.id, retryCount: attempt.retryCount, isLastAttempt });
              await this.boss.complete(name, attempt).catch((err: unknown) => this.onError?.(err));
            } catch (err) {
              this.onError?.(err);
              const message = err instanceof Error ? err.message : String(err);
              await this.boss.fail(name, attempt, { message }).catch((e: unknown) => this.onError?.(e));
              // on the last attempt the fail above also queued the dead-letter copy: end the subject now
              if (isLastAttempt) this.loops.get(deadLetterQueueOf(name))?.wake();
              else this.wakeLater(name, retryDelayMs(policy, attempt.retryCount));
            } finally {
              if (heartbeat) clearInterval(heartbeat);
            }
          });
        }
        return jobs.length === 0 ? 'empty' : jobs.length < wanted ? 'fetched' : 'full';
      },
      { refillAt },
    );
    this.loops.set(name, loop);
    loop.start();
  }

  /**
   * Runs the on-exhausted step of a job from its dead-letter queue, with the original payload. Any worker
   * process may take a copy (SKIP LOCKED, like every queue); a step that throws is retried under the
   * dead-letter policy. The steps are idempotent, so a copy run twice ends its subject once.
   */
  async workExhausted<N extends JobName>(name: N, onExhausted: ExhaustedHandler<N>): Promise<void> {
    const queue = deadLetterQueueOf(name);
    const loop = new WorkerLoop(
      1,
      async () => {
        let jobs: { id: string; data: unknown; retryCount?: number; sourceOutput?: unknown }[] = [];
        try {
          jobs = (await this.boss.fetch(queue, { batchSize: 1, includeMetadata: true } as never)) as never;
        } catch (err) {
          this.onError?.(err);
          return 'error';
        }
        for (const job of jobs) {
          loop.run(async () => {
            const attempt = { id: job.id, retryCount: job.retryCount ?? 0 };
            try {
              await onExhausted(job.data as JobPayloads[N], reasonOf(job.sourceOutput));
              await this.boss.complete(queue, attempt).catch((err: unknown) => this.onError?.(err));
            } catch (err) {
              this.onError?.(err);
              const message = err instanceof Error ? err.message : String(err);
              await this.boss.fail(queue, attempt, { message }).catch((e: unknown) => this.onError?.(e));
            }
          });
        }
        return jobs.length > 0 ? 'fetched' : 'empty';
      },
      { maxIdleMs: 5_000 },
    );
    this.loops.set(queue, loop);
    loop.start();
  }

  /** Wakes this process's workers of a queue now (after a transaction that enqueued work committed). */
  wake(name: JobName): void {
    this.loops.get(name)?.wake();
  }

  async stop(options: { graceful?: boolean; timeoutMs?: number } = {}): Promise<void> {
    if (!this.started) return;
    this.started = false;
    const timeoutMs = options.timeoutMs ?? 10_000;
    await Promise.all([...this.loops.values()].map((l) => l.stop(options.graceful === false ? 0 : timeoutMs)));
    this.loops.clear();
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
    await this.boss.stop({ graceful: options.graceful ?? true, timeout: timeoutMs, close: true });
  }
}

/** pg-boss's notification channel for the `pgboss` schema (its plans.notifyChannelSql, not exported). */
const NOTIFY_CHANNEL_SQL = "('pgboss_' || left(encode(sha224('pgboss'::bytea), 'hex'), 24))";

/** The message pg-boss stored as the output of a failed job (`{message}` from fail(), `{value: {message}}` by expiry). */
function reasonOf(output: unknown): string {
  const o = output as { message?: unknown; value?: { message?: unknown } } | null | undefined;
  const message = o?.message ?? o?.value?.message;
  return typeof message === 'string' ? message : 'unknown';
}

/**
 * A fetch loop with a fixed number of slots. While the queue has more jobs than slots (the last fetch filled every
 * free slot), it fetches again once `refillAt` slots are free rather than at each one: a fetch is a statement, and
 * on PGlite one of the dearest a note makes (1.2-1.5 ms), so a loop of 32 slots fetched once per job. A queue that
 * was drained is fetched from as soon as new work wakes the loop, at any number of free slots. (On PGlite the
 * loops of `work` refill at each freed slot: see there.)
 */
class WorkerLoop {
  private running = 0;
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private readonly idle = new Set<Promise<void>>();
  private static readonly POLL_MS = 500;
  /** free slots that make a fetch worthwhile while the queue has more (`work`: an eighth of them, 1 to 4) */
  private readonly refillAt: number;
  private readonly maxIdleMs: number;
  /** the last fetch filled every free slot: the queue may hold more */
  private backlog = false;

  /**
   * `maxIdleMs` (2 s unless given): an empty queue is polled again after 0.5 s, then less and less often (doubling) up to this: jobs
   * enqueued by this process wake the loop at once (`wake`), so the polls only pick up jobs of other processes and
   * delayed retries; on the embedded database every poll is a query on the service's own event loop.
   */
  constructor(
    private readonly slots: number,
    private readonly fetchAndRun: () => Promise<'full' | 'fetched' | 'empty' | 'error'>,
    options: { maxIdleMs?: number; refillAt?: number } = {},
  ) {
    this.maxIdleMs = options.maxIdleMs ?? 2_000;
    this.refillAt = options.refillAt ?? 1;
  }

  get free(): number {
    return this.slots - this.running;
  }

  start() {
    void this.loop();
  }

  wake() {
    this.wakeUp?.();
  }

  run(task: () => Promise<void>) {
    this.running++;
    const p = task().finally(() => {
      this.running--;
      this.idle.delete(p);
      this.wake();
    });
    this.idle.add(p);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        done();
      };
    });
  }

  private async loop() {
    let idleMs = WorkerLoop.POLL_MS;
    while (!this.stopped) {
      if (this.free <= 0 || (this.backlog && this.free < this.refillAt)) {
        // a slot that frees wakes the loop; the timer only bounds the wait
        await this.sleep(WorkerLoop.POLL_MS);
        continue;
      }
      const result = await this.fetchAndRun();
      if (this.stopped) break;
      this.backlog = result === 'full';
      if (result === 'empty') {
        await this.sleep(idleMs);
        idleMs = Math.min(idleMs * 2, this.maxIdleMs);
      } else if (result === 'error') await this.sleep(2000);
      else idleMs = WorkerLoop.POLL_MS;
    }
  }

  async stop(timeoutMs: number) {
    this.stopped = true;
    this.wake();
    if (this.idle.size > 0 && timeoutMs > 0) {
      await Promise.race([Promise.allSettled([...this.idle]), new Promise((r) => setTimeout(r, timeoutMs))]);
    }
  }
}

/** When pg-boss makes a failed attempt due again (its retry delay, doubled per attempt with backoff, capped). */
function retryDelayMs(
  policy: { retryDelaySeconds?: number; retryBackoff?: boolean; retryDelayMaxSeconds?: number },
  retryCount: number,
): number {
  const base = policy.retryDelaySeconds ?? 0;
  const seconds = policy.retryBackoff ? base * 2 ** retryCount : base;
  return Math.min(seconds, policy.retryDelayMaxSeconds ?? Number.POSITIVE_INFINITY) * 1000;
}
