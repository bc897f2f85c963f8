import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { webhookAttempts, webhookDeliveries } from '../../src/db/schema.ts';
import { recordEvent, wakeDeliveries } from '../../src/events/outbox.ts';
import type { RunningService } from '../../src/service.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import {
  createWebhookTenant,
  installClock,
  type Receiver,
  restartOn,
  sleep,
  startReceiver,
  waitFor,
} from './support.ts';

/**
 * Retries survive a restart: deliveries whose first attempt failed are pending when the process stops; a new
 * process on the same data directory (PGlite) or database (PostgreSQL) makes their second attempt when it is
 * due and completes them, with the same delivery ids and bodies. Nothing of the schedule lived in memory.
 */

const MINUTE = 60_000;
const T0 = Date.parse('2026-05-04T09:00:00.000Z');

let t: TestService;
let restarted: RunningService | null = null;
let receiver: Receiver;
let healthy = false;

beforeAll(async () => {
  t = await startTestService({ NFSE_WEBHOOKS_ALLOW_INSECURE: '1' });
  receiver = await startReceiver({
    handler: (_call, res) => void res.writeHead(healthy ? 200 : 503).end(healthy ? 'ok' : 'maintenance'),
  });
});
afterAll(async () => {
  await restarted?.close();
  await receiver?.close();
  await t?.close();
});

it('a restart while retries are pending loses none of them', async () => {
  const clock = installClock(t.service.ctx, T0);
  const tenant = await createWebhookTenant(t);
  for (const path of ['/a', '/b', '/c']) {
    const res = await t.request('POST', '/webhooks/endpoints', {
      key: tenant.key,
      body: { url: `${receiver.url}${path}`, events: ['batch.completed'], secret: `s3cret${path}` },
    });
    expect(res.status, res.text).toBe(201);
  }
  for (let i = 0; i < 2; i++) {
    const batchId = randomUUID();
    await recordEvent(
      t.service.ctx.db,
      {
        projectId: tenant.projectId,
        type: 'batch.completed',
        batchId,
        data: { batchId, total: 1, issued: 1, errors: 0 },
      },
      t.service.ctx.now(),
    );
    wakeDeliveries();
  }
  const db = t.service.ctx.db;
  const pendingAfterOneAttempt = await waitFor(async () => {
    const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.projectId, tenant.projectId));
    return rows.length === 6 && rows.every((r) => r.status === 'pending' && r.attemptCount === 1) ? rows : null;
  }, 'six deliveries with a failed first attempt');
  for (const row of pendingAfterOneAttempt) expect(row.nextAttemptAt!.getTime()).toBe(T0 + MINUTE);
  expect(receiver.calls).toHaveLength(6);
  clock.restore();

  await t.service.close();
  healthy = true;

  // the new process starts half a minute later: the retries are not due yet, and are not made
  let now = T0 + 30_000;
  restarted = await restartOn(t, { NFSE_WEBHOOKS_ALLOW_INSECURE: '1' }, () => new Date(now));
  await sleep(1_200);
  expect(receiver.calls).toHaveLength(6);
  // … until its clock reaches the second attempt's due time
  now = T0 + MINUTE;
  const db2 = restarted.ctx.db;
  const done = await waitFor(async () => {
    const rows = await db2.select().from(webhookDeliveries).where(eq(webhookDeliveries.projectId, tenant.projectId));
    return rows.every((r) => r.status === 'succeeded') ? rows : null;
  }, 'every pending delivery to complete after the restart');
  expect(done).toHaveLength(6);
  for (const row of done) {
    expect(row.attemptCount).toBe(2);
    const attempts = await db2.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, row.id));
    expect(attempts.map((a) => [a.attemptNumber, a.statusCode, a.attemptedAt.getTime()]).sort()).toEqual([
      [1, 503, T0],
      [2, 200, T0 + MINUTE],
    ]);
    const calls = receiver.calls.filter((c) => c.headers['x-svc-delivery'] === row.id);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.rawBody.toString('utf8')).toBe(row.body);
    expect(calls[0]!.rawBody.equals(calls[1]!.rawBody)).toBe(true);
  }
  expect(receiver.calls).toHaveLength(12);
});
