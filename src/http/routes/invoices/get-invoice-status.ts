import { findProjectInvoiceStatus } from '../../../db/repositories/invoices.ts';
import { InvoiceStatusSchema, invoiceStatusView } from '../../../invoices/views.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { notFound } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams } from '../../schemas.ts';
import { IBSCBS_OMITTED_WARNING_EXAMPLE } from './examples.ts';

export const getInvoiceStatusRoute: RouteModule = (app, ctx) => {
  app.get(
    '/invoices/:id/status',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['status'],
        summary: 'Status of an invoice (poll every 3 to 5 seconds until issued)',
        params: IdParams,
        response: {
          200: documented(InvoiceStatusSchema, {
            name: 'InvoiceStatus',
            description: 'The invoice status (spec 2.8); the fields of each state appear once it is reached',
            example: {
              invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
              status: 'issued' as never, // (a union built from a list types as never; the test of the examples checks it)
              referencia: 'PED-2026-004518',
              batchId: null,
              engine: 'national',
              createdAt: '2026-11-26T18:42:10.517Z',
              updatedAt: '2026-11-26T18:42:21.904Z',
              serie: '1608',
              numeroDps: 1343,
              chNFSe: '41069022211222333000181000000000134326114839201750',
              numeroNfse: '1343',
              nNFSe: '1343',
              emittedAt: '2026-11-26T18:42:14.000Z',
              issuedAt: '2026-11-26T18:42:14.000Z',
              ambiente: 'homologacao',
              documentsCached: true,
              documentStatus: 'complete',
              xmlUrl:
                'https://notas.horizontetecnologia.com.br/p/a408dbd1-361b-4349-ae99-111df8564c37/9c1d7e4b2a6f48d0b3e5a7c9d1f20486/nfse.xml',
              pdfUrl:
                'https://notas.horizontetecnologia.com.br/p/a408dbd1-361b-4349-ae99-111df8564c37/9c1d7e4b2a6f48d0b3e5a7c9d1f20486/danfse.pdf',
              warnings: [IBSCBS_OMITTED_WARNING_EXAMPLE],
              links: {
                self: '/api/v1/invoices/ec96b9b1-e89f-46f6-8351-644687a97c27/status',
                xml: '/api/v1/invoices/ec96b9b1-e89f-46f6-8351-644687a97c27/xml',
                pdf: '/api/v1/invoices/ec96b9b1-e89f-46f6-8351-644687a97c27/pdf',
              },
            },
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const principal = projectPrincipal(request);
      const found = await findProjectInvoiceStatus(ctx.db, principal.projectId, request.params.id);
      if (!found) throw notFound('invoice');
      return invoiceStatusView(ctx, found.row, found.storageBaseUrl) as never;
    },
  );
};
