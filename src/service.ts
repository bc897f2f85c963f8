import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type pino from 'pino';
import { CertificateStore } from './certificates/store.ts';
import type { Config } from './config.ts';
import type { AppContext, GovernmentEndpoints } from './context.ts';
import { openDatabase, runMigrations } from './db/client.ts';
import { runInBackground } from './db/priority.ts';
import { ADN_PARAMETERS_LIVE_URLS } from './engines/national/adn-parameters.ts';
import { EngineRegistry } from './engines/registry.ts';
import { buildApp, compilePendingSchemas } from './http/app.ts';
import { RateLimiter } from './http/rate-limit.ts';
import type { App } from './http/route.ts';
import { JobQueue } from './jobs/queue.ts';
import { securePrivateDirectory } from './data-dir.ts';
import { createLogger } from './logging.ts';
import { provisionSandboxIdentity, sandboxIdentityMissing } from './sandbox/identity.ts';
import { municipalSandboxPathIn, type SandboxMounts } from './sandbox/mount-path.ts';
import type { SandboxProcess } from './sandbox/process.ts';
import type { SefinSandbox } from './sandbox/sefin/server.ts';
import { createLocalStorage } from './storage/local.ts';
import type { DocumentStorage } from './storage/types.ts';
import { registerWorkers } from './wiring/workers.ts';

/** Official Sefin Nacional base URLs (brief §1.1). */
export const SEFIN_LIVE_URLS = {
  1: 'https://sefin.nfse.gov.br/SefinNacional',
  2: 'https://sefin.producaorestrita.nfse.gov.br/SefinNacional',
} as const;

export interface RunningService {
  ctx: AppContext;
  app: App | null;
  /** http://host:port of the API when it listens */
  url: string | null;
  sandbox: SefinSandbox | null;
  close(): Promise<void>;
}

async function createStorage(config: Config): Promise<DocumentStorage> {
  if (config.storage.driver === 's3') {
    const s = config.storage;
    // Loaded only when configured: the AWS SDK is a noticeable part of the start time.
    const { createS3Storage } = await import('./storage/s3.ts');
    return createS3Storage({
      bucket: s.bucket,
      region: s.region,
      endpoint: s.endpoint ?? undefined,
      accessKeyId: s.accessKeyId ?? undefined,
      secretAccessKey: s.secretAccessKey ?? undefined,
      forcePathStyle: s.forcePathStyle,
      publicBaseUrl: s.publicBaseUrl,
    });
  }
  mkdirSync(config.storage.rootDir, { recursive: true });
  return createLocalStorage({ rootDir: config.storage.rootDir, publicBaseUrl: () => `${config.publicBaseUrl}/files` });
}

/** The endpoints of the sandboxes, wherever they run (a URL and the CA of their TLS certificate). */
function sandboxEndpoints(url: string, caPem: string | null, mounts: SandboxMounts): GovernmentEndpoints {
  return {
    sefinBaseUrl: (amb) => `${url}/${amb === 1 ? 'producao' : 'producaorestrita'}/SefinNacional`,
    adnParametersBaseUrl: (amb) => `${url}/${amb === 1 ? 'producao' : 'producaorestrita'}/parametrizacao`,
    municipalSandboxUrl: (engine, amb) => `${url}${municipalSandboxPathIn(mounts, engine, amb)}`,
    caPem,
  };
}

/**
 * The mounts of the municipal sandboxes when no sandbox process reported them: loads every provider's sandbox
 * module, which the service's own start (sandboxes in their process) avoids.
 */
async function localSandboxMounts(): Promise<SandboxMounts> {
  return (await import('./sandbox/municipal.ts')).MUNICIPAL_SANDBOX_MOUNTS;
}

async function governmentEndpoints(
  config: Config,
  logger: pino.Logger,
  sandboxProcess: Promise<SandboxProcess> | null,
): Promise<{ endpoints: GovernmentEndpoints; sandbox: SefinSandbox | null }> {
  if (config.government === 'live') {
    return {
      endpoints: {
        sefinBaseUrl: (amb) => SEFIN_LIVE_URLS[amb],
        adnParametersBaseUrl: (amb) => ADN_PARAMETERS_LIVE_URLS[amb],
        municipalSandboxUrl: null,
        caPem: null,
      },
      sandbox: null,
    };
  }
  if (config.sefinSandboxUrl) {
    const caPem = config.sefinSandboxCaFile ? readFileSync(config.sefinSandboxCaFile, 'utf8') : null;
    return { endpoints: sandboxEndpoints(config.sefinSandboxUrl, caPem, await localSandboxMounts()), sandbox: null };
  }
  if (sandboxProcess) {
    const child = await sandboxProcess;
    logger.info({ url: child.url, pid: child.pid }, 'government sandboxes started in their own process');
    return { endpoints: sandboxEndpoints(child.url, child.caPem, child.mounts), sandbox: null };
  }
  const identity = provisionSandboxIdentity(resolve(config.dataDir, 'sandbox'));
  // loaded only here: the sandboxes' modules (every provider's) are a noticeable part of the start time
  const { startSefinSandbox } = await import('./sandbox/sefin/server.ts');
  const sandbox = await startSefinSandbox({
    host: '127.0.0.1',
    port: 0,
    tls: identity.tls,
    signer: identity.signer,
    storeFile: resolve(config.dataDir, 'sandbox', 'sefin-store.jsonl'),
    sandboxDir: resolve(config.dataDir, 'sandbox'),
    logger: { info: (m: string) => logger.info(m), warn: (m: string) => logger.warn(m) },
  });
  logger.info({ url: sandbox.url }, 'Sefin Nacional sandbox started');
  return { endpoints: sandboxEndpoints(sandbox.url, identity.caPem, await localSandboxMounts()), sandbox };
}

export async function startService(
  config: Config,
  options: {
    listen?: boolean;
    logger?: pino.Logger;
    now?: () => Date;
    /**
     * the local sandboxes' child process (`sandbox/process.ts`), which `npm start` (`src/main.ts`) forks before it
     * loads the service so that both start side by side; without it the sandboxes run in this event loop
     */
    sandboxProcess?: Promise<SandboxProcess> | null;
  } = {},
): Promise<RunningService> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const sandboxDir = resolve(config.dataDir, 'sandbox');
  const localSandbox = config.government !== 'live' && !config.sefinSandboxUrl;
  const sandboxProcess = localSandbox ? (options.sandboxProcess ?? null) : null;
  // First start, in-process sandbox: its three RSA keys are generated on the thread pool while the database opens.
  if (localSandbox && !sandboxProcess && sandboxIdentityMissing(sandboxDir)) {
    void import('./certificates/generate.ts').then(({ prefetchRsaKeys }) => prefetchRsaKeys(3));
  }
  const closers: (() => Promise<void>)[] = [];
  if (sandboxProcess) closers.push(() => sandboxProcess.then((child) => child.close()).catch(() => undefined));
  try {
    const database = await openDatabase(config);
    closers.unshift(() => database.close());
    await runMigrations(database, config.databaseUrl);
    // the embedded engine sets modes of its own on a few files it writes at start: bring them back to 0600
    if (!config.databaseUrl) securePrivateDirectory(config.dataDir);
    const { endpoints, sandbox } = await governmentEndpoints(config, logger, sandboxProcess);
    if (sandbox) closers.unshift(() => sandbox.close());
    const queue = new JobQueue(database, {
      retryLimitMax: config.jobRetryLimitMax,
      expireSecondsMax: config.jobExpireSecondsMax,
    });
    queue.onError = (err) => logger.warn({ err }, 'job queue error');
    const ctx: AppContext = {
      config,
      database,
      db: database.db,
      queue,
      storage: await createStorage(config),
      rateLimiter: new RateLimiter(database.db),
      logger,
      now: options.now ?? (() => new Date()),
      government: endpoints,
      engines: new EngineRegistry({
        sefinBaseUrl: endpoints.sefinBaseUrl,
        municipalSandboxUrl: endpoints.municipalSandboxUrl,
        adnParametersBaseUrl: endpoints.adnParametersBaseUrl,
        caPem: endpoints.caPem,
        timeouts: config.httpTimeouts,
        signatureAlgorithm: config.signatureAlgorithm,
        validateBeforeSend: config.validateBeforeSend,
      }),
      certificates: new CertificateStore(database.db, config.masterKey, database.changes),
    };
    closers.unshift(() => ctx.engines.close());
    // the queue's own timers and every worker run as background database work (db/priority.ts)
    await runInBackground(() => queue.start());
    closers.unshift(() => queue.stop({ graceful: true, timeoutMs: 15_000 }));

    if (config.role !== 'api') closers.unshift(await runInBackground(() => registerWorkers(ctx)));

    let app: App | null = null;
    let url: string | null = null;
    if (config.role !== 'worker') {
      app = await buildApp(ctx);
      if (options.listen !== false) {
        url = await app.listen({ port: config.port, host: config.host });
      } else {
        await app.ready();
      }
      const a = app;
      closers.unshift(() => a.close());
      // the validators and serializers not compiled yet, in the background once the service answers (http/lazy-compilers.ts)
      compilePendingSchemas(a).catch((err) => logger.error({ err }, 'a request or response schema does not compile'));
    }
    if (config.adminKeySource === 'file') {
      logger.info({ file: resolve(config.dataDir, 'admin.key') }, 'operator key (NFSE_ADMIN_KEY) stored in file');
    }
    let closed = false;
    return {
      ctx,
      app,
      url,
      sandbox,
      async close() {
        if (closed) return;
        closed = true;
        for (const close of closers) {
          await close().catch((err) => logger.warn({ err }, 'error while closing'));
        }
      },
    };
  } catch (err) {
    for (const close of closers) await close().catch(() => undefined);
    throw err;
  }
}
