import { findDelivery, retryDelivery } from '../../../webhooks/deliveries.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { DELIVERY_EXAMPLE, DeliverySchema, deliveryView, needsScope } from './schemas.ts';

/** POST /webhooks/deliveries/{id}/retry: manual redelivery (one more attempt, same id and body). */
export const retryWebhookDeliveryRoute: RouteModule = (app, ctx) => {
  app.post(
    '/webhooks/deliveries/:id/retry',
    {
      onRequest: requireProject(ctx, 'emit'),
      schema: {
        tags: ['webhooks'],
        summary: 'Retry a webhook delivery',
        description: `${needsScope('emit')} For a succeeded or failed delivery: one more attempt, made at once by a worker, with the same delivery id (X-Svc-Delivery) and the same body, signed with the endpoint's current secret; if it fails the delivery is failed again (no new schedule). 202 with the delivery, now pending. 409 WEBHOOK_DELIVERY_NOT_RETRYABLE while the delivery is still pending (see nextAttemptAt) or when its endpoint was deleted.`,
        params: IdParams,
        response: {
          202: documented(DeliverySchema, {
            name: 'WebhookDelivery',
            description: 'The retry is accepted: the delivery is pending until a worker makes the attempt',
            // the delivery of the other examples, retried: pending until the worker's attempt
            example: {
              ...DELIVERY_EXAMPLE,
              status: 'pending',
              nextAttemptAt: '2026-11-27T08:10:00.000Z',
              completedAt: null,
            },
          }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request, reply) => {
      const { projectId } = projectPrincipal(request);
      const { id } = request.params;
      const result = isUuid(id)
        ? await retryDelivery(ctx, projectId, id)
        : ({ ok: false, error: 'not_found' } as const);
      if (!result.ok) {
        if (result.error === 'not_found')
          throw new ApiError('WEBHOOK_DELIVERY_NOT_FOUND', 'Webhook delivery not found');
        throw new ApiError(
          'WEBHOOK_DELIVERY_NOT_RETRYABLE',
          result.error === 'pending'
            ? 'The delivery is still pending: its next attempt is already scheduled'
            : 'The endpoint of this delivery was deleted',
        );
      }
      const found = await findDelivery(ctx, projectId, id);
      return reply.status(202).send(deliveryView(found!.delivery, found!.attempts));
    },
  );
};
