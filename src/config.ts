import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { securePrivateDirectory } from './data-dir.ts';
import { JOB_NAMES, type JobName } from './jobs/catalogue.ts';

/**
 * Configuration, read once at start from the environment into a typed object. A bad value stops the
 * start with a message naming the variable (see README "Configuration" for every variable).
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** postgres://… for PostgreSQL; null for the embedded PGlite database in `dataDir/db`. */
  databaseUrl: string | null;
  adminKey: string;
  adminKeySource: 'env' | 'file';
  masterKey: Buffer;
  publicBaseUrl: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  cnameTarget: string;
  /** `sandbox`: the local government sandboxes (started in-process); `live`: the official URLs. */
  government: 'sandbox' | 'live';
  /** Base URL of an already running Sefin sandbox (e.g. `npm run sandbox`); null starts one in-process. */
  sefinSandboxUrl: string | null;
  sefinSandboxCaFile: string | null;
  validateBeforeSend: boolean;
  signatureAlgorithm: 'rsa-sha1' | 'rsa-sha256';
  storage:
    | { driver: 'local'; rootDir: string }
    | {
        driver: 's3';
        bucket: string;
        region: string;
        endpoint: string | null;
        accessKeyId: string | null;
        secretAccessKey: string | null;
        forcePathStyle: boolean;
        publicBaseUrl: string;
      };
  /** Which parts this process runs. `all`: API + workers (+ sandbox when government=sandbox). */
  role: 'all' | 'api' | 'worker';
  workerConcurrency: number;
  orgRateLimitPerMinute: number;
  /**
   * Ceiling of a project key's rateLimitPerMinute for organizations without their own (the plan's
   * ceiling, when lower, wins); a higher requested value is capped with a warning.
   */
  maxKeyRateLimitPerMinute: number;
  /** Requests per minute per client address carrying a missing or invalid key. */
  anonymousRateLimitPerMinute: number;
  /** Active API keys a project may hold. */
  maxKeysPerProject: number;
  /** DNS server (`host` or `host:port`) used to verify white-label domains; null: the system resolver. */
  dnsServer: string | null;
  /** Seconds between verification attempts of a pending white-label domain. */
  domainVerificationRetrySeconds: number;
  /** Tests only: caps every job's retryLimit (null: the catalogue's policies). */
  jobRetryLimitMax: number | null;
  /** Tests only: the handlers of these jobs throw at once (to exercise the catalogue's on-exhausted steps). */
  testFaults: JobName[];
  /** tests only: jobs whose handler hangs (never settles) so their attempts expire (`NFSE_TEST_FAULTS=name:hang`) */
  testHangs: JobName[];
  /** tests only: caps every job's expireInSeconds (NFSE_TEST_JOB_EXPIRE_SECONDS) */
  jobExpireSecondsMax: number | null;
  webhooksAllowInsecure: boolean;
  httpTimeouts: { connectMs: number; responseMs: number };
  /** How long an answer of the ADN "Parâmetros Municipais" API is reused before it is asked again (seconds). */
  adnParametersTtlSeconds: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readEnum<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be a boolean (1/0, true/false), got "${raw}"`);
}

function readUrl(env: Env, name: string, fallback: string | null): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  try {
    const url = new URL(raw);
    if (!['http:', 'https:', 'postgres:', 'postgresql:'].includes(url.protocol)) throw new Error('protocol');
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** Reads a secret from a file in the data directory, creating it (mode 0600) on first start. */
function fileSecret(path: string, generate: () => string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  writeFileSync(path, `${generate()}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return readFileSync(path, 'utf8').trim();
}

export function parseMasterKeyText(name: string, text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  const b64 = Buffer.from(trimmed, 'base64');
  if (b64.length === 32 && /^[A-Za-z0-9+/=_-]+$/.test(trimmed)) return b64;
  throw new ConfigError(name, 'must be 32 bytes as 64 hex characters or base64');
}

/** `name` (the handler throws) or `name:hang` (the handler never settles), comma-separated. */
function readJobFaults(env: Env, name: string, mode: 'throw' | 'hang'): JobName[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [];
  const found: JobName[] = [];
  for (const item of raw.split(',').map((n) => n.trim())) {
    const [job, itemMode = 'throw'] = item.split(':');
    if (!(JOB_NAMES as string[]).includes(job!)) throw new ConfigError(name, `unknown job "${job}"`);
    if (itemMode !== 'throw' && itemMode !== 'hang') throw new ConfigError(name, `unknown fault "${itemMode}"`);
    if (itemMode === mode) found.push(job as JobName);
  }
  return found;
}

function readHostPort(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(raw)) {
    throw new ConfigError(name, `must be host or host:port, got "${raw}"`);
  }
  return raw;
}

const ADMIN_KEY_PATTERN = /^svc_admin_[A-Za-z0-9_-]{16,}$/;

/** `DATA_DIR` (default ./data), shared by the service and the operator CLI. */
function readDataDir(env: Env): string {
  return resolve(env.DATA_DIR || './data');
}

/** `HOST` and `PORT` (default 127.0.0.1:3000), shared by the service and the operator CLI. */
function readListen(env: Env): { host: string; port: number } {
  return { port: readInt(env, 'PORT', 3000, 0, 65535), host: env.HOST || '127.0.0.1' };
}

/**
 * What the operator CLI (src/cli/admin.ts) needs of the service's configuration, read from the same variables
 * and with the same defaults as {@link loadConfig} but without its side effects (nothing is created): the local
 * API address (`HOST`/`PORT`; a wildcard listen address is reached on the loopback) and the operator key
 * (`NFSE_ADMIN_KEY`, or the key the service generated into `DATA_DIR/admin.key` in embedded mode).
 */
export function operatorAccess(env: Env = process.env): {
  apiUrl: string;
  adminKey: string | null;
  adminKeyFile: string;
} {
  const { host, port } = readListen(env);
  const reach = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const adminKeyFile = resolve(readDataDir(env), 'admin.key');
  let adminKey = env.NFSE_ADMIN_KEY || null;
  if (!adminKey && existsSync(adminKeyFile)) adminKey = readFileSync(adminKeyFile, 'utf8').trim();
  if (adminKey && !ADMIN_KEY_PATTERN.test(adminKey)) {
    throw new ConfigError(
      env.NFSE_ADMIN_KEY ? 'NFSE_ADMIN_KEY' : adminKeyFile,
      'must start with svc_admin_ followed by at least 16 URL-safe characters',
    );
  }
  return { apiUrl: `http://${reach}:${port}/api/v1`, adminKey, adminKeyFile };
}

export function loadConfig(env: Env = process.env, argv: string[] = process.argv): Config {
  const dataDir = readDataDir(env);
  const databaseUrl = readUrl(env, 'DATABASE_URL', null);
  if (databaseUrl && !/^postgres(ql)?:/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// URL');
  }
  const embedded = databaseUrl === null;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  securePrivateDirectory(dataDir);

  let adminKey = env.NFSE_ADMIN_KEY;
  let adminKeySource: Config['adminKeySource'] = 'env';
  if (!adminKey) {
    if (!embedded) throw new ConfigError('NFSE_ADMIN_KEY', 'is required with DATABASE_URL (PostgreSQL mode)');
    adminKey = fileSecret(resolve(dataDir, 'admin.key'), () => `svc_admin_${randomBytes(24).toString('base64url')}`);
    adminKeySource = 'file';
  }
  if (!ADMIN_KEY_PATTERN.test(adminKey)) {
    throw new ConfigError('NFSE_ADMIN_KEY', 'must start with svc_admin_ followed by at least 16 URL-safe characters');
  }

  let masterKey: Buffer;
  if (env.NFSE_MASTER_KEY) {
    masterKey = parseMasterKeyText('NFSE_MASTER_KEY', env.NFSE_MASTER_KEY);
  } else {
    if (!embedded) throw new ConfigError('NFSE_MASTER_KEY', 'is required with DATABASE_URL (PostgreSQL mode)');
    masterKey = parseMasterKeyText(
      'NFSE_MASTER_KEY',
      fileSecret(resolve(dataDir, 'master.key'), () => randomBytes(32).toString('hex')),
    );
  }

  const { host, port } = readListen(env);
  const publicBaseUrl = readUrl(env, 'PUBLIC_BASE_URL', null) ?? `http://${host}:${port}`;

  const storageDriver = readEnum(env, 'STORAGE_DRIVER', ['local', 's3'] as const, 'local');
  let storage: Config['storage'];
  if (storageDriver === 's3') {
    const bucket = env.S3_BUCKET;
    if (!bucket) throw new ConfigError('S3_BUCKET', 'is required with STORAGE_DRIVER=s3');
    const s3Public = readUrl(env, 'S3_PUBLIC_BASE_URL', null);
    if (!s3Public) throw new ConfigError('S3_PUBLIC_BASE_URL', 'is required with STORAGE_DRIVER=s3');
    storage = {
      driver: 's3',
      bucket,
      region: env.S3_REGION || 'us-east-1',
      endpoint: readUrl(env, 'S3_ENDPOINT', null),
      accessKeyId: env.S3_ACCESS_KEY_ID || null,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY || null,
      forcePathStyle: readBool(env, 'S3_FORCE_PATH_STYLE', false),
      publicBaseUrl: s3Public,
    };
  } else {
    storage = { driver: 'local', rootDir: resolve(env.STORAGE_DIR || resolve(dataDir, 'documents')) };
  }

  const roleArg = argv.find((a) => a.startsWith('--role='))?.slice('--role='.length);
  const role = readEnum({ NFSE_ROLE: roleArg ?? env.NFSE_ROLE }, 'NFSE_ROLE', ['all', 'api', 'worker'] as const, 'all');

  return {
    port,
    host,
    dataDir,
    databaseUrl,
    adminKey,
    adminKeySource,
    masterKey,
    publicBaseUrl,
    logLevel: readEnum(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    cnameTarget: env.NFSE_CNAME_TARGET || 'docs.nfse-service.example.com',
    government: readEnum(env, 'NFSE_GOVERNMENT', ['sandbox', 'live'] as const, embedded ? 'sandbox' : 'live'),
    sefinSandboxUrl: readUrl(env, 'NFSE_SEFIN_SANDBOX_URL', null),
    sefinSandboxCaFile: env.NFSE_SEFIN_SANDBOX_CA_FILE || null,
    validateBeforeSend: readBool(env, 'NFSE_VALIDATE_BEFORE_SEND', true),
    signatureAlgorithm: readEnum(env, 'NFSE_SIGNATURE_ALGORITHM', ['rsa-sha1', 'rsa-sha256'] as const, 'rsa-sha1'),
    storage,
    role,
    workerConcurrency: readInt(env, 'NFSE_WORKER_CONCURRENCY', 32, 1, 1024),
    orgRateLimitPerMinute: readInt(env, 'NFSE_ORG_RATE_LIMIT', 120, 1, 1_000_000),
    maxKeyRateLimitPerMinute: readInt(env, 'NFSE_MAX_KEY_RATE_LIMIT', 6000, 1, 1_000_000),
    anonymousRateLimitPerMinute: readInt(env, 'NFSE_ANONYMOUS_RATE_LIMIT', 60, 1, 1_000_000),
    maxKeysPerProject: readInt(env, 'NFSE_MAX_KEYS_PER_PROJECT', 20, 1, 10_000),
    dnsServer: readHostPort(env, 'NFSE_DNS_SERVER'),
    domainVerificationRetrySeconds: readInt(env, 'NFSE_DOMAIN_VERIFICATION_RETRY_SECONDS', 600, 1, 86_400),
    jobRetryLimitMax: env.NFSE_TEST_JOB_RETRY_LIMIT ? readInt(env, 'NFSE_TEST_JOB_RETRY_LIMIT', 0, 0, 100) : null,
    testFaults: readJobFaults(env, 'NFSE_TEST_FAULTS', 'throw'),
    testHangs: readJobFaults(env, 'NFSE_TEST_FAULTS', 'hang'),
    jobExpireSecondsMax: env.NFSE_TEST_JOB_EXPIRE_SECONDS
      ? readInt(env, 'NFSE_TEST_JOB_EXPIRE_SECONDS', 0, 1, 3600)
      : null,
    webhooksAllowInsecure: readBool(env, 'NFSE_WEBHOOKS_ALLOW_INSECURE', false),
    httpTimeouts: {
      connectMs: readInt(env, 'NFSE_HTTP_CONNECT_TIMEOUT_MS', 10_000, 100, 120_000),
      responseMs: readInt(env, 'NFSE_HTTP_RESPONSE_TIMEOUT_MS', 30_000, 100, 600_000),
    },
    adnParametersTtlSeconds: readInt(env, 'NFSE_ADN_PARAMETERS_TTL_SECONDS', 86_400, 0, 30 * 86_400),
  };
}
