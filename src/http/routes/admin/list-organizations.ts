import { asc, sql } from 'drizzle-orm';
import { Type } from 'typebox';
import { organizations } from '../../../db/schema.ts';
import { requireAdmin } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses } from '../../schemas.ts';

export const listOrganizationsRoute: RouteModule = (app, ctx) => {
  app.get(
    '/admin/organizations',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: 'List the organizations (operator key)',
        description: 'Every organization, oldest first, with its plan, credits used this period and counts.',
        response: {
          200: documented(
            Type.Object({
              data: Type.Array(
                Type.Object({
                  id: Type.String(),
                  name: Type.String(),
                  slug: Type.String(),
                  plan: Type.String(),
                  creditsUsed: Type.Integer({ description: 'Credits used in the current period' }),
                  periodStart: Type.String({ format: 'date-time' }),
                  projects: Type.Integer({ description: 'Active projects' }),
                  activeTokens: Type.Integer({ description: 'Active organization tokens' }),
                  createdAt: Type.String({ format: 'date-time' }),
                }),
              ),
            }),
            {
              name: 'OrganizationList',
              description: 'Every organization, oldest first',
              example: {
                data: [
                  {
                    id: 'b0b3916f-4812-4303-816d-fabf88b3b4af',
                    name: 'Horizonte Tecnologia',
                    slug: 'horizonte-tecnologia',
                    plan: 'pro',
                    creditsUsed: 137,
                    periodStart: '2026-11-01T00:00:00.000Z',
                    projects: 2,
                    activeTokens: 1,
                    createdAt: '2026-10-14T12:31:07.552Z',
                  },
                ],
              },
            },
          ),
          ...errorResponses(),
        },
      },
    },
    async () => {
      const rows = await ctx.db
        .select({
          id: organizations.id,
          name: organizations.name,
          slug: organizations.slug,
          plan: organizations.planSlug,
          creditsUsed: organizations.creditsUsed,
          periodStart: organizations.periodStart,
          createdAt: organizations.createdAt,
          projects: sql<number>`(select count(*) from projects p where p.org_id = organizations.id and p.active)::int`,
          activeTokens: sql<number>`(select count(*) from org_tokens t where t.org_id = organizations.id and t.active)::int`,
        })
        .from(organizations)
        .orderBy(asc(organizations.createdAt), asc(organizations.id));
      return {
        data: rows.map((r) => ({
          ...r,
          projects: Number(r.projects),
          activeTokens: Number(r.activeTokens),
          periodStart: r.periodStart.toISOString(),
          createdAt: r.createdAt.toISOString(),
        })),
      };
    },
  );
};
