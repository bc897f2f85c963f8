import { randomBytes } from 'node:crypto';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createFreshDatabase } from './databases.ts';
import { openDatabase, runMigrations } from '../../src/db/client.ts';
import { JobQueue } from '../../src/jobs/queue.ts';
import { createLogger } from '../../src/logging.ts';
import { type RunningService, startService } from '../../src/service.ts';

/**
 * Starts the whole service as a user runs it (real HTTP on 127.0.0.1, real database, in-process
 * sandbox), in a fresh data directory. With DATABASE_URL set (CI runs the suite once like that) each
 * service gets its own new PostgreSQL database, dropped at close; otherwise embedded PGlite.
 */
export interface TestService {
  service: RunningService;
  /** http://127.0.0.1:port */
  baseUrl: string;
  /** baseUrl + /api/v1 */
  api: string;
  adminKey: string;
  dataDir: string;
  /** the PostgreSQL database of this service (null on PGlite) */
  databaseUrl: string | null;
  /** the environment this service was configured with (for extra worker processes) */
  env: Record<string, string>;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  createOrganization(plan?: string, name?: string): Promise<{ id: string; token: string; slug: string }>;
  close(): Promise<void>;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string | Buffer | FormData;
  headers?: Record<string, string>;
  redirect?: 'manual' | 'follow';
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience
  body: any;
  text: string;
  bytes: Buffer;
}

export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const adminUrl = process.env.DATABASE_URL;
  return adminUrl ? createFreshDatabase(adminUrl) : null;
}

/**
 * An embedded database with the migrations and the queue schema already applied, built once per
 * migration set and copied into each test service's data directory (initdb + migrations cost ~6 s).
 */
export async function pgliteTemplate(): Promise<string> {
  const migrations = new URL('../../src/db/migrations/', import.meta.url).pathname;
  const hash = createHash('sha256');
  for (const f of readdirSync(migrations).sort()) if (f.endsWith('.sql')) hash.update(readFileSync(migrations + f));
  hash.update(readFileSync(new URL('../../src/jobs/catalogue.ts', import.meta.url)));
  const dir = join(tmpdir(), `nfse-pglite-template-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(join(dir, 'ready'))) return join(dir, 'db');
  const building = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}`;
  mkdirSync(building, { recursive: true });
  const database = await openDatabase({ databaseUrl: null, dataDir: building });
  await runMigrations(database, null);
  const queue = new JobQueue(database);
  await queue.start();
  await queue.stop({ graceful: false });
  await database.close();
  mkdirSync(join(building, 'ready'));
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true }); // another worker won the race
  }
  return join(dir, 'db');
}

export async function startTestService(
  env: Record<string, string> = {},
  options: { logger?: pino.Logger } = {},
): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'nfse-test-'));
  const database = await createTestDatabase();
  if (!database && !env.DATABASE_URL) cpSync(await pgliteTemplate(), join(dataDir, 'db'), { recursive: true });
  const adminKey = `svc_admin_${randomBytes(16).toString('hex')}`;
  const configEnv: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    NFSE_ADMIN_KEY: adminKey,
    NFSE_MASTER_KEY: randomBytes(32).toString('hex'),
    // every test request comes from 127.0.0.1: the per-address limit of missing/invalid keys is tested on its own
    NFSE_ANONYMOUS_RATE_LIMIT: '1000000',
    // white-label domain checks never reach the real DNS from tests: a closed local port answers at once (refused);
    // the domain tests start a DNS server of their own (test/support/dns-server.ts)
    NFSE_DNS_SERVER: '127.0.0.1:9',
    ...(database ? { DATABASE_URL: database.url, NFSE_GOVERNMENT: 'sandbox' } : {}),
    ...env,
  };
  const config = loadConfig(configEnv, []);
  const logger = options.logger ?? createLogger(config.logLevel);
  let service: RunningService;
  try {
    service = await startService(config, { logger });
  } catch (err) {
    await database?.drop();
    throw err;
  }
  const baseUrl = service.url!;
  // the public URLs must point at the real port (PORT=0 picks one at listen time)
  service.ctx.config.publicBaseUrl = baseUrl;
  const api = `${baseUrl}/api/v1`;

  async function request(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.key) headers['x-api-key'] = options.key;
    let body: string | Buffer | FormData | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = path.startsWith('http') ? path : `${api}${path}`;
    const res = await fetch(url, { method, headers, body: body as BodyInit, redirect: options.redirect ?? 'manual' });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');
    let parsed: unknown = null;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed, text, bytes };
  }

  return {
    service,
    baseUrl,
    api,
    adminKey,
    dataDir,
    databaseUrl: config.databaseUrl,
    env: configEnv,
    request,
    async createOrganization(plan = 'pro', name = 'Acme Serviços') {
      const res = await request('POST', '/admin/organizations', { key: adminKey, body: { name, plan } });
      if (res.status !== 201) throw new Error(`createOrganization: ${res.status} ${res.text}`);
      return { id: res.body.id, token: res.body.token, slug: res.body.slug };
    },
    async close() {
      await service.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
