import { Type } from 'typebox';
import { listEndpoints } from '../../../webhooks/endpoints.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, pageOf, PageQuery, Pagination } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';
import { ENDPOINT_EXAMPLE, EndpointSchema, endpointView, needsScope } from './schemas.ts';

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
              data: [ENDPOINT_EXAMPLE],
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
