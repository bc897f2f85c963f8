import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams } from '../../schemas.ts';
import { requireOrg } from '../../auth.ts';
import { loadOrgProject } from './common.ts';
import { PROJECT_EXAMPLE, ProjectView, projectFullView } from './project-schemas.ts';

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
        response: {
          200: documented(ProjectView, {
            name: 'Project',
            description: 'The project (write-only fields are never returned)',
            example: PROJECT_EXAMPLE,
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => projectFullView(await loadOrgProject(ctx, request, { includeInactive: true })),
  );
};
