import { Type } from 'typebox';
import { updateOrgProject } from '../../../db/repositories/projects.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams } from '../../schemas.ts';
import { loadOrgProject } from './common.ts';

/** DELETE /org/projects/{id}/logo: removes the logo and resets danfeTemplate to `padrao`. */
export const deleteLogoRoute: RouteModule = (app, ctx) => {
  app.delete(
    '/org/projects/:id/logo',
    {
      onRequest: requireOrg(ctx, 'projects:write'),
      schema: {
        tags: ['organization'],
        summary: 'Delete the DANFSe logo of a project',
        description:
          'Needs the scope projects:write. Also resets danfeTemplate to padrao. Answers {ok: true} also when there was no logo.',
        params: IdParams,
        response: {
          200: documented(Type.Object({ ok: Type.Literal(true) }), {
            name: 'LogoDeleted',
            description: 'The logo is removed and danfeTemplate is padrao',
            example: { ok: true },
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const project = await loadOrgProject(ctx, request);
      const { orgId } = orgPrincipal(request);
      const row = await updateOrgProject(ctx.db, orgId, project.id, {
        logoKey: null,
        logoMimeType: null,
        danfeTemplate: 'padrao',
      });
      if (!row) throw new ApiError('PROJECT_NOT_FOUND', 'Project not found');
      if (project.logoKey) {
        await ctx.storage
          .delete(project.logoKey)
          .catch((err: unknown) => request.log.warn({ err }, 'logo file not deleted'));
      }
      return { ok: true as const };
    },
  );
};
