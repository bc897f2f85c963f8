import { findDelivery } from '../../../webhooks/deliveries.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { DeliveryDetailSchema, deliveryView, needsScope } from './schemas.ts';

/** GET /webhooks/deliveries/{id}: one delivery with its attempts and the exact body sent. */
export const getWebhookDeliveryRoute: RouteModule = (app, ctx) => {
  app.get(
    '/webhooks/deliveries/:id',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['webhooks'],
        summary: 'Get a webhook delivery',
        description: `${needsScope('query')} 404 for an unknown id and for another project's delivery.`,
        params: IdParams,
        response: { 200: DeliveryDetailSchema, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { projectId } = projectPrincipal(request);
      const { id } = request.params;
      const found = isUuid(id) ? await findDelivery(ctx, projectId, id) : null;
      if (!found) throw new ApiError('WEBHOOK_DELIVERY_NOT_FOUND', 'Webhook delivery not found');
      return { ...deliveryView(found.delivery, found.attempts), body: found.delivery.body };
    },
  );
};
