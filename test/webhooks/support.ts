import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import type { AppContext } from '../../src/context.ts';
import { type RunningService, startService } from '../../src/service.ts';
import type { TestService } from '../support/harness.ts';
import { nextCnpj } from '../support/route-checks.ts';

/** One request a receiver got: the raw body bytes as sent, the headers, and the service clock then. */
export interface ReceivedCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** the service's ctx.now() when the request arrived (the test clock when one is installed) */
  at: number;
}

export type ReceiverHandler = (call: ReceivedCall, res: ServerResponse, index: number) => void | Promise<void>;

export interface Receiver {
  /** http://127.0.0.1:port */
  url: string;
  calls: ReceivedCall[];
  /** the calls to one path */
  callsTo(path: string): ReceivedCall[];
  close(): Promise<void>;
}

/** A real webhook receiver on 127.0.0.1 (port 0); `handler` answers (default 200 `ok`). */
export async function startReceiver(
  options: { handler?: ReceiverHandler; clock?: () => number } = {},
): Promise<Receiver> {
  const calls: ReceivedCall[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const call: ReceivedCall = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        at: options.clock ? options.clock() : Date.now(),
      };
      calls.push(call);
      const index = calls.filter((c) => c.path === call.path).length - 1;
      try {
        if (options.handler) await options.handler(call, res, index);
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      } catch {
        if (!res.headersSent) res.writeHead(500).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    callsTo: (path) => calls.filter((c) => c.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A clock the test moves by hand, installed as the service's `ctx.now`. */
export interface TestClock {
  now(): number;
  set(ms: number): void;
  advance(ms: number): void;
  restore(): void;
}

export function installClock(ctx: AppContext, startMs = Date.parse('2026-03-02T12:00:00.000Z')): TestClock {
  const original = ctx.now;
  let current = startMs;
  ctx.now = () => new Date(current);
  return {
    now: () => current,
    set: (ms) => {
      current = ms;
    },
    advance: (ms) => {
      current += ms;
    },
    restore: () => {
      ctx.now = original;
    },
  };
}

export async function waitFor<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A second service on the same data directory / database as `t` (same operator and master keys), as an
 * operator restarting the process would get (`now`: its clock from the start). `t.service` must be closed first.
 */
export async function restartOn(
  t: TestService,
  env: Record<string, string> = {},
  now?: () => Date,
): Promise<RunningService> {
  const previous = t.service.ctx.config;
  const config = loadConfig(
    {
      DATA_DIR: t.dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      NFSE_ADMIN_KEY: t.adminKey,
      NFSE_MASTER_KEY: previous.masterKey.toString('hex'),
      ...(previous.databaseUrl ? { DATABASE_URL: previous.databaseUrl, NFSE_GOVERNMENT: 'sandbox' } : {}),
      ...env,
    },
    [],
  );
  return startService(config, { logger: pino({ level: config.logLevel }), ...(now ? { now } : {}) });
}

/** A fresh random secret. */
export const newSecret = () => randomBytes(24).toString('base64url');

export interface WebhookTenant {
  orgToken: string;
  projectId: string;
  /** every scope, high rate limit */
  key: string;
  /** only `query` */
  queryKey: string;
  /** only `emit` */
  emitKey: string;
}

/** An organization with a project and project keys for the webhook routes (no certificate: no issuing). */
export async function createWebhookTenant(t: TestService): Promise<WebhookTenant> {
  const org = await t.createOrganization('pro', `Org ${randomBytes(4).toString('hex')}`);
  const project = await t.request('POST', '/org/projects', {
    key: org.token,
    body: { name: 'Webhooks', cnpj: nextCnpj(), razaoSocial: 'WEBHOOKS LTDA' },
  });
  if (project.status !== 201) throw new Error(`create project: ${project.status} ${project.text}`);
  // the operator raises the organization's key ceiling so the suite is not slowed by the plan's
  const limits = await t.request('PUT', `/admin/organizations/${org.id}/limits`, {
    key: t.adminKey,
    body: { keyRateLimitCeiling: 100_000 },
  });
  if (limits.status !== 200) throw new Error(`raise key ceiling: ${limits.status} ${limits.text}`);
  const key = async (scopes?: string[]) => {
    const res = await t.request('POST', `/org/projects/${project.body.id}/api-keys`, {
      key: org.token,
      body: { name: 'webhooks', rateLimitPerMinute: 100_000, ...(scopes ? { scopes } : {}) },
    });
    if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.text}`);
    return res.body.key as string;
  };
  return {
    orgToken: org.token,
    projectId: project.body.id,
    key: await key(),
    queryKey: await key(['query']),
    emitKey: await key(['emit']),
  };
}
