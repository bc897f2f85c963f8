import { and, eq, sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual, hashKey, keyKindOf } from '../access/keys.ts';
import type { OrgScope, ProjectScope } from '../access/scopes.ts';
import type { AppContext } from '../context.ts';
import type { Db } from '../db/client.ts';
import { apiKeys, orgTokens, projects } from '../db/schema.ts';
import { sharedReads } from '../db/table-changes.ts';
import { ApiError } from './errors.ts';

export type Principal =
  | { kind: 'admin' }
  | { kind: 'org'; orgId: string; tokenId: string; scopes: string[] }
  | { kind: 'project'; orgId: string; projectId: string; keyId: string; scopes: string[]; project: ProjectRow };

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * Every authentication hook is marked, so the app can check at start-up that each API route authenticates in
 * `onRequest` (before its body is read and its schema validated: an anonymous caller never learns the schema).
 */
const AUTH_HOOK = Symbol('nfse.auth-hook');
type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

function authHook(hook: Hook): Hook {
  return Object.assign(hook, { [AUTH_HOOK]: true });
}

export function isAuthHook(value: unknown): boolean {
  return typeof value === 'function' && (value as unknown as Record<symbol, unknown>)[AUTH_HOOK] === true;
}

const LAST_USED_EVERY_MS = 60_000;
const lastUsedWritten = new Map<string, number>();

function touch(ctx: AppContext, id: string, write: () => Promise<unknown>) {
  const now = Date.now();
  const last = lastUsedWritten.get(id) ?? 0;
  if (now - last < LAST_USED_EVERY_MS) return;
  lastUsedWritten.set(id, now);
  write().catch((err) => ctx.logger.warn({ err }, 'could not record lastUsedAt'));
}

/**
 * The 401 of a missing or invalid key, after counting the request against its client address: guessing keys or
 * hammering the service without one is limited per address (NFSE_ANONYMOUS_RATE_LIMIT) like keys are per key.
 */
async function unauthenticated(ctx: AppContext, request: FastifyRequest, detail: string): Promise<never> {
  await limit(ctx, `anon:${request.ip}`, ctx.config.anonymousRateLimitPerMinute);
  throw new ApiError('UNAUTHENTICATED', detail);
}

async function readKey(ctx: AppContext, request: FastifyRequest): Promise<string> {
  const header = request.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) return unauthenticated(ctx, request, 'The x-api-key header is missing');
  return key.trim();
}

async function limit(ctx: AppContext, bucket: string, perMinute: number) {
  const retryAfter = await ctx.rateLimiter.take(bucket, perMinute);
  if (retryAfter !== null) {
    throw new ApiError(
      'RATE_LIMITED',
      `At most ${perMinute} requests per minute`,
      [],
      {},
      {
        'retry-after': String(retryAfter),
      },
    );
  }
}

type ProjectRow = typeof projects.$inferSelect;

/**
 * The two lookups every authenticated request makes, built once per database as prepared statements
 * (query building is most of their cost).
 */
function prepareLookups(db: Db) {
  return {
    projectKey: db
      .select({
        id: apiKeys.id,
        keyHash: apiKeys.keyHash,
        projectId: apiKeys.projectId,
        orgId: apiKeys.orgId,
        scopes: apiKeys.scopes,
        rate: apiKeys.rateLimitPerMinute,
        project: projects,
      })
      .from(apiKeys)
      .innerJoin(projects, eq(projects.id, apiKeys.projectId))
      .where(and(eq(apiKeys.keyHash, sql.placeholder('hash')), eq(apiKeys.active, true)))
      .limit(1)
      .prepare('auth_project_key'),
    orgToken: db
      .select()
      .from(orgTokens)
      .where(and(eq(orgTokens.tokenHash, sql.placeholder('hash')), eq(orgTokens.active, true)))
      .limit(1)
      .prepare('auth_org_token'),
  };
}

const lookups = new WeakMap<Db, ReturnType<typeof prepareLookups>>();

function lookupsFor(db: Db) {
  let prepared = lookups.get(db);
  if (!prepared) {
    prepared = prepareLookups(db);
    lookups.set(db, prepared);
  }
  return prepared;
}

type ProjectKeyRow = Awaited<ReturnType<ReturnType<typeof prepareLookups>['projectKey']['execute']>>[number];

/**
 * The key and its project in one query (project routes usually need the project right after). Concurrent requests
 * with the same key share one query (a client's burst costs one lookup, not one per request). On the embedded
 * database the answer is kept until a key or a project changes (the database notifies every change as it commits,
 * and this process is its only writer), so a request there usually reads nothing; on PostgreSQL nothing is kept
 * after the query answers, and a request sees the key and project as they were at most one query's round trip
 * before it arrived (the query it joined). Either way, a revocation is seen by every request that arrives after it
 * committed.
 */
async function findProjectKey(ctx: AppContext, key: string) {
  const hash = hashKey(key);
  const reads = sharedReads<ProjectKeyRow | undefined>(ctx.db, 'project_key', ctx.database.changes, [
    'api_keys',
    'projects',
  ]);
  const row = await reads.get(hash, () =>
    lookupsFor(ctx.db)
      .projectKey.execute({ hash })
      .then(([found]) => found),
  );
  if (!row?.project.active || !constantTimeEqual(row.keyHash, hash)) return null;
  return row;
}

async function findOrgToken(ctx: AppContext, key: string) {
  const hash = hashKey(key);
  const [row] = await lookupsFor(ctx.db).orgToken.execute({ hash });
  if (!row || !constantTimeEqual(row.tokenHash, hash)) return null;
  return row;
}

/** Organization routes (spec 4.1): only active `svc_org_` tokens holding the scope. */
export function requireOrg(ctx: AppContext, scope: OrgScope) {
  return authHook(async (request, _reply) => {
    const key = await readKey(ctx, request);
    const kind = keyKindOf(key);
    if (kind !== 'org') {
      if (kind === 'project' && (await findProjectKey(ctx, key))) {
        throw new ApiError('WRONG_KEY_KIND', 'Organization routes need an organization token (svc_org_…)');
      }
      if (kind === 'admin' && constantTimeEqual(key, ctx.config.adminKey)) {
        throw new ApiError('WRONG_KEY_KIND', 'Organization routes need an organization token (svc_org_…)');
      }
      return unauthenticated(ctx, request, 'The API key is not valid');
    }
    const token = await findOrgToken(ctx, key);
    if (!token) return unauthenticated(ctx, request, 'The organization token is not valid or was revoked');
    await limit(ctx, `org:${token.id}`, ctx.config.orgRateLimitPerMinute);
    if (!token.scopes.includes(scope)) {
      throw new ApiError('INSUFFICIENT_SCOPE', `This route needs the scope ${scope}`);
    }
    request.principal = { kind: 'org', orgId: token.orgId, tokenId: token.id, scopes: token.scopes };
    touch(ctx, token.id, () =>
      ctx.db.update(orgTokens).set({ lastUsedAt: new Date() }).where(eq(orgTokens.id, token.id)),
    );
  });
}

/** Project routes (issuing, status, documents, webhooks, lookups): active `svc_` keys of active projects. */
export function requireProject(ctx: AppContext, scope: ProjectScope) {
  return authHook(async (request, _reply) => {
    const key = await readKey(ctx, request);
    const kind = keyKindOf(key);
    if (kind !== 'project') {
      if (kind === 'org' && (await findOrgToken(ctx, key))) {
        throw new ApiError('WRONG_KEY_KIND', 'This route needs a project API key (svc_…)');
      }
      if (kind === 'admin' && constantTimeEqual(key, ctx.config.adminKey)) {
        throw new ApiError('WRONG_KEY_KIND', 'This route needs a project API key (svc_…)');
      }
      return unauthenticated(ctx, request, 'The API key is not valid');
    }
    const row = await findProjectKey(ctx, key);
    if (!row) return unauthenticated(ctx, request, 'The API key is not valid or was revoked');
    await limit(ctx, `key:${row.id}`, row.rate);
    if (!row.scopes.includes(scope)) {
      throw new ApiError('INSUFFICIENT_SCOPE', `This route needs the scope ${scope}`);
    }
    request.principal = {
      kind: 'project',
      orgId: row.orgId,
      projectId: row.projectId,
      keyId: row.id,
      scopes: row.scopes,
      project: row.project,
    };
    touch(ctx, row.id, () => ctx.db.update(apiKeys).set({ lastUsedAt: new Date() }).where(eq(apiKeys.id, row.id)));
  });
}

/** Operator routes: the `NFSE_ADMIN_KEY`. */
export function requireAdmin(ctx: AppContext) {
  return authHook(async (request) => {
    const key = await readKey(ctx, request);
    if (!constantTimeEqual(hashKey(key), hashKey(ctx.config.adminKey))) {
      if (keyKindOf(key) === 'admin') return unauthenticated(ctx, request, 'The operator key is not valid');
      return unauthenticated(ctx, request, 'Operator routes need the operator key (svc_admin_…)');
    }
    request.principal = { kind: 'admin' };
  });
}

export function orgPrincipal(request: FastifyRequest) {
  const p = request.principal;
  if (p?.kind !== 'org') throw new ApiError('UNAUTHENTICATED');
  return p;
}

export function projectPrincipal(request: FastifyRequest) {
  const p = request.principal;
  if (p?.kind !== 'project') throw new ApiError('UNAUTHENTICATED');
  return p;
}
