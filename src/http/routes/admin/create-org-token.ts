import { Type } from 'typebox';
import { createOrgToken, findOrganization } from '../../../db/repositories/organizations.ts';
import { ORG_SCOPES } from '../../../access/scopes.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';

export const createOrgTokenRoute: RouteModule = (app, ctx) => {
  app.post(
    '/admin/organizations/:id/tokens',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: 'Create an organization token',
        params: IdParams,
        body: Type.Object(
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
        response: {
          201: Type.Object({
            id: Type.String(),
            name: Type.String(),
            token: Type.String({ description: 'shown only here' }),
            scopes: Type.Array(Type.String()),
          }),
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
