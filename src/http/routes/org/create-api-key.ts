import { Type } from 'typebox';
import { createProjectApiKey } from '../../../db/repositories/api-keys.ts';
import { orgPrincipal, PROJECT_SCOPES, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams } from '../../schemas.ts';
import { assertNoNulCharacters, assertValid, iso, loadOrgProject } from './common.ts';

export const ProjectScopeSchema = Type.Unsafe<(typeof PROJECT_SCOPES)[number]>({
  type: 'string',
  enum: [...PROJECT_SCOPES],
});

/** POST /org/projects/{id}/api-keys (spec 2.3): the full key is shown only in this response. */
export const createApiKeyRoute: RouteModule = (app, ctx) => {
  app.post(
    '/org/projects/:id/api-keys',
    {
      onRequest: requireOrg(ctx, 'api_keys:manage'),
      attachValidation: true,
      schema: {
        tags: ['organization'],
        summary: 'Create a project API key',
        description:
          'Needs the scope api_keys:manage. The key (svc_…) is returned only here; only its hash is stored. 404 for a deleted project.',
        params: IdParams,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100, description: 'Descriptive name' }),
            scopes: Type.Optional(
              Type.Array(ProjectScopeSchema, {
                minItems: 1,
                uniqueItems: true,
                description: 'Subset of emit, cancel, query (default: all three)',
              }),
            ),
            rateLimitPerMinute: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 1_000_000,
                default: 60,
                description: 'Requests per minute allowed to this key (default 60)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object(
            {
              id: Type.String(),
              name: Type.String(),
              key: Type.String({ description: 'The full key, svc_…; shown only in this response' }),
              keyPrefix: Type.String({ description: 'Short visible prefix, shown in listings' }),
              scopes: Type.Array(Type.String()),
              rateLimitPerMinute: Type.Integer(),
              createdAt: Type.String({ format: 'date-time' }),
            },
            { description: 'The new key; the full key is shown only in this response' },
          ),
          ...errorResponses(400, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const project = await loadOrgProject(ctx, request);
      assertValid(request);
      assertNoNulCharacters(request.body);
      const { orgId } = orgPrincipal(request);
      const name = request.body.name.trim();
      if (!name) {
        throw new ApiError('VALIDATION_FAILED', 'name must not be blank', [
          { field: 'name', message: 'must not be blank' },
        ]);
      }
      const { row, key } = await createProjectApiKey(ctx.db, {
        projectId: project.id,
        orgId,
        name,
        scopes: request.body.scopes ?? [...PROJECT_SCOPES],
        rateLimitPerMinute: request.body.rateLimitPerMinute ?? 60,
      });
      return reply.status(201).send({
        id: row.id,
        name: row.name,
        key,
        keyPrefix: row.prefix,
        scopes: row.scopes,
        rateLimitPerMinute: row.rateLimitPerMinute,
        createdAt: iso(row.createdAt)!,
      });
    },
  );
};
