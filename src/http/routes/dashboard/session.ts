import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../../../access/keys.ts';
import { openSecret, sealSecret } from '../../../certificates/vault.ts';
import type { AppContext } from '../../../context.ts';
import { endSession, findOpenSession } from '../../../db/repositories/dashboard-sessions.ts';
import { ApiError } from '../../errors.ts';

/**
 * Dashboard sessions, shared by the dashboard routes: the cookie `nfse_session=<id>.<secret>` (HttpOnly,
 * SameSite=Strict, Path=/dashboard, Secure over https), stored as the secret's SHA-256. The CSRF token is
 * HMAC-SHA256(secret, "csrf"): handed to the page at sign-in and by GET /dashboard/api/session, sent back in the
 * `x-csrf-token` header of every state-changing request (a synchronizer token the server needs not store: another
 * site can neither read the HttpOnly cookie nor the token). State-changing requests must also come from our own
 * origin when the browser says where they come from (Origin header).
 */

export const SESSION_COOKIE = 'nfse_session';
/** Absolute lifetime of a session: a working day. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface DashboardSession {
  id: string;
  orgId: string;
  orgName: string;
  email: string;
  expiresAt: Date;
  orgTokenId: string;
  orgTokenSealed: string;
  projectKeys: Record<string, { keyId: string; sealed: string }>;
  csrfToken: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession?: DashboardSession;
  }
}

export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');
export const csrfTokenOf = (secret: string) => createHmac('sha256', secret).update('csrf').digest('base64url');
export const newSecret = () => randomBytes(32).toString('base64url');

export function seal(ctx: AppContext, plain: string): string {
  return sealSecret(Buffer.from(plain, 'utf8'), ctx.config.masterKey).toString('base64');
}

export function unseal(ctx: AppContext, sealed: string): string {
  return openSecret(Buffer.from(sealed, 'base64'), ctx.config.masterKey).toString('utf8');
}

function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function isHttps(ctx: AppContext, request: FastifyRequest): boolean {
  return request.protocol === 'https' || ctx.config.publicBaseUrl.startsWith('https:');
}

export function setSessionCookie(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  value: string,
  maxAgeSeconds: number,
) {
  const secure = isHttps(ctx, request) ? '; Secure' : '';
  reply.header(
    'set-cookie',
    `${SESSION_COOKIE}=${value}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`,
  );
}

export function clearSessionCookie(ctx: AppContext, request: FastifyRequest, reply: FastifyReply) {
  setSessionCookie(ctx, request, reply, '', 0);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A state-changing request sent by another site (its Origin is not ours) is refused, signed in or not. */
export function assertSameOrigin(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin === undefined) return; // not a browser, or a same-origin GET-like navigation
  const host = request.headers.host;
  let originHost: string | null = null;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = null;
  }
  if (!host || originHost !== host) {
    throw new ApiError('CSRF_TOKEN_INVALID', 'The request comes from another site', [
      { field: '(header) origin', message: 'must be the dashboard’s own origin' },
    ]);
  }
}

/**
 * onRequest hook of every dashboard route but sign-in: the session of the cookie (401 when missing, unknown or
 * expired; an expired one is ended and its credentials revoked), then the CSRF token on state-changing requests.
 */
export function requireSession(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const cookie = readCookie(request, SESSION_COOKIE);
    const dot = cookie ? cookie.indexOf('.') : -1;
    const id = cookie && dot > 0 ? cookie.slice(0, dot) : '';
    const secret = cookie && dot > 0 ? cookie.slice(dot + 1) : '';
    const found = /^[0-9a-f-]{36}$/.test(id) && secret ? await findOpenSession(ctx.db, id) : null;
    if (!found || !constantTimeEqual(found.session.secretHash, hashSecret(secret))) {
      if (cookie) clearSessionCookie(ctx, request, reply);
      throw new ApiError('DASHBOARD_SESSION_REQUIRED', 'Sign in to the dashboard: no session or an unknown one');
    }
    const now = ctx.now();
    if (found.session.expiresAt <= now) {
      await ctx.db.transaction((tx) => endSession(tx, found.session.id, now));
      clearSessionCookie(ctx, request, reply);
      throw new ApiError('DASHBOARD_SESSION_REQUIRED', 'The session has expired: sign in again');
    }
    const csrfToken = csrfTokenOf(secret);
    if (!SAFE_METHODS.has(request.method)) {
      assertSameOrigin(request);
      const header = request.headers['x-csrf-token'];
      const sent = typeof header === 'string' ? header : '';
      if (!constantTimeEqual(hashSecret(sent), hashSecret(csrfToken))) {
        throw new ApiError('CSRF_TOKEN_INVALID', 'The x-csrf-token header is missing or wrong', [
          { field: '(header) x-csrf-token', message: 'must be the token of the session' },
        ]);
      }
    }
    request.dashboardSession = {
      id: found.session.id,
      orgId: found.session.orgId,
      orgName: found.orgName,
      email: found.email,
      expiresAt: found.session.expiresAt,
      orgTokenId: found.session.orgTokenId,
      orgTokenSealed: found.session.orgTokenSealed,
      projectKeys: found.session.projectKeys,
      csrfToken,
    };
  };
}

export function sessionOf(request: FastifyRequest): DashboardSession {
  const session = request.dashboardSession;
  if (!session) throw new ApiError('DASHBOARD_SESSION_REQUIRED');
  return session;
}

/** What the page learns of its session (sign-in and GET /dashboard/api/session). */
export function sessionView(
  session: Pick<DashboardSession, 'email' | 'orgId' | 'orgName' | 'expiresAt' | 'csrfToken'>,
) {
  return {
    email: session.email,
    organization: { id: session.orgId, name: session.orgName },
    expiresAt: session.expiresAt.toISOString(),
    csrfToken: session.csrfToken,
  };
}
