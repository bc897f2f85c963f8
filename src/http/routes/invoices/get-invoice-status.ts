import { findProjectInvoice, storageBaseUrlOf } from '../../../db/repositories/invoices.ts';
import { InvoiceStatusSchema, invoiceStatusView } from '../../../invoices/views.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { notFound } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams } from '../../schemas.ts';

export const getInvoiceStatusRoute: RouteModule = (app, ctx) => {
  app.get(
    '/invoices/:id/status',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['status'],
        summary: 'Status of an invoice (poll every 3 to 5 seconds until issued)',
        params: IdParams,
        response: { 200: InvoiceStatusSchema, ...errorResponses(404) },
      },
    },
    async (request) => {
      const principal = projectPrincipal(request);
      const row = await findProjectInvoice(ctx.db, principal.projectId, request.params.id);
      if (!row) throw notFound('invoice');
      return invoiceStatusView(ctx, row, await storageBaseUrlOf(ctx.db, principal.orgId)) as never;
    },
  );
};
