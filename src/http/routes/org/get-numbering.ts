import { readLastNumbers } from '../../../db/repositories/numbering.ts';
import { requireOrg } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams } from '../../schemas.ts';
import { loadOrgProject } from './common.ts';
import { NUMBERING_EXAMPLE, NumberingView, numberingView } from './numbering-schemas.ts';

/** GET /org/projects/{id}/numeracao (spec 2.2). */
export const getNumberingRoute: RouteModule = (app, ctx) => {
  app.get(
    '/org/projects/:id/numeracao',
    {
      onRequest: requireOrg(ctx, 'projects:read'),
      schema: {
        tags: ['organization'],
        summary: 'Get the numbering of a project',
        description: 'Needs the scope projects:read. Numbers start at 0 (next number 1).',
        params: IdParams,
        response: {
          200: documented(NumberingView, {
            name: 'Numbering',
            description: 'The last used and next numbers per document kind (spec 2.2)',
            example: NUMBERING_EXAMPLE,
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const project = await loadOrgProject(ctx, request);
      return numberingView(project, await readLastNumbers(ctx.db, project.id));
    },
  );
};
