import { eq } from 'drizzle-orm';
import { Type } from 'typebox';
import { findPlan } from '../../../db/repositories/organizations.ts';
import { organizations } from '../../../db/schema.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';

export const changePlanRoute: RouteModule = (app, ctx) => {
  app.put(
    '/admin/organizations/:id/plan',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: "Change an organization's plan",
        params: IdParams,
        body: Type.Object({ plan: Type.String() }, { additionalProperties: false }),
        response: { 200: Type.Object({ id: Type.String(), plan: Type.String() }), ...errorResponses(400, 404) },
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
