/**
 * Webhook delivery throughput to a local receiver (node:http on 127.0.0.1 answering 200 at once), with the
 * whole service in this process (API + workers, NFSE_WEBHOOKS_ALLOW_INSECURE=1), signed deliveries:
 *
 * 1. first attempts: N `batch.completed` events written to the outbox by an API-only process (their
 *    `events.dispatch` jobs queued), then a full process started on the same database: fan-out to E
 *    endpoints and the first attempts; deliveries/s from its start to the last attempt recorded;
 * 2. retries: as many deliveries (`nfse.error` events) failed once (the receiver answers 503), the service
 *    clock moved a minute on, the due attempts claimed by the poller; deliveries/s until all are recorded.
 *
 *   npx tsx bench/webhooks.ts [events] [endpoints] [concurrency]
 *
 * Embedded PGlite by default; with BENCH_DATABASE_URL (a PostgreSQL admin URL) in a fresh database there.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, count, eq, gte, sql } from 'drizzle-orm';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { webhookDeliveries } from '../src/db/schema.ts';
import { recordEvent, wakeDeliveries } from '../src/events/outbox.ts';
import { startService } from '../src/service.ts';
import { createFreshDatabase } from '../test/support/databases.ts';

const EVENTS = Number(process.argv[2] ?? 1000);
const ENDPOINTS = Number(process.argv[3] ?? 2);
const CONCURRENCY = Number(process.argv[4] ?? 16);

async function main() {
  let failing = false;
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(failing ? 503 : 200).end(failing ? 'down' : 'ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const dataDir = mkdtempSync(join(tmpdir(), 'nfse-bench-webhooks-'));
  const adminUrl = process.env.BENCH_DATABASE_URL;
  const database = adminUrl ? await createFreshDatabase(adminUrl, 'nfse_bench') : null;
  const adminKey = `svc_admin_${randomBytes(16).toString('hex')}`;
  const config = loadConfig(
    {
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'silent',
      NFSE_ADMIN_KEY: adminKey,
      NFSE_MASTER_KEY: randomBytes(32).toString('hex'),
      NFSE_WEBHOOKS_ALLOW_INSECURE: '1',
      NFSE_WORKER_CONCURRENCY: String(CONCURRENCY),
      ...(database ? { DATABASE_URL: database.url, NFSE_GOVERNMENT: 'sandbox' } : {}),
    },
    [],
  );
  let clock = Date.now();
  const boot = (role: 'api' | 'all') => {
    config.role = role;
    return startService(config, { logger: pino({ level: 'silent' }), now: () => new Date(clock) });
  };
  let service = await boot('api');
  const api = () => `${service.url}/api/v1`;
  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(`${api()}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as Record<string, string>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };

  try {
    const org = await call('POST', '/admin/organizations', adminKey, { name: 'Bench', plan: 'pro' });
    const project = await call('POST', '/org/projects', org.token!, {
      name: 'Bench',
      cnpj: '11222333000181',
      razaoSocial: 'BENCH LTDA',
    });
    const key = await call('POST', `/org/projects/${project.id}/api-keys`, org.token!, {
      name: 'bench',
      rateLimitPerMinute: 100_000,
    });
    for (let i = 0; i < ENDPOINTS; i++) {
      await call('POST', '/webhooks/endpoints', key.key!, {
        url: `${receiverUrl}/hook/${i}`,
        events: ['batch.completed', 'nfse.error'],
        secret: randomBytes(24).toString('base64url'),
      });
    }
    const total = EVENTS * ENDPOINTS;
    const projectId = project.id!;
    /** deliveries of one event type attempted at least `attempts` times, and how many of them succeeded */
    const progress = async (type: string, attempts: number) => {
      const [row] = await service.ctx.db
        .select({
          n: count(),
          ok: sql<number>`count(*) filter (where ${webhookDeliveries.status} = 'succeeded')`.mapWith(Number),
        })
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.projectId, projectId),
            eq(webhookDeliveries.eventType, type),
            gte(webhookDeliveries.attemptCount, attempts),
          ),
        );
      return { n: row?.n ?? 0, ok: row?.ok ?? 0 };
    };
    const waitUntil = async (type: string, attempts: number) => {
      const deadline = Date.now() + 300_000;
      for (;;) {
        const p = await progress(type, attempts);
        if (p.n >= total) return p;
        if (Date.now() > deadline) throw new Error(`${type}: only ${p.n} of ${total} attempted ${attempts} times`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const emit = async (type: 'batch.completed' | 'nfse.error') => {
      for (let i = 0; i < EVENTS; i++) {
        const id = randomUUID();
        await recordEvent(
          service.ctx.db,
          {
            projectId,
            ...(type === 'batch.completed'
              ? { type, batchId: id, data: { batchId: id, total: 1, issued: 1, errors: 0 } }
              : { type, invoiceId: id, data: { invoiceId: id, errorCode: 'E0001', errorMessage: 'bench' } }),
          },
          service.ctx.now(),
        );
        wakeDeliveries();
      }
    };

    // 1. first attempts: events written by the API-only process, delivered by a full one
    let started = performance.now();
    await emit('batch.completed');
    const written = performance.now() - started;
    await service.close();
    service = await boot('all');
    started = performance.now();
    const first = await waitUntil('batch.completed', 1);
    const firstSeconds = (performance.now() - started) / 1000;

    // 2. retries claimed by the poller: every first attempt fails, then the clock reaches the second
    failing = true;
    const before = received;
    await emit('nfse.error');
    await waitUntil('nfse.error', 1);
    failing = false;
    clock += 60_000;
    started = performance.now();
    const retried = await waitUntil('nfse.error', 2);
    const retrySeconds = (performance.now() - started) / 1000;

    const kind = database ? 'PostgreSQL' : 'PGlite';
    console.log(
      `webhooks (${kind}, ${EVENTS} events × ${ENDPOINTS} endpoints = ${total} signed deliveries, worker concurrency ${CONCURRENCY})`,
    );
    console.log(
      `  first attempts (fan-out included): ${(total / firstSeconds).toFixed(0)} deliveries/s (${firstSeconds.toFixed(2)} s; outbox writes beforehand: ${(EVENTS / (written / 1000)).toFixed(0)} events/s)`,
    );
    console.log(`  poller retries: ${(total / retrySeconds).toFixed(0)} deliveries/s (${retrySeconds.toFixed(2)} s)`);
    console.log(`  succeeded: ${first.ok} + ${retried.ok} of ${total} + ${total}`);
    console.log(`  receiver requests: ${received} (${received - before} in the retry round)`);
  } finally {
    await service.close();
    receiver.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
