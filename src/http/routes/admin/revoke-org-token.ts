import { Type } from 'typebox';
import { revokeOrgToken } from '../../../db/repositories/organizations.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, isUuid } from '../../schemas.ts';

export const revokeOrgTokenRoute: RouteModule = (app, ctx) => {
  app.delete(
    '/admin/organizations/:id/tokens/:tokenId',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: 'Revoke an organization token (effective immediately)',
        params: Type.Object({ id: Type.String(), tokenId: Type.String() }),
        response: { 200: Type.Object({ revoked: Type.Boolean(), id: Type.String() }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { id, tokenId } = request.params;
      if (!isUuid(id) || !isUuid(tokenId) || !(await revokeOrgToken(ctx.db, id, tokenId))) {
        throw new ApiError('NOT_FOUND', 'Token not found');
      }
      return { revoked: true, id: tokenId };
    },
  );
};
