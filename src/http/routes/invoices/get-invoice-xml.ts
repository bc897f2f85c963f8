import { Type } from 'typebox';
import { findProjectInvoice, storageBaseUrlOf } from '../../../db/repositories/invoices.ts';
import { documentUrl } from '../../../invoices/views.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError, notFound } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams } from '../../schemas.ts';

export const getInvoiceXmlRoute: RouteModule = (app, ctx) => {
  app.get(
    '/invoices/:id/xml',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['documents'],
        summary: 'The NFS-e XML (type=emission) or the cancellation event XML (type=cancel)',
        description:
          'When the documents are cached: 302 to the public URL (immutable). Otherwise 200 application/xml with the stored XML.',
        params: IdParams,
        querystring: Type.Object({
          type: Type.Optional(Type.Union([Type.Literal('emission'), Type.Literal('cancel')], { default: 'emission' })),
        }),
        response: {
          200: Type.String({ description: 'application/xml' }),
          302: Type.Null({ description: 'Redirect to the public document URL' }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request, reply) => {
      const principal = projectPrincipal(request);
      const row = await findProjectInvoice(ctx.db, principal.projectId, request.params.id);
      if (!row) throw notFound('invoice');
      const type = request.query.type ?? 'emission';
      if (row.status !== 'issued' && row.status !== 'cancelled') {
        throw new ApiError('INVOICE_NOT_ISSUED', `The invoice is ${row.status}; its XML exists once it is issued`);
      }
      if (type === 'cancel' && row.status !== 'cancelled') {
        throw new ApiError('INVOICE_NOT_CANCELLED', 'type=cancel is only available for cancelled invoices');
      }
      const key = type === 'cancel' ? row.cancelXmlKey : row.xmlKey;
      if (key) {
        const url = documentUrl(ctx, key, await storageBaseUrlOf(ctx.db, principal.orgId));
        if (url) return reply.redirect(url, 302);
      }
      const xml = type === 'cancel' ? row.cancelXml : row.nfseXml;
      if (!xml) throw new ApiError('XML_NOT_AVAILABLE');
      return reply.type('application/xml; charset=utf-8').send(xml);
    },
  );
};
