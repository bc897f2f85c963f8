import { Type } from 'typebox';
import { deactivateOrgProject } from '../../../db/repositories/projects.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';

/**
 * DELETE /org/projects/{id}: the project becomes inactive (irreversibly through the API) and all its API
 * keys are revoked in the same transaction; invoices, numbering, files and certificate are kept, and the
 * CNPJ can be registered again.
 */
export const deleteProjectRoute: RouteModule = (app, ctx) => {
  app.delete(
    '/org/projects/:id',
    {
      onRequest: requireOrg(ctx, 'projects:write'),
      schema: {
        tags: ['organization'],
        summary: 'Delete (deactivate) a project',
        description:
          'Needs the scope projects:write. 204 without a body. 404 when the project does not exist, is already inactive or belongs to another organization.',
        params: IdParams,
        response: {
          204: Type.Null({ description: 'The project is deactivated (no body)' }),
          ...errorResponses(404),
        },
      },
    },
    async (request, reply) => {
      const { orgId } = orgPrincipal(request);
      const { id } = request.params;
      if (!isUuid(id) || !(await deactivateOrgProject(ctx.db, orgId, id, ctx.now()))) {
        throw new ApiError('PROJECT_NOT_FOUND', 'Project not found or already inactive');
      }
      return reply.status(204).send(null);
    },
  );
};
