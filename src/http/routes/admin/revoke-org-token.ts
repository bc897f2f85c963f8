import { Type } from 'typebox';
import { revokeOrgToken } from '../../../db/repositories/organizations.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, isUuid } from '../../schemas.ts';

export const revokeOrgTokenRoute: RouteModule = (app, ctx) => {
  app.delete(
    '/admin/organizations/:id/tokens/:tokenId',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: 'Revoke an organization token (effective immediately)',
        params: Type.Object({ id: Type.String(), tokenId: Type.String() }),
        response: {
          200: documented(Type.Object({ revoked: Type.Boolean(), id: Type.String() }), {
            name: 'OrgTokenRevoked',
            description: 'The token is revoked; requests with it are refused from now on',
            example: { revoked: true, id: 'fdf24041-a664-470c-ac00-929c66635b67' },
          }),
          ...errorResponses(404),
        },
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
