import { Type } from 'typebox';
import { createOrganization, createOrgToken, findPlan } from '../../../db/repositories/organizations.ts';
import { ORG_SCOPES } from '../../../access/scopes.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses } from '../../schemas.ts';

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
        body: documentedBody(CreateOrganizationBody, {
          name: 'CreateOrganizationRequest',
          description: "The organization's name and plan",
          example: { name: 'Horizonte Tecnologia', plan: 'pro' },
        }),
        response: {
          201: documented(
            Type.Object({
              id: Type.String(),
              name: Type.String(),
              slug: Type.String(),
              plan: Type.String(),
              token: Type.String({ description: 'Organization token (svc_org_…) with every scope; shown only here' }),
            }),
            {
              name: 'OrganizationCreated',
              description: 'The organization and its first organization token, shown only in this response',
              example: {
                id: 'b0b3916f-4812-4303-816d-fabf88b3b4af',
                name: 'Horizonte Tecnologia',
                slug: 'horizonte-tecnologia',
                plan: 'pro',
                token: 'svc_org_abbef8a9ad4ae7a2de82941ac1f48e1efdc3bcab',
              },
            },
          ),
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
