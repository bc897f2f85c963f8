import { eq } from 'drizzle-orm';
import { Type } from 'typebox';
import { keyRateCeiling } from '../../../db/repositories/api-keys.ts';
import { organizations } from '../../../db/schema.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { orNull } from '../org/common.ts';
import { documented, documentedBody, errorResponses, IdParams, isUuid } from '../../schemas.ts';

/** PUT /admin/organizations/{id}/limits: the operator raises (or lowers) one organization's key rate ceiling. */
export const updateOrgLimitsRoute: RouteModule = (app, ctx) => {
  app.put(
    '/admin/organizations/:id/limits',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: "Set an organization's key rate ceiling",
        description:
          "keyRateLimitCeiling: the highest rateLimitPerMinute this organization's project keys may get, replacing the " +
          "plan's ceiling and the service setting NFSE_MAX_KEY_RATE_LIMIT; null goes back to them. Applies to keys " +
          'created from now on.',
        params: IdParams,
        body: documentedBody(
          Type.Object(
            {
              keyRateLimitCeiling: orNull(
                Type.Integer({
                  minimum: 1,
                  maximum: 1_000_000,
                  description: 'Requests per minute, or null for the default (plan and service setting)',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          {
            name: 'UpdateOrgLimitsRequest',
            description: 'The new key rate ceiling',
            example: { keyRateLimitCeiling: 600 },
          },
        ),
        response: {
          200: documented(
            Type.Object({
              id: Type.String(),
              keyRateLimitCeiling: Type.Union([Type.Integer(), Type.Null()], { description: "The operator's value" }),
              effectiveKeyRateLimitCeiling: Type.Integer({ description: 'The ceiling new keys get' }),
            }),
            {
              name: 'OrganizationLimits',
              description: "The organization's key rate ceiling",
              example: {
                id: 'b0b3916f-4812-4303-816d-fabf88b3b4af',
                keyRateLimitCeiling: 600,
                effectiveKeyRateLimitCeiling: 600,
              },
            },
          ),
          ...errorResponses(400, 404),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const rows = isUuid(id)
        ? await ctx.db
            .update(organizations)
            .set({ keyRateLimitCeiling: request.body.keyRateLimitCeiling })
            .where(eq(organizations.id, id))
            .returning({ id: organizations.id })
        : [];
      if (rows.length === 0) throw new ApiError('NOT_FOUND', 'Organization not found');
      const { ceiling, override } = await keyRateCeiling(ctx.db, id, ctx.config.maxKeyRateLimitPerMinute);
      return { id, keyRateLimitCeiling: override, effectiveKeyRateLimitCeiling: ceiling };
    },
  );
};
