import type { FastifyRequest } from 'fastify';
import { API_PREFIX } from '../../../api-paths.ts';
import { PROJECT_SCOPES } from '../../../access/scopes.ts';
import type { AppContext } from '../../../context.ts';
import { createProjectApiKey, keyRateCeiling } from '../../../db/repositories/api-keys.ts';
import {
  endSession,
  findOpenSession,
  forgetProjectKey,
  recordProjectKey,
} from '../../../db/repositories/dashboard-sessions.ts';
import { findOrgProject } from '../../../db/repositories/projects.ts';
import { revokeProjectApiKey } from '../../../db/repositories/api-keys.ts';
import { ApiError } from '../../errors.ts';
import type { App, RouteModule } from '../../route.ts';
import { isUuid } from '../../schemas.ts';
import { type DashboardSession, clearSessionCookie, requireSession, seal, sessionOf, unseal } from './session.ts';

/**
 * `/dashboard/api/v1/*`: the dashboard calls the JSON API itself, every rule and validation message included.
 * A signed-in, CSRF-checked request is replayed in-process (`app.inject`) on the same path under /api/v1 with the
 * session's credential: the organization token minted at sign-in for `/org/*`, and for the project routes (issuing,
 * status, documents, cancellation, batches, webhooks) the session's key of the project named by the
 * `x-dashboard-project` header, minted on first use (every project scope) and revoked when the session ends.
 * Operator routes are not reachable from here.
 */

const REQUEST_HEADERS = ['content-type', 'idempotency-key', 'accept'];
const RESPONSE_HEADERS = ['content-type', 'content-disposition', 'location', 'retry-after', 'cache-control'];

declare module 'fastify' {
  interface FastifyRequest {
    dashboardRawBody?: Buffer;
  }
}

async function mintProjectKey(ctx: AppContext, session: DashboardSession, projectId: string): Promise<string> {
  const { ceiling } = await keyRateCeiling(ctx.db, session.orgId, ctx.config.maxKeyRateLimitPerMinute);
  const created = await createProjectApiKey(
    ctx.db,
    {
      projectId,
      orgId: session.orgId,
      name: `dashboard session ${session.email}`,
      scopes: [...PROJECT_SCOPES],
      rateLimitPerMinute: ceiling,
    },
    ctx.config.maxKeysPerProject,
  );
  if (!created.ok) {
    throw new ApiError(
      'API_KEY_LIMIT_REACHED',
      'The dashboard acts on a project through a key of its own, and the project already has the maximum number of active keys: revoke one first',
    );
  }
  const entry = { keyId: created.row.id, sealed: seal(ctx, created.key) };
  if (await recordProjectKey(ctx.db, session.id, projectId, entry)) {
    session.projectKeys[projectId] = entry;
    return created.key;
  }
  // another request of this session minted one at the same time: use that one
  await revokeProjectApiKey(ctx.db, projectId, created.row.id, ctx.now());
  const winner = (await findOpenSession(ctx.db, session.id))?.session.projectKeys[projectId];
  if (!winner) throw new ApiError('DASHBOARD_SESSION_REQUIRED', 'The session has ended');
  session.projectKeys[projectId] = winner;
  return unseal(ctx, winner.sealed);
}

async function projectKeyOf(ctx: AppContext, request: FastifyRequest, session: DashboardSession) {
  const header = request.headers['x-dashboard-project'];
  const projectId = typeof header === 'string' ? header : '';
  if (!isUuid(projectId) || !(await findOrgProject(ctx.db, session.orgId, projectId))) {
    throw new ApiError('PROJECT_NOT_FOUND', 'Choose a project of the organization', [
      { field: '(header) x-dashboard-project', message: 'must be the id of an active project of the organization' },
    ]);
  }
  const known = session.projectKeys[projectId];
  return { projectId, key: known ? unseal(ctx, known.sealed) : await mintProjectKey(ctx, session, projectId), known };
}

export const dashboardForwardApiRoute: RouteModule = (root, ctx) => {
  root.register(async (scoped: App) => {
    // the body is replayed as received (JSON, multipart certificate and logo uploads): kept as bytes, not parsed
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
      request.dashboardRawBody = body as Buffer;
      done(null, undefined);
    });
    scoped.all(
      '/dashboard/api/v1/*',
      { onRequest: requireSession(ctx), schema: { hide: true } },
      async (request, reply) => {
        const session = sessionOf(request);
        const url = request.url.slice('/dashboard/api/v1'.length);
        const path = url.split('?')[0]!;
        // only plain paths: no dot segments or encoded ones that would resolve elsewhere (an operator route, say)
        const plain = !/(^|\/)\.{1,2}(\/|$)|%2e|%2f|%5c|\\|\/\//i.test(path);
        if (!path.startsWith('/') || !plain || path.startsWith('/admin')) throw new ApiError('ROUTE_NOT_FOUND');
        const headers: Record<string, string> = {};
        for (const name of REQUEST_HEADERS) {
          const value = request.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        const send = (key: string) =>
          root.inject({
            method: request.method as 'GET',
            url: `${API_PREFIX}${url}`,
            headers: { ...headers, 'x-api-key': key, 'x-request-id': request.id },
            ...(request.dashboardRawBody ? { payload: request.dashboardRawBody } : {}),
          });
        let response: Awaited<ReturnType<typeof send>>;
        if (path.startsWith('/org/') || path === '/org') {
          response = await send(unseal(ctx, session.orgTokenSealed));
          if (response.statusCode === 401) {
            // the session's token was revoked: the session is over
            await ctx.db.transaction((tx) => endSession(tx, session.id, ctx.now()));
            clearSessionCookie(ctx, request, reply);
            throw new ApiError('DASHBOARD_SESSION_REQUIRED', 'The session was revoked: sign in again');
          }
        } else {
          const first = await projectKeyOf(ctx, request, session);
          response = await send(first.key);
          if (response.statusCode === 401 && first.known) {
            // the session's key of this project was revoked (on the keys page, say): mint another once
            await forgetProjectKey(ctx.db, session.id, first.projectId);
            delete session.projectKeys[first.projectId];
            response = await send(await mintProjectKey(ctx, session, first.projectId));
          }
        }
        for (const name of RESPONSE_HEADERS) {
          const value = response.headers[name];
          if (typeof value === 'string') reply.header(name, value);
        }
        return reply.status(response.statusCode).send(response.rawPayload);
      },
    );
  });
};
