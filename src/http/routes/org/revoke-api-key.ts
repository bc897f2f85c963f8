import { Type } from 'typebox';
import { revokeProjectApiKey } from '../../../db/repositories/api-keys.ts';
import { requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, isUuid } from '../../schemas.ts';
import { loadOrgProject } from './common.ts';

/** DELETE /org/projects/{id}/api-keys/{keyId}: revokes the key, effective on its next request. */
export const revokeApiKeyRoute: RouteModule = (app, ctx) => {
  app.delete(
    '/org/projects/:id/api-keys/:keyId',
    {
      onRequest: requireOrg(ctx, 'api_keys:manage'),
      schema: {
        tags: ['organization'],
        summary: 'Revoke a project API key',
        description:
          'Needs the scope api_keys:manage. Effective immediately. 404 when the key does not exist, is already revoked or belongs to another project.',
        params: Type.Object({
          id: Type.String({ description: 'Project id (UUID)' }),
          keyId: Type.String({ description: 'API key id (UUID)' }),
        }),
        response: {
          200: documented(Type.Object({ revoked: Type.Literal(true), id: Type.String() }), {
            name: 'ApiKeyRevoked',
            description: 'The key is revoked; requests with it are refused from now on',
            example: { revoked: true, id: '11bc92aa-c5ea-477a-b232-dd7f4e755cb7' },
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const project = await loadOrgProject(ctx, request);
      const { keyId } = request.params;
      if (!isUuid(keyId) || !(await revokeProjectApiKey(ctx.db, project.id, keyId, ctx.now()))) {
        throw new ApiError('NOT_FOUND', 'API key not found or already revoked');
      }
      return { revoked: true as const, id: keyId };
    },
  );
};
