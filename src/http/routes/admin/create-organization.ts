import { Type } from 'typebox';
import { createOrganization, createOrgToken, findPlan } from '../../../db/repositories/organizations.ts';
import { ORG_SCOPES } from '../../../access/scopes.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';

export const CreateOrganizationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Organization name' }),
    plan: Type.Optional(Type.String({ description: 'Plan slug: free, dev, pro or enterprise (default free)' })),
  },
  { additionalProperties: false },
);

export const createOrganizationRoute: RouteModule = (app, ctx) => {
  app.post(
    '/admin/organizations',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: 'Create an organization and its first organization token (operator key)',
        body: CreateOrganizationBody,
        response: {
          201: Type.Object({
            id: Type.String(),
            name: Type.String(),
            slug: Type.String(),
            plan: Type.String(),
            token: Type.String({ description: 'Organization token (svc_org_…) with every scope; shown only here' }),
          }),
          ...errorResponses(400),
        },
      },
    },
    async (request, reply) => {
      const name = request.body.name.trim();
      if (!name)
        throw new ApiError('VALIDATION_FAILED', 'name is required', [{ field: 'name', message: 'is required' }]);
      const planSlug = request.body.plan ?? 'free';
      const result = await ctx.db.transaction(async (tx) => {
        const plan = await findPlan(tx, planSlug);
        if (!plan) {
          throw new ApiError('VALIDATION_FAILED', `Unknown plan ${planSlug}`, [
            { field: 'plan', message: 'must be one of free, dev, pro, enterprise' },
          ]);
        }
        const org = await createOrganization(tx, { name, planSlug });
        const { token } = await createOrgToken(tx, org.id, 'default', [...ORG_SCOPES]);
        return { id: org.id, name: org.name, slug: org.slug, plan: org.planSlug, token };
      });
      return reply.status(201).send(result);
    },
  );
};
