import { Type } from 'typebox';
import { listOrgProjects } from '../../../db/repositories/projects.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, pageOf, PageQuery, Pagination } from '../../schemas.ts';
import { assertValid, iso } from './common.ts';

export const ProjectListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  cnpj: Type.String(),
  codigoMunicipio: Type.Union([Type.String(), Type.Null()]),
  active: Type.Boolean(),
  hasCertificate: Type.Boolean({ description: 'An active A1 certificate is stored' }),
  hasApiKey: Type.Boolean({ description: 'The project has at least one active API key' }),
  createdAt: Type.String({ format: 'date-time' }),
});

/** GET /org/projects: the organization's projects, newest first. */
export const listProjectsRoute: RouteModule = (app, ctx) => {
  app.get(
    '/org/projects',
    {
      onRequest: requireOrg(ctx, 'projects:read'),
      attachValidation: true,
      schema: {
        tags: ['organization'],
        summary: 'List projects',
        description:
          'Needs the scope projects:read. By default only active projects; active=false includes inactive ones.',
        querystring: Type.Object({
          ...PageQuery,
          active: Type.Optional(
            Type.Boolean({ default: true, description: 'true (default): active projects only; false: all projects' }),
          ),
        }),
        response: {
          200: documented(
            Type.Object(
              { data: Type.Array(ProjectListItem), pagination: Pagination },
              { description: 'One page of projects' },
            ),
            {
              name: 'ProjectList',
              description: 'One page of the projects, newest first',
              example: {
                data: [
                  {
                    id: 'a408dbd1-361b-4349-ae99-111df8564c37',
                    name: 'Horizonte Tecnologia - Curitiba',
                    cnpj: '11222333000181',
                    codigoMunicipio: '4106902',
                    active: true,
                    hasCertificate: true,
                    hasApiKey: true,
                    createdAt: '2026-11-20T13:07:44.902Z',
                  },
                ],
                pagination: { page: 1, limit: 20, total: 1 },
              },
            },
          ),
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      assertValid(request);
      const { orgId } = orgPrincipal(request);
      const { page, limit } = pageOf(request.query);
      const { items, total } = await listOrgProjects(ctx.db, orgId, {
        page,
        limit,
        includeInactive: request.query.active === false,
      });
      return {
        data: items.map((p) => ({ ...p, createdAt: iso(p.createdAt)! })),
        pagination: { page, limit, total },
      };
    },
  );
};
