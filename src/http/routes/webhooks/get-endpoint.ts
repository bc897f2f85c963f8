import { requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams } from '../../schemas.ts';
import { EndpointSchema, endpointView, loadProjectEndpoint, needsScope } from './schemas.ts';

/** GET /webhooks/endpoints/{id}: one endpoint of the project. */
export const getWebhookEndpointRoute: RouteModule = (app, ctx) => {
  app.get(
    '/webhooks/endpoints/:id',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['webhooks'],
        summary: 'Get a webhook endpoint',
        description: `${needsScope('query')} 404 for an unknown or deleted id and for another project's endpoint.`,
        params: IdParams,
        response: {
          200: documented(EndpointSchema, {
            name: 'WebhookEndpoint',
            description: 'The endpoint (its secret is never returned after creation)',
            example: {
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
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => endpointView(ctx, await loadProjectEndpoint(ctx, request)),
  );
};
