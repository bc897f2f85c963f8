import { Type } from 'typebox';
import { ORG_SCOPES } from '../../../access/scopes.ts';
import { createOrgToken } from '../../../db/repositories/organizations.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';
import { requireSession, sessionOf } from './session.ts';

/**
 * POST /dashboard/api/org-tokens: a member creates an organization token (svc_org_…) with the scopes of spec 5.4;
 * the token is in this answer only (its hash is stored), as with the operator's route.
 */
export const dashboardCreateOrgTokenRoute: RouteModule = (app, ctx) => {
  app.post(
    '/dashboard/api/org-tokens',
    {
      onRequest: requireSession(ctx),
      schema: {
        hide: true,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            scopes: Type.Array(Type.Union(ORG_SCOPES.map((s) => Type.Literal(s))), { minItems: 1, uniqueItems: true }),
          },
          { additionalProperties: false },
        ),
        response: errorResponses(400, 401, 403),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      const { row, token } = await createOrgToken(ctx.db, session.orgId, request.body.name, request.body.scopes);
      return reply.status(201).send({ id: row.id, name: row.name, token, prefix: row.prefix, scopes: row.scopes });
    },
  );
};
