import { Type } from 'typebox';
import { BatchStatusSchema, findBatchStatus } from '../../../invoices/batches.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { notFound } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, isUuid } from '../../schemas.ts';

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
        response: { 200: BatchStatusSchema, ...errorResponses(404) },
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
