import { Type } from 'typebox';
import { createOrgToken, findOrganization } from '../../../db/repositories/organizations.ts';
import { ORG_SCOPES } from '../../../access/scopes.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams, isUuid } from '../../schemas.ts';

export const createOrgTokenRoute: RouteModule = (app, ctx) => {
  app.post(
    '/admin/organizations/:id/tokens',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: 'Create an organization token',
        params: IdParams,
        body: documentedBody(
          Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 100 }),
              scopes: Type.Optional(
                Type.Array(Type.Union(ORG_SCOPES.map((s) => Type.Literal(s))), {
                  minItems: 1,
                  uniqueItems: true,
                  description: 'Default: every scope',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          {
            name: 'CreateOrgTokenRequest',
            description: "The token's name and scopes",
            // (a union built from a list types as never: the scopes are checked by the test of the examples)
            example: {
              name: 'ERP integration',
              scopes: ['projects:read', 'projects:write', 'api_keys:manage'] as never[],
            },
          },
        ),
        response: {
          201: documented(
            Type.Object({
              id: Type.String(),
              name: Type.String(),
              token: Type.String({ description: 'shown only here' }),
              scopes: Type.Array(Type.String()),
            }),
            {
              name: 'OrgTokenCreated',
              description: 'The new organization token; the token itself is shown only in this response',
              example: {
                id: 'fdf24041-a664-470c-ac00-929c66635b67',
                name: 'ERP integration',
                token: 'svc_org_abbef8a9ad4ae7a2de82941ac1f48e1efdc3bcab',
                scopes: ['projects:read', 'projects:write', 'api_keys:manage'],
              },
            },
          ),
          ...errorResponses(400, 404),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await findOrganization(ctx.db, id)))
        throw new ApiError('NOT_FOUND', 'Organization not found');
      const scopes = request.body.scopes ?? [...ORG_SCOPES];
      const { row, token } = await createOrgToken(ctx.db, id, request.body.name, scopes);
      return reply.status(201).send({ id: row.id, name: row.name, token, scopes: row.scopes });
    },
  );
};
