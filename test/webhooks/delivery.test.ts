import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';
import { expectProblem } from '../support/route-checks.ts';
import { installClock, type ReceivedCall, type Receiver, sleep, startReceiver, waitFor } from './support.ts';

/**
 * Deliveries end to end: a real receiver on 127.0.0.1 (development setting on) gets `nfse.issued` for an
 * invoice issued through the sandbox, and the test checks both signatures with plain node:crypto over the
 * raw body; rotation (two Standard Webhooks signatures for 24 h), `whsec_` secrets, the test delivery,
 * manual retry and the history.
 */

let t: TestService;
let p: OnboardedProject;
let receiver: Receiver;
/** per path: the statuses to answer, in order (the last one repeats); default 200 */
const script = new Map<string, number[]>();

beforeAll(async () => {
  t = await startTestService({ NFSE_WEBHOOKS_ALLOW_INSECURE: '1' });
  p = await onboardProject(t, { rateLimitPerMinute: 100_000 });
  receiver = await startReceiver({
    handler: (call, res, index) => {
      const statuses = script.get(call.path) ?? [200];
      const status = statuses[Math.min(index, statuses.length - 1)]!;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'down');
    },
  });
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

const createEndpoint = async (body: Record<string, unknown>) => {
  const res = await t.request('POST', '/webhooks/endpoints', { key: p.apiKey, body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; secret: string | null };
};

/** X-Svc-Signature as a receiver computes it: HMAC-SHA256 of the raw body, the secret's UTF-8 bytes as key. */
function expectSvcSignature(call: ReceivedCall, secret: string) {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(call.rawBody).digest('hex')}`);
  const got = Buffer.from(String(call.headers['x-svc-signature']));
  expect(got.length).toBe(expected.length);
  expect(timingSafeEqual(got, expected)).toBe(true);
}

/** The Standard Webhooks signatures of a call, each checked against the given keys (in order). */
function expectStandardSignatures(call: ReceivedCall, keys: Buffer[]) {
  const id = String(call.headers['webhook-id']);
  const timestamp = String(call.headers['webhook-timestamp']);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), call.rawBody]);
  const signatures = String(call.headers['webhook-signature']).split(' ');
  expect(signatures).toHaveLength(keys.length);
  keys.forEach((key, i) => {
    const [version, mac] = signatures[i]!.split(',');
    expect(version).toBe('v1');
    const expected = createHmac('sha256', key).update(signed).digest();
    expect(timingSafeEqual(Buffer.from(mac!, 'base64'), expected)).toBe(true);
  });
}

describe('nfse.issued', () => {
  it('reaches a real receiver with the envelope, the headers and both signatures', async () => {
    const secret = 'segredo-do-receptor-0001';
    const endpoint = await createEndpoint({ url: `${receiver.url}/issued`, events: ['nfse.issued'], secret });
    const errorsOnly = await createEndpoint({ url: `${receiver.url}/errors-only`, events: ['nfse.error'] });
    const inactive = await createEndpoint({ url: `${receiver.url}/inactive`, events: ['nfse.issued'], active: false });

    const issued = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(issued.status, issued.text).toBe(202);
    const invoiceId = issued.body.invoiceId as string;
    const status = await waitForInvoice(t, p.apiKey, invoiceId, 30_000);
    expect(status.status).toBe('issued');

    const call = await waitFor(() => receiver.callsTo('/issued')[0], 'the nfse.issued delivery');
    expect(call.method).toBe('POST');
    expect(call.headers['content-type']).toBe('application/json');
    expect(call.headers['x-svc-event']).toBe('nfse.issued');
    const deliveryId = String(call.headers['x-svc-delivery']);
    expect(deliveryId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(call.headers['webhook-id']).toBe(deliveryId);
    const timestamp = Number(call.headers['webhook-timestamp']);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(120);

    expectSvcSignature(call, secret);
    expectStandardSignatures(call, [Buffer.from(secret, 'utf8')]);

    const raw = call.rawBody.toString('utf8');
    const envelope = JSON.parse(raw);
    expect(Object.keys(envelope)).toEqual(['event', 'deliveryId', 'timestamp', 'data']);
    expect(envelope).toMatchObject({
      event: 'nfse.issued',
      deliveryId,
      data: { invoiceId, chNFSe: status.chNFSe, nNFSe: status.numeroNfse },
    });
    expect(new Date(envelope.timestamp).toISOString()).toBe(envelope.timestamp);

    // the history: succeeded after one attempt, the body stored is the one sent
    const history = await waitFor(async () => {
      const res = await t.request('GET', `/webhooks/deliveries?endpointId=${endpoint.id}`, { key: p.apiKey });
      return res.body.data[0]?.status === 'succeeded' ? res.body : null;
    }, 'the recorded attempt');
    expect(history.pagination.total).toBe(1);
    expect(history.data[0]).toMatchObject({
      id: deliveryId,
      event: 'nfse.issued',
      endpointId: endpoint.id,
      status: 'succeeded',
      attemptCount: 1,
      nextAttemptAt: null,
      lastStatusCode: 200,
      attempts: [{ attemptNumber: 1, success: true, statusCode: 200, error: null, responseSnippet: 'ok' }],
    });
    const detail = await t.request('GET', `/webhooks/deliveries/${deliveryId}`, { key: p.apiKey });
    expect(detail.body.body).toBe(raw);

    // only subscribed, active endpoints get the event
    for (const other of [errorsOnly, inactive]) {
      const res = await t.request('GET', `/webhooks/deliveries?endpointId=${other.id}`, { key: p.apiKey });
      expect(res.body.pagination.total).toBe(0);
    }
    expect(receiver.callsTo('/errors-only')).toHaveLength(0);
    expect(receiver.callsTo('/inactive')).toHaveLength(0);
    for (const e of [endpoint, errorsOnly, inactive]) {
      await t.request('DELETE', `/webhooks/endpoints/${e.id}`, { key: p.apiKey });
    }
  });
});

describe('secrets', () => {
  it('after a rotation both secrets sign (webhook-signature) for 24 hours, then only the new one', async () => {
    const oldSecret = 'segredo-antigo-aaaaaaaa';
    const newSecret = 'segredo-novo-bbbbbbbbbb';
    const endpoint = await createEndpoint({
      url: `${receiver.url}/rotation`,
      events: ['nfse.issued'],
      secret: oldSecret,
    });
    const rotated = await t.request('PATCH', `/webhooks/endpoints/${endpoint.id}`, {
      key: p.apiKey,
      body: { secret: newSecret },
    });
    expect(rotated.status).toBe(200);

    const test = await t.request('POST', `/webhooks/endpoints/${endpoint.id}/test`, { key: p.apiKey });
    expect(test.status, test.text).toBe(200);
    expect(test.body).toMatchObject({ success: true, statusCode: 200, error: null, responseSnippet: 'ok' });
    const during = receiver.callsTo('/rotation')[0]!;
    expect(during.headers['x-svc-event']).toBe('webhook.test');
    expectSvcSignature(during, newSecret);
    expectStandardSignatures(during, [Buffer.from(newSecret), Buffer.from(oldSecret)]);
    const body = JSON.parse(during.rawBody.toString());
    expect(body).toMatchObject({
      event: 'webhook.test',
      deliveryId: during.headers['x-svc-delivery'],
      data: { endpointId: endpoint.id },
    });

    const clock = installClock(t.service.ctx, Date.now() + 24 * 3600_000 + 60_000);
    try {
      const view = await t.request('GET', `/webhooks/endpoints/${endpoint.id}`, { key: p.apiKey });
      expect(view.body.previousSecretExpiresAt).toBeNull();
      await t.request('POST', `/webhooks/endpoints/${endpoint.id}/test`, { key: p.apiKey });
      const after = receiver.callsTo('/rotation')[1]!;
      expectSvcSignature(after, newSecret);
      expectStandardSignatures(after, [Buffer.from(newSecret)]);
      expect(Number(after.headers['webhook-timestamp'])).toBe(Math.floor(clock.now() / 1000));
    } finally {
      clock.restore();
    }
    await t.request('DELETE', `/webhooks/endpoints/${endpoint.id}`, { key: p.apiKey });
  });

  it('a whsec_ secret keys the Standard Webhooks signature with its base64-decoded bytes; removing the secret stops signing', async () => {
    const key = randomBytes(32);
    const secret = `whsec_${key.toString('base64')}`;
    const endpoint = await createEndpoint({ url: `${receiver.url}/whsec`, events: ['nfse.error'], secret });
    await t.request('POST', `/webhooks/endpoints/${endpoint.id}/test`, { key: p.apiKey });
    const call = receiver.callsTo('/whsec')[0]!;
    expectStandardSignatures(call, [key]);
    expectSvcSignature(call, secret);

    const removed = await t.request('PATCH', `/webhooks/endpoints/${endpoint.id}`, {
      key: p.apiKey,
      body: { secret: null },
    });
    expect(removed.body.signing).toBe(false);
    await t.request('POST', `/webhooks/endpoints/${endpoint.id}/test`, { key: p.apiKey });
    const unsigned = receiver.callsTo('/whsec')[1]!;
    expect(unsigned.headers['x-svc-signature']).toBeUndefined();
    expect(unsigned.headers['webhook-signature']).toBeUndefined();
    expect(unsigned.headers['webhook-id']).toBe(unsigned.headers['x-svc-delivery']);
    expect(unsigned.headers['webhook-timestamp']).toMatch(/^\d+$/);
    await t.request('DELETE', `/webhooks/endpoints/${endpoint.id}`, { key: p.apiKey });
  });
});

describe('test delivery, manual retry and history', () => {
  it('a failed test delivery answers its outcome; a manual retry resends the same delivery id and body', async () => {
    script.set('/flaky', [503, 200]);
    const endpoint = await createEndpoint({
      url: `${receiver.url}/flaky`,
      events: ['batch.completed'],
      secret: 'x'.repeat(20),
    });
    const test = await t.request('POST', `/webhooks/endpoints/${endpoint.id}/test`, { key: p.apiKey });
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ success: false, statusCode: 503, error: 'HTTP 503', responseSnippet: 'down' });
    expect(test.body.delivery).toMatchObject({ status: 'failed', attemptCount: 1, lastStatusCode: 503 });
    const deliveryId = test.body.delivery.id as string;
    // a test delivery is not retried automatically
    await sleep(1_200);
    expect(receiver.callsTo('/flaky')).toHaveLength(1);

    const retry = await t.request('POST', `/webhooks/deliveries/${deliveryId}/retry`, { key: p.apiKey });
    expect(retry.status, retry.text).toBe(202);
    expect(['pending', 'succeeded']).toContain(retry.body.status);
    const second = await waitFor(() => receiver.callsTo('/flaky')[1], 'the manual retry');
    const first = receiver.callsTo('/flaky')[0]!;
    expect(second.headers['x-svc-delivery']).toBe(deliveryId);
    expect(second.rawBody.equals(first.rawBody)).toBe(true);
    const done = await waitFor(async () => {
      const res = await t.request('GET', `/webhooks/deliveries/${deliveryId}`, { key: p.apiKey });
      return res.body.status === 'succeeded' ? res.body : null;
    }, 'the retry to be recorded');
    expect(done.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([503, 200]);
    expect(done.attemptCount).toBe(2);

    // once its endpoint is deleted a delivery cannot be retried, but stays in the history
    await t.request('DELETE', `/webhooks/endpoints/${endpoint.id}`, { key: p.apiKey });
    expectProblem(
      await t.request('POST', `/webhooks/deliveries/${deliveryId}/retry`, { key: p.apiKey }),
      409,
      'WEBHOOK_DELIVERY_NOT_RETRYABLE',
    );
    const stillListed = await t.request('GET', `/webhooks/deliveries/${deliveryId}`, { key: p.apiKey });
    expect(stillListed.status).toBe(200);
  });

  it('filters the history by endpoint, event and status, and pages it', async () => {
    script.set('/hist-bad', [500]);
    const good = await createEndpoint({ url: `${receiver.url}/hist-good`, events: ['nfse.issued'] });
    const bad = await createEndpoint({ url: `${receiver.url}/hist-bad`, events: ['nfse.issued'] });
    for (let i = 0; i < 3; i++) await t.request('POST', `/webhooks/endpoints/${good.id}/test`, { key: p.apiKey });
    await t.request('POST', `/webhooks/endpoints/${bad.id}/test`, { key: p.apiKey });

    const list = (query: string) => t.request('GET', `/webhooks/deliveries?${query}`, { key: p.apiKey });
    const goodOnes = await list(`endpointId=${good.id}&event=webhook.test&status=succeeded`);
    expect(goodOnes.body.pagination.total).toBe(3);
    const failed = await list(`endpointId=${bad.id}&status=failed`);
    expect(failed.body.pagination.total).toBe(1);
    expect(failed.body.data[0].attempts[0]).toMatchObject({ statusCode: 500, success: false, error: 'HTTP 500' });
    expect((await list(`endpointId=${good.id}&status=failed`)).body.pagination.total).toBe(0);
    expect((await list(`endpointId=${good.id}&event=nfse.issued`)).body.pagination.total).toBe(0);

    const page1 = await list(`endpointId=${good.id}&limit=2&page=1`);
    const page2 = await list(`endpointId=${good.id}&limit=2&page=2`);
    expect(page1.body.data).toHaveLength(2);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.pagination).toEqual({ page: 2, limit: 2, total: 3 });
    const ids = [...page1.body.data, ...page2.body.data].map((d: { id: string }) => d.id);
    expect(new Set(ids).size).toBe(3);

    expectProblem(await list('status=lost'), 400, 'INVALID_QUERY');
    expectProblem(await list('event=invoice.paid'), 400, 'INVALID_QUERY');
    expectProblem(await list('endpointId=nope'), 400, 'INVALID_QUERY');
    for (const e of [good, bad]) await t.request('DELETE', `/webhooks/endpoints/${e.id}`, { key: p.apiKey });
  });
});
