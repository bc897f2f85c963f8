import { Type } from 'typebox';
import { BatchStatusSchema, findBatchStatus } from '../../../invoices/batches.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { notFound } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, isUuid } from '../../schemas.ts';

export const getBatchStatusRoute: RouteModule = (app, ctx) => {
  app.get(
    '/invoices/batch/:batchId/status',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['status'],
        summary: 'Status of a batch and of each of its items',
        description:
          'Counts and items (in request order) of a batch created by POST /emitir/batch. A batch of another project ' +
          'is answered 404, like an unknown one.',
        params: Type.Object({ batchId: Type.String({ description: 'The batchId returned by POST /emitir/batch' }) }),
        response: {
          200: documented(BatchStatusSchema, {
            name: 'BatchStatus',
            description: 'The batch counts and each item in request order (spec 2.9)',
            example: {
              batchId: '521b67b2-e53d-4617-b9bd-f27d083e6bab',
              status: 'partial',
              total: 2,
              processed: 2,
              issued: 1,
              errors: 1,
              createdAt: '2026-11-26T18:42:10.517Z',
              completedAt: '2026-11-26T18:42:24.880Z',
              items: [
                {
                  invoiceId: '088f8ce1-dd9c-46b0-8b29-3de5045cfa89',
                  index: 0,
                  status: 'error',
                  referencia: 'OS-88412',
                  errorCode: 'E0207',
                  errorMessage: 'CPF do tomador não encontrado no cadastro CPF.',
                },
                {
                  invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
                  index: 1,
                  status: 'issued',
                  referencia: 'PED-2026-004518',
                  pdfUrl:
                    'https://notas.horizontetecnologia.com.br/p/a408dbd1-361b-4349-ae99-111df8564c37/9c1d7e4b2a6f48d0b3e5a7c9d1f20486/danfse.pdf',
                  chNFSe: '41069022211222333000181000000000134326114839201750',
                  numeroNfse: '1343',
                },
              ],
            },
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const principal = projectPrincipal(request);
      const { batchId } = request.params;
      if (!isUuid(batchId)) throw notFound('batch');
      const view = await findBatchStatus(ctx, principal.projectId, principal.orgId, batchId);
      if (!view) throw notFound('batch');
      return view as never;
    },
  );
};
