import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { webhookAttempts, webhookDeliveries } from '../../src/db/schema.ts';
import { recordEvent, wakeDeliveries } from '../../src/events/outbox.ts';
import { ATTEMPT_LEASE_MS, claimDelivery } from '../../src/webhooks/deliveries.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { createWebhookTenant, installClock, type Receiver, startReceiver, waitFor } from './support.ts';

/**
 * An attempt interrupted by a crash is recorded (issue 9, item 8): a worker claims a delivery (its lease starts)
 * and dies before recording the outcome; when the lease runs out another worker claims it again, writes the lost
 * attempt into the history (failed, outcome unknown) and makes the next one.
 */

const T0 = Date.parse('2026-06-01T10:00:00.000Z');
let t: TestService;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestService({ NFSE_WEBHOOKS_ALLOW_INSECURE: '1' });
  // the first attempt fails (so the delivery waits for its retry), every later one succeeds
  receiver = await startReceiver({
    handler: (_call, res, index) => void res.writeHead(index === 0 ? 503 : 200).end(index === 0 ? 'busy' : 'ok'),
  });
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

it('writes the interrupted attempt into the history when the delivery is retried', async () => {
  const clock = installClock(t.service.ctx, T0);
  try {
    const tenant = await createWebhookTenant(t);
    const endpoint = await t.request('POST', '/webhooks/endpoints', {
      key: tenant.key,
      body: { url: `${receiver.url}/hook`, events: ['batch.completed'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    // the fan-out at T0 - 1 h makes the first attempt (503); the retry is due a minute later, on a clock that stays
    clock.set(T0 - 3600_000);
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
    const db = t.service.ctx.db;
    const [row] = await waitFor(async () => {
      const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.projectId, tenant.projectId));
      return rows.length === 1 && rows[0]!.attemptCount === 1 ? rows : null;
    }, 'the first attempt');
    expect(row!.attemptStartedAt).toBeNull();

    // another worker, whose clock reads T0, claims the retry and dies before recording it (what kill -9 leaves)
    const claimed = await claimDelivery({ ...t.service.ctx, now: () => new Date(T0) }, row!.id);
    expect(claimed?.delivery.attemptStartedAt?.getTime()).toBe(T0);

    // after the lease, the running worker's poller takes it again
    clock.set(T0 + ATTEMPT_LEASE_MS + 1000);
    const done = await waitFor(async () => {
      const [d] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, row!.id));
      return d?.status === 'succeeded' ? d : null;
    }, 'the retried delivery');
    expect(done.attemptCount).toBe(3);
    expect(done.attemptStartedAt).toBeNull();
    const attempts = await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, row!.id));
    attempts.sort((a, b) => a.attemptNumber - b.attemptNumber);
    expect(attempts.map((a) => [a.attemptNumber, a.statusCode, a.attemptedAt.getTime()])).toEqual([
      [1, 503, T0 - 3600_000],
      [2, null, T0],
      [3, 200, T0 + ATTEMPT_LEASE_MS + 1000],
    ]);
    expect(attempts[1]!.error).toMatch(/interrupted/);
    expect(receiver.calls).toHaveLength(2);

    // and the API shows it
    const view = await t.request('GET', `/webhooks/deliveries/${row!.id}`, { key: tenant.key });
    expect(view.status, view.text).toBe(200);
    expect(JSON.stringify(view.body)).toContain('interrupted');
  } finally {
    clock.restore();
  }
});
