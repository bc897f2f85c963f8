import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent, wakeDeliveries } from '../../src/events/outbox.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import {
  createWebhookTenant,
  installClock,
  type Receiver,
  sleep,
  startReceiver,
  type TestClock,
  type WebhookTenant,
  waitFor,
} from './support.ts';

/**
 * The attempt schedule of spec 6.3 with a clock the test moves (the service's `ctx.now`): the schedule is
 * `next_attempt_at` in the database, claimed by the worker's poller against that clock, so minutes and
 * hours pass without waiting for them. Events are written with the real outbox (`recordEvent`), as the
 * issuing pipeline writes them.
 */

const MINUTE = 60_000;
const T0 = Date.parse('2026-03-02T12:00:00.000Z');

let t: TestService;
let clock: TestClock;
let receiver: Receiver;
let tenant: WebhookTenant;

beforeAll(async () => {
  t = await startTestService({ NFSE_WEBHOOKS_ALLOW_INSECURE: '1' });
  clock = installClock(t.service.ctx, T0);
  receiver = await startReceiver({
    clock: () => clock.now(),
    handler: async (call, res, index) => {
      switch (call.path) {
        case '/recovers':
          return void res.writeHead(index < 4 ? 500 : 200).end(index < 4 ? `fail ${index + 1}` : 'ok');
        case '/always-500':
          return void res.writeHead(500).end('still down');
        case '/redirect':
          return void res.writeHead(302, { location: `${receiver.url}/landing` }).end();
        case '/slow':
          await sleep(12_000);
          return void (res.destroyed ? undefined : res.writeHead(200).end('too late'));
        default:
          return void res.writeHead(200).end('ok');
      }
    },
  });
  tenant = await createWebhookTenant(t);
});
afterAll(async () => {
  clock?.restore();
  await receiver?.close();
  await t?.close();
});

async function endpoint(path: string, events = ['batch.completed']) {
  const res = await t.request('POST', '/webhooks/endpoints', {
    key: tenant.key,
    body: { url: `${receiver.url}${path}`, events, secret: `secret-for-${path}` },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

async function emitBatchCompleted(projectId: string) {
  const { ctx } = t.service;
  const batchId = randomUUID();
  await recordEvent(
    ctx.db,
    {
      projectId,
      type: 'batch.completed',
      batchId,
      data: { batchId, total: 2, issued: 1, errors: 1 },
    },
    ctx.now(),
  );
  wakeDeliveries();
}

async function deliveryOf(endpointId: string) {
  const res = await t.request('GET', `/webhooks/deliveries?endpointId=${endpointId}`, { key: tenant.key });
  expect(res.status).toBe(200);
  return res.body.data[0];
}

const minutesSinceT0 = (iso: string | number) => ((typeof iso === 'number' ? iso : Date.parse(iso)) - T0) / MINUTE;

describe('the 0 / 1 / 5 / 30 / 120-minute schedule', () => {
  it('calls a receiver that fails 4 times at 0, 1, 5, 30 and 120 minutes; one that always fails ends failed after 5', async () => {
    const recovers = await endpoint('/recovers');
    const alwaysFails = await endpoint('/always-500');
    await emitBatchCompleted(tenant.projectId);

    const calls = () => [receiver.callsTo('/recovers').length, receiver.callsTo('/always-500').length];
    await waitFor(() => calls().every((n) => n === 1), 'the first attempts');

    for (const [k, offset] of [1, 5, 30, 120].entries()) {
      // a second before it is due: nothing happens
      clock.set(T0 + offset * MINUTE - 1_000);
      await sleep(1_200);
      expect(calls(), `before minute ${offset}`).toEqual([k + 1, k + 1]);
      clock.set(T0 + offset * MINUTE);
      await waitFor(() => calls().every((n) => n === k + 2), `the attempts of minute ${offset}`);
    }

    const expected = [0, 1, 5, 30, 120];
    for (const path of ['/recovers', '/always-500']) {
      const received = receiver.callsTo(path);
      expect(received.map((c) => minutesSinceT0(c.at))).toEqual(expected);
      // one delivery: the same id and the same bytes on every attempt, a fresh timestamp each time
      expect(new Set(received.map((c) => c.headers['x-svc-delivery'])).size).toBe(1);
      expect(new Set(received.map((c) => c.rawBody.toString('base64'))).size).toBe(1);
      expect(received.map((c) => minutesSinceT0(Number(c.headers['webhook-timestamp']) * 1000))).toEqual(expected);
    }

    const ok = await waitFor(async () => {
      const d = await deliveryOf(recovers);
      return d.status === 'succeeded' ? d : null;
    }, 'the recovered delivery');
    expect(ok).toMatchObject({ attemptCount: 5, lastStatusCode: 200, nextAttemptAt: null, lastError: null });
    expect(ok.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 500, 500, 500, 200]);
    expect(ok.attempts.map((a: { attemptedAt: string }) => minutesSinceT0(a.attemptedAt))).toEqual(expected);
    expect(ok.attempts[3].responseSnippet).toBe('fail 4');
    expect(ok.id).toBe(receiver.callsTo('/recovers')[0]!.headers['x-svc-delivery']);

    const failed = await waitFor(async () => {
      const d = await deliveryOf(alwaysFails);
      return d.status === 'failed' ? d : null;
    }, 'the failed delivery');
    expect(failed).toMatchObject({ attemptCount: 5, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null });
    expect(minutesSinceT0(failed.completedAt)).toBe(120);
    expect(failed.attempts.map((a: { attemptNumber: number }) => a.attemptNumber)).toEqual([1, 2, 3, 4, 5]);
    expect(failed.attempts.map((a: { attemptedAt: string }) => minutesSinceT0(a.attemptedAt))).toEqual(expected);

    // no 6th attempt, however late it gets
    clock.set(T0 + 10 * 60 * MINUTE);
    await sleep(1_200);
    expect(calls()).toEqual([5, 5]);
    for (const id of [recovers, alwaysFails])
      await t.request('DELETE', `/webhooks/endpoints/${id}`, { key: tenant.key });
  });

  it('a 302 is a failed attempt and is not followed; an answer after 12 s is a timeout', async () => {
    const T1 = T0 + 24 * 60 * MINUTE;
    clock.set(T1);
    const redirect = await endpoint('/redirect');
    const slow = await endpoint('/slow');
    await emitBatchCompleted(tenant.projectId);

    const redirected = await waitFor(async () => {
      const d = await deliveryOf(redirect);
      return d?.attemptCount === 1 ? d : null;
    }, 'the redirect attempt');
    expect(redirected).toMatchObject({ status: 'pending', lastStatusCode: 302 });
    expect(redirected.attempts[0]).toMatchObject({
      success: false,
      statusCode: 302,
      error: `redirect (302) not followed to ${receiver.url}/landing`,
    });
    expect(minutesSinceT0(redirected.nextAttemptAt)).toBe(24 * 60 + 1);
    expect(receiver.callsTo('/landing')).toHaveLength(0);

    const timedOut = await waitFor(
      async () => {
        const d = await deliveryOf(slow);
        return d?.attemptCount === 1 ? d : null;
      },
      'the timed-out attempt',
      20_000,
    );
    expect(receiver.callsTo('/slow')).toHaveLength(1);
    expect(timedOut).toMatchObject({
      status: 'pending',
      lastStatusCode: null,
      lastError: 'timeout: no answer within 10 s',
    });
    expect(timedOut.attempts[0]).toMatchObject({ success: false, statusCode: null, responseSnippet: null });
    expect(timedOut.attempts[0].durationMs).toBeGreaterThanOrEqual(9_900);
    expect(timedOut.attempts[0].durationMs).toBeLessThan(11_500);
    // the next attempt is on the schedule, a minute after the first
    expect(minutesSinceT0(timedOut.nextAttemptAt)).toBe(24 * 60 + 1);
    for (const id of [redirect, slow]) await t.request('DELETE', `/webhooks/endpoints/${id}`, { key: tenant.key });
  });
});
