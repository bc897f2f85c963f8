import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALLOW_INSECURE_HINT,
  checkWebhookUrl,
  forbiddenAddressReason,
  type HostResolver,
} from '../../src/webhooks/address-guard.ts';
import { sendWebhookAttempt } from '../../src/webhooks/sender.ts';
import { type Receiver, startReceiver } from './support.ts';

/**
 * The SSRF guard and the HTTP attempt on their own: address classification, the registration check, and
 * attempts against a real receiver on 127.0.0.1, with DNS stood in by a resolver so a public-looking name
 * can answer an internal address (rebinding) and the connection can be shown to use the checked address.
 */

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver({
    handler: async (call, res) => {
      if (call.path === '/redirect') return void res.writeHead(302, { location: '/landing' }).end();
      if (call.path === '/landing') return void res.writeHead(200).end('landed');
      if (call.path === '/big') return void res.writeHead(500).end(`${'x'.repeat(1000)}\u0000${'y'.repeat(4000)}`);
      if (call.path === '/slow') {
        await new Promise((r) => setTimeout(r, 2_000));
        return void res.writeHead(200).end('late');
      }
      res.writeHead(204).end();
    },
  });
});
afterAll(async () => {
  await receiver?.close();
});

const port = () => new URL(receiver.url).port;
const resolverOf =
  (...answers: string[][]): HostResolver =>
  async () => {
    const next = answers.length > 1 ? answers.shift()! : answers[0]!;
    return next.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('forbiddenAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['0.0.0.0', 'this network'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['168.63.129.16', 'metadata'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a00:5', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::1', 'loopback'],
    ['2001:db8::1', 'documentation'],
    // every IPv6 form that embeds an IPv4 address is judged by it (issue 9)
    ['::ffff:0:127.0.0.1', 'loopback address (IPv4-translated 127.0.0.1)'],
    ['::ffff:0:7f00:1', 'loopback address (IPv4-translated'],
    ['::ffff:0:a00:1', 'private address (IPv4-translated 10.0.0.1)'],
    ['::ffff:0:a9fe:a9fe', 'metadata address (IPv4-translated'],
    ['::127.0.0.1', 'loopback address (IPv4-compatible'],
    ['::a9fe:a9fe', 'metadata address (IPv4-compatible'],
    ['64:ff9b::10.0.0.1', 'private address (NAT64 10.0.0.1)'],
    ['64:ff9b::a9fe:a9fe', 'metadata address (NAT64'],
    ['64:ff9b:1::808:808', 'local-use NAT64'],
    ['64:ff9b:1:7f00:1::', 'local-use NAT64'],
    ['2002:a00:1::1', 'private address (6to4 10.0.0.1)'],
    ['2002:a9fe:a9fe::', 'metadata address (6to4'],
    ['2001:0:7f00:1::', 'loopback address (Teredo server'],
    ['2001:0:808:808:0:0:f5ff:fffe', 'private address (Teredo client 10.0.0.1)'],
    ['2001:0:808:808::f7f7:f7f7', 'Teredo'],
    ['2606:4700::5efe:127.0.0.1', 'loopback address (ISATAP'],
    ['2606:4700::200:5efe:a00:1', 'private address (ISATAP'],
  ])('%s is refused (%s)', (ip, reason) => {
    expect(forbiddenAddressReason(ip)).toContain(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '169.253.1.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:81c::200e',
    '::ffff:8.8.8.8',
    '2002:808:808::1',
    '64:ff9b::808:808',
    '2606:4700::5efe:808:808',
  ])('%s is public', (ip) => {
    expect(forbiddenAddressReason(ip)).toBeNull();
  });
});

describe('checkWebhookUrl (registration)', () => {
  const publicDns = resolverOf(['93.184.215.14']);

  it.each([
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://10.0.0.5/hook', 'private'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://[::1]/hook', 'loopback'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['https://[::ffff:0:127.0.0.1]/hook', 'loopback'],
    ['https://[64:ff9b::127.0.0.1]/hook', 'loopback'],
    ['https://[2002:7f00:1::1]/hook', 'loopback'],
    ['https://[::127.0.0.1]/hook', 'loopback'],
    ['https://[fe80::1]/hook', 'link-local'],
    ['https://[fd12:3456::1]/hook', 'unique local'],
    ['https://100.64.1.2/hook', 'CGNAT'],
    ['https://2130706433/hook', 'loopback'],
    ['https://0x7f.0.0.1/hook', 'loopback'],
    ['https://localhost/hook', 'loopback'],
    ['https://LocalHost./hook', 'loopback'],
    ['https://api.localhost/hook', 'loopback'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'metadata'],
    ['http://hooks.example.com/hook', 'https'],
    ['ftp://hooks.example.com/hook', 'https'],
    ['https://user:pass@hooks.example.com/hook', 'credentials'],
    ['not a url', 'absolute URL'],
  ])('%s is refused (%s)', async (url, reason) => {
    const result = await checkWebhookUrl(url, false, publicDns);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(reason);
  });

  it('refuses a name that resolves to an internal address, even with one public answer', async () => {
    const result = await checkWebhookUrl(
      'https://hooks.example.com/x',
      false,
      resolverOf(['93.184.215.14', '10.1.2.3']),
    );
    expect(result).toEqual({
      ok: false,
      error: `must reach a public internet address; hooks.example.com resolves to 10.1.2.3, a private address${ALLOW_INSECURE_HINT}`,
    });
  });

  it('accepts a public https URL, and a name that does not resolve yet (checked again at every attempt)', async () => {
    expect((await checkWebhookUrl('https://hooks.example.com:8443/a?b=1', false, publicDns)).ok).toBe(true);
    const nxdomain: HostResolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect((await checkWebhookUrl('https://not-yet.example.com/a', false, nxdomain)).ok).toBe(true);
  });

  it('with the development setting, http and loopback are allowed', async () => {
    expect((await checkWebhookUrl('http://127.0.0.1:8080/x', true)).ok).toBe(true);
    expect((await checkWebhookUrl('http://localhost/x', true)).ok).toBe(true);
    expect((await checkWebhookUrl('ftp://127.0.0.1/x', true)).ok).toBe(false);
  });
});

describe('sendWebhookAttempt', () => {
  const body = JSON.stringify({ event: 'nfse.issued', deliveryId: 'd', timestamp: 't', data: { a: 'ção' } });

  it('connects to the address it checked (no second resolution) and keeps the Host header', async () => {
    const before = receiver.callsTo('/pinned').length;
    const outcome = await sendWebhookAttempt({
      url: `http://hooks.example.test:${port()}/pinned`,
      headers: { 'content-type': 'application/json', 'x-svc-event': 'nfse.issued' },
      body,
      allowInsecure: true,
      // hooks.example.test does not exist in any DNS: only the checked answer can be used
      resolve: resolverOf(['127.0.0.1']),
    });
    expect(outcome).toMatchObject({ ok: true, statusCode: 204, error: null });
    const calls = receiver.callsTo('/pinned');
    expect(calls.length).toBe(before + 1);
    const call = calls.at(-1)!;
    expect(call.headers.host).toBe(`hooks.example.test:${port()}`);
    expect(call.rawBody.toString('utf8')).toBe(body);
    expect(call.headers['content-length']).toBe(String(Buffer.byteLength(body)));
  });

  it('refuses at delivery time a public-looking name that now resolves to loopback (rebinding), without connecting', async () => {
    const rebinding = resolverOf(['93.184.215.14'], ['127.0.0.1']);
    const url = `https://rebind.example.com:${port()}/rebind`;
    expect((await checkWebhookUrl(url, false, rebinding)).ok).toBe(true);
    const outcome = await sendWebhookAttempt({ url, headers: {}, body, allowInsecure: false, resolve: rebinding });
    expect(outcome.ok).toBe(false);
    expect(outcome.statusCode).toBeNull();
    expect(outcome.error).toBe(
      `refused: the URL must reach a public internet address; rebind.example.com resolves to 127.0.0.1, a loopback address${ALLOW_INSECURE_HINT}`,
    );
    expect(receiver.callsTo('/rebind')).toHaveLength(0);
  });

  it('refuses literal internal addresses and http at delivery time without the development setting', async () => {
    for (const url of [`https://127.0.0.1:${port()}/lit`, `https://[::1]:${port()}/lit`, `http://8.8.8.8/lit`]) {
      const outcome = await sendWebhookAttempt({ url, headers: {}, body, allowInsecure: false });
      expect(outcome.ok).toBe(false);
      expect(outcome.error).toMatch(/^refused: the URL must/);
    }
    expect(receiver.callsTo('/lit')).toHaveLength(0);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const outcome = await sendWebhookAttempt({
      url: `${receiver.url}/redirect`,
      headers: {},
      body,
      allowInsecure: true,
    });
    expect(outcome).toMatchObject({ ok: false, statusCode: 302, error: 'redirect (302) not followed to /landing' });
    expect(receiver.callsTo('/landing')).toHaveLength(0);
  });

  it('keeps the first 1 KB of the answer, NUL characters replaced', async () => {
    const outcome = await sendWebhookAttempt({ url: `${receiver.url}/big`, headers: {}, body, allowInsecure: true });
    expect(outcome).toMatchObject({ ok: false, statusCode: 500, error: 'HTTP 500' });
    expect(outcome.responseSnippet).toBe(`${'x'.repeat(1000)}\uFFFD${'y'.repeat(23)}`);
  });

  it('a receiver that answers after the deadline is a timeout', async () => {
    const outcome = await sendWebhookAttempt({
      url: `${receiver.url}/slow`,
      headers: {},
      body,
      allowInsecure: true,
      timeoutMs: 300,
    });
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: 'timeout: no answer within 0.3 s' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(295);
    expect(outcome.durationMs).toBeLessThan(1_500);
  });

  it('a refused connection is a failed attempt with the network error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const freePort = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const outcome = await sendWebhookAttempt({
      url: `http://127.0.0.1:${freePort}/`,
      headers: {},
      body,
      allowInsecure: true,
    });
    expect(outcome.ok).toBe(false);
    expect(outcome.statusCode).toBeNull();
    expect(outcome.error).toContain('ECONNREFUSED');
  });
});
