import { findDelivery, retryDelivery } from '../../../webhooks/deliveries.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { DeliverySchema, deliveryView, needsScope } from './schemas.ts';

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
            example: {
              id: 'e398b7cc-a573-4d26-8f1f-d8f77bbabe69',
              endpointId: '86101c2f-2a2a-425a-beb0-56c8e98a18e4',
              eventId: 'a303efac-4891-4407-ba2f-68e4313cb077',
              event: 'nfse.issued',
              status: 'pending',
              attemptCount: 2,
              nextAttemptAt: '2026-11-27T08:10:00.000Z',
              lastStatusCode: 200,
              lastError: null,
              createdAt: '2026-11-26T18:42:15.233Z',
              completedAt: null,
              attempts: [
                {
                  attemptNumber: 1,
                  attemptedAt: '2026-11-26T18:42:15.240Z',
                  success: false,
                  statusCode: 503,
                  durationMs: 212,
                  error: 'HTTP 503',
                  responseSnippet: 'Service Unavailable',
                },
                {
                  attemptNumber: 2,
                  attemptedAt: '2026-11-26T18:43:15.602Z',
                  success: true,
                  statusCode: 200,
                  durationMs: 269,
                  error: null,
                  responseSnippet: '{"received":true}',
                },
              ],
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
