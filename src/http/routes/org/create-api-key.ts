import { Type } from 'typebox';
import { createProjectApiKey, keyRateCeiling } from '../../../db/repositories/api-keys.ts';
import { type Warning, warning } from '../../../domain/warnings.ts';
import { PROJECT_SCOPES } from '../../../access/scopes.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams } from '../../schemas.ts';
import { assertValid, iso, loadOrgProject } from './common.ts';

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
          'Needs the scope api_keys:manage. The key (svc_…) is returned only here; only its hash is stored. 404 for a deleted project. ' +
          "rateLimitPerMinute cannot exceed the organization's ceiling (its plan's, capped by the service setting " +
          'NFSE_MAX_KEY_RATE_LIMIT, unless the operator set one for the organization): a higher value is capped, the ' +
          'effective value is returned with the warning RATE_LIMIT_CAPPED. A project holds at most ' +
          'NFSE_MAX_KEYS_PER_PROJECT active keys (409 API_KEY_LIMIT_REACHED: revoke one first).',
        params: IdParams,
        body: documentedBody(
          Type.Object(
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
                  description:
                    "Requests per minute allowed to this key (default 60); above the organization's ceiling it is capped",
                }),
              ),
            },
            { additionalProperties: false },
          ),
          {
            name: 'CreateApiKeyRequest',
            description: "The key's name, scopes and rate limit",
            example: { name: 'ERP production', scopes: ['emit', 'cancel', 'query'], rateLimitPerMinute: 120 },
          },
        ),
        response: {
          201: documented(
            Type.Object(
              {
                id: Type.String(),
                name: Type.String(),
                key: Type.String({ description: 'The full key, svc_…; shown only in this response' }),
                keyPrefix: Type.String({ description: 'Short visible prefix, shown in listings' }),
                scopes: Type.Array(Type.String()),
                rateLimitPerMinute: Type.Integer({ description: 'The effective limit (after the ceiling)' }),
                createdAt: Type.String({ format: 'date-time' }),
                warnings: Type.Array(
                  Type.Object({
                    code: Type.String(),
                    field: Type.Union([Type.String(), Type.Null()]),
                    message: Type.String(),
                  }),
                  { description: 'Adjustments made on your behalf (RATE_LIMIT_CAPPED)' },
                ),
              },
              { description: 'A new project key' },
            ),
            {
              name: 'ApiKeyCreated',
              description: 'The new key; the full key is shown only in this response',
              example: {
                id: '11bc92aa-c5ea-477a-b232-dd7f4e755cb7',
                name: 'ERP production',
                key: 'svc_d0e7cf9694539c23a15a4c3d4e4b2c4782ce0bee',
                keyPrefix: 'svc_d0e7cf96',
                scopes: ['emit', 'cancel', 'query'],
                rateLimitPerMinute: 120,
                createdAt: '2026-11-20T13:12:30.004Z',
                warnings: [],
              },
            },
          ),
          ...errorResponses(400, 404, 409, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const project = await loadOrgProject(ctx, request);
      assertValid(request);
      const { orgId } = orgPrincipal(request);
      const name = request.body.name.trim();
      if (!name) {
        throw new ApiError('VALIDATION_FAILED', 'name must not be blank', [
          { field: 'name', message: 'must not be blank' },
        ]);
      }
      const requested = request.body.rateLimitPerMinute ?? 60;
      const { ceiling } = await keyRateCeiling(ctx.db, orgId, ctx.config.maxKeyRateLimitPerMinute);
      const warnings: Warning[] = [];
      if (requested > ceiling) {
        warnings.push(
          warning(
            'RATE_LIMIT_CAPPED',
            'rateLimitPerMinute',
            `${requested} requests per minute exceeds the organization's ceiling; the key was created with ${ceiling}`,
          ),
        );
      }
      const created = await createProjectApiKey(
        ctx.db,
        {
          projectId: project.id,
          orgId,
          name,
          scopes: request.body.scopes ?? [...PROJECT_SCOPES],
          rateLimitPerMinute: Math.min(requested, ceiling),
        },
        ctx.config.maxKeysPerProject,
      );
      if (!created.ok) {
        throw new ApiError(
          'API_KEY_LIMIT_REACHED',
          `A project holds at most ${ctx.config.maxKeysPerProject} active API keys; revoke one first`,
        );
      }
      const { row, key } = created;
      return reply.status(201).send({
        id: row.id,
        name: row.name,
        key,
        keyPrefix: row.prefix,
        scopes: row.scopes,
        rateLimitPerMinute: row.rateLimitPerMinute,
        createdAt: iso(row.createdAt)!,
        warnings,
      });
    },
  );
};
