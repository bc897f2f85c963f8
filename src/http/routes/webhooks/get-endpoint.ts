import { requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams } from '../../schemas.ts';
import { ENDPOINT_EXAMPLE, EndpointSchema, endpointView, loadProjectEndpoint, needsScope } from './schemas.ts';

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
            example: ENDPOINT_EXAMPLE,
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => endpointView(ctx, await loadProjectEndpoint(ctx, request)),
  );
};
