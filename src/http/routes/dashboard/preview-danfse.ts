import { Type } from 'typebox';
import type { DanfseTemplate } from '../../../documents/danfse/render.ts';
import { latestNoteWithXml } from '../../../db/repositories/invoice-list.ts';
import { findOrgProject } from '../../../db/repositories/projects.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { requireSession, sessionOf } from './session.ts';

const TEMPLATES = ['padrao', 'retrato_logo', 'paisagem_logo'] as const;

/**
 * GET /dashboard/api/projects/{id}/danfse-preview?template=: the DANFSe of the project's latest issued note drawn
 * with a template (default: the project's) and the project's logo, to compare templates before choosing one. A
 * real note is rendered, never a made-up one: 404 until the project has issued.
 */
export const dashboardPreviewDanfseRoute: RouteModule = (app, ctx) => {
  app.get(
    '/dashboard/api/projects/:id/danfse-preview',
    {
      onRequest: requireSession(ctx),
      schema: {
        hide: true,
        params: IdParams,
        querystring: Type.Object(
          { template: Type.Optional(Type.Union(TEMPLATES.map((t) => Type.Literal(t)))) },
          { additionalProperties: false },
        ),
        response: errorResponses(400, 401, 404, 422),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      const { id } = request.params;
      const project = isUuid(id) ? await findOrgProject(ctx.db, session.orgId, id) : null;
      if (!project) throw new ApiError('PROJECT_NOT_FOUND');
      const note = await latestNoteWithXml(ctx.db, session.orgId, id);
      if (!note) throw new ApiError('NOT_FOUND', 'The preview draws the latest issued note: issue one first');
      const template: DanfseTemplate =
        request.query.template ?? TEMPLATES.find((t) => t === project.danfeTemplate) ?? 'padrao';
      let logo: { data: Buffer; mimeType: string } | null = null;
      if (template !== 'padrao' && project.logoKey) {
        const file = await ctx.storage.get(project.logoKey);
        if (file) logo = { data: file.body, mimeType: project.logoMimeType ?? file.contentType };
      }
      const { renderDanfse } = await import('../../../documents/danfse/render.ts');
      const rendered = await renderDanfse({ nfseXml: note.nfseXml, template, logo });
      if (!rendered.ok) throw new ApiError('PDF_UNAVAILABLE', rendered.message);
      return reply
        .type('application/pdf')
        .header('content-disposition', `inline; filename="danfse-preview-${template}.pdf"`)
        .header('cache-control', 'no-store')
        .send(rendered.pdf);
    },
  );
};
