import { Type } from 'typebox';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { deleteEndpoint } from '../../../webhooks/endpoints.ts';
import { needsScope } from './schemas.ts';

/** DELETE /webhooks/endpoints/{id}: removes the endpoint; its pending deliveries end failed. */
export const deleteWebhookEndpointRoute: RouteModule = (app, ctx) => {
  app.delete(
    '/webhooks/endpoints/:id',
    {
      onRequest: requireProject(ctx, 'emit'),
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint',
        description: `${needsScope('emit')} 204 without a body. Its pending deliveries end \`failed\`; its delivery history stays listed.`,
        params: IdParams,
        response: { 204: Type.Null({ description: 'The endpoint is deleted (no body)' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const { projectId } = projectPrincipal(request);
      const { id } = request.params;
      if (!isUuid(id) || !(await deleteEndpoint(ctx, projectId, id))) {
        throw new ApiError('WEBHOOK_ENDPOINT_NOT_FOUND', 'Webhook endpoint not found');
      }
      return reply.status(204).send(null);
    },
  );
};
