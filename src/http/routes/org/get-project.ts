import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams } from '../../schemas.ts';
import { requireOrg } from '../../auth.ts';
import { loadOrgProject } from './common.ts';
import { ProjectView, projectFullView } from './project-schemas.ts';

/** GET /org/projects/{id}: the full project; write-only fields never appear. */
export const getProjectRoute: RouteModule = (app, ctx) => {
  app.get(
    '/org/projects/:id',
    {
      onRequest: requireOrg(ctx, 'projects:read'),
      schema: {
        tags: ['organization'],
        summary: 'Get a project',
        description:
          'Needs the scope projects:read. Deleted (inactive) projects are shown with active=false. basicAuthSenha, cscToken, the certificate and its password are never returned; hasCscToken tells whether a CSC token is stored.',
        params: IdParams,
        response: { 200: ProjectView, ...errorResponses(404) },
      },
    },
    async (request) => projectFullView(await loadOrgProject(ctx, request, { includeInactive: true })),
  );
};
