import { Type } from 'typebox';
import { listEndpoints } from '../../../webhooks/endpoints.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, pageOf, PageQuery, Pagination } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';
import { EndpointSchema, endpointView, needsScope } from './schemas.ts';

/** GET /webhooks/endpoints: the project's endpoints, newest first. */
export const listWebhookEndpointsRoute: RouteModule = (app, ctx) => {
  app.get(
    '/webhooks/endpoints',
    {
      onRequest: requireProject(ctx, 'query'),
      attachValidation: true,
      schema: {
        tags: ['webhooks'],
        summary: 'List webhook endpoints',
        description: `${needsScope('query')} Deleted endpoints are not listed.`,
        querystring: Type.Object({ ...PageQuery }),
        response: {
          200: documented(Type.Object({ data: Type.Array(EndpointSchema), pagination: Pagination }), {
            name: 'WebhookEndpointList',
            description: 'One page of the active and inactive endpoints of the project',
            example: {
              data: [
                {
                  id: '86101c2f-2a2a-425a-beb0-56c8e98a18e4',
                  url: 'https://erp.horizontetecnologia.com.br/webhooks/nfse',
                  description: 'ERP: invoice status updates',
                  events: ['nfse.issued', 'nfse.error', 'nfse.cancelled'],
                  active: true,
                  signing: true,
                  secretHint: '…d8Kq',
                  previousSecretExpiresAt: null,
                  createdAt: '2026-11-20T13:20:11.045Z',
                  updatedAt: '2026-11-20T13:20:11.045Z',
                },
              ],
              pagination: { page: 1, limit: 20, total: 1 },
            },
          }),
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      assertValid(request);
      const { projectId } = projectPrincipal(request);
      const { page, limit } = pageOf(request.query);
      const { rows, total } = await listEndpoints(ctx, projectId, { page, limit });
      return { data: rows.map((row) => endpointView(ctx, row)), pagination: { page, limit, total } };
    },
  );
};
