import { listOrgTokens } from '../../../db/repositories/org-tokens.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';
import { requireSession, sessionOf } from './session.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** GET /dashboard/api/org-tokens: the organization tokens (spec 5.4), the session's own marked. */
export const dashboardListOrgTokensRoute: RouteModule = (app, ctx) => {
  app.get(
    '/dashboard/api/org-tokens',
    { onRequest: requireSession(ctx), schema: { hide: true, response: errorResponses(401) } },
    async (request) => {
      const session = sessionOf(request);
      const rows = await listOrgTokens(ctx.db, session.orgId);
      return {
        data: rows.map((r) => ({
          ...r,
          createdAt: r.createdAt.toISOString(),
          lastUsedAt: iso(r.lastUsedAt),
          revokedAt: iso(r.revokedAt),
          thisSession: r.id === session.orgTokenId,
        })),
      };
    },
  );
};
