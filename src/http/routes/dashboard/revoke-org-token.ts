import { revokeOrgToken } from '../../../db/repositories/organizations.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { requireSession, sessionOf } from './session.ts';

/** DELETE /dashboard/api/org-tokens/{id}: revokes an active token of the organization (404 for any other id). */
export const dashboardRevokeOrgTokenRoute: RouteModule = (app, ctx) => {
  app.delete(
    '/dashboard/api/org-tokens/:id',
    {
      onRequest: requireSession(ctx),
      schema: { hide: true, params: IdParams, response: errorResponses(401, 403, 404) },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      const { id } = request.params;
      if (id === session.orgTokenId) {
        throw new ApiError('VALIDATION_FAILED', 'This token is the session’s own: sign out to revoke it', [
          { field: 'id', message: 'is the token of the current session' },
        ]);
      }
      if (!isUuid(id) || !(await revokeOrgToken(ctx.db, session.orgId, id))) throw new ApiError('NOT_FOUND');
      return reply.status(204).send();
    },
  );
};
