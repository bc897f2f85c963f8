import { eq } from 'drizzle-orm';
import { Type } from 'typebox';
import { findPlan } from '../../../db/repositories/organizations.ts';
import { organizations } from '../../../db/schema.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams, isUuid } from '../../schemas.ts';

export const changePlanRoute: RouteModule = (app, ctx) => {
  app.put(
    '/admin/organizations/:id/plan',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: "Change an organization's plan",
        params: IdParams,
        body: documentedBody(
          Type.Object(
            { plan: Type.String({ description: 'Plan slug: free, dev, pro or enterprise' }) },
            { additionalProperties: false },
          ),
          { name: 'ChangePlanRequest', description: 'The new plan', example: { plan: 'pro' } },
        ),
        response: {
          200: documented(Type.Object({ id: Type.String(), plan: Type.String({ description: 'Plan slug' }) }), {
            name: 'OrganizationPlan',
            description: 'The organization is on the new plan',
            example: { id: 'b0b3916f-4812-4303-816d-fabf88b3b4af', plan: 'pro' },
          }),
          ...errorResponses(400, 404),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await findPlan(ctx.db, request.body.plan))) {
        throw new ApiError('VALIDATION_FAILED', `Unknown plan ${request.body.plan}`, [
          { field: 'plan', message: 'must be one of free, dev, pro, enterprise' },
        ]);
      }
      const rows = isUuid(id)
        ? await ctx.db
            .update(organizations)
            .set({ planSlug: request.body.plan })
            .where(eq(organizations.id, id))
            .returning({ id: organizations.id })
        : [];
      if (rows.length === 0) throw new ApiError('NOT_FOUND', 'Organization not found');
      return { id, plan: request.body.plan };
    },
  );
};
