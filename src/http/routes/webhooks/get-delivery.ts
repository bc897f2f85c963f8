import { findDelivery } from '../../../webhooks/deliveries.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { DELIVERY_EXAMPLE, DeliveryDetailSchema, deliveryView, needsScope } from './schemas.ts';

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
        response: {
          200: documented(DeliveryDetailSchema, {
            name: 'WebhookDeliveryDetail',
            description: 'The delivery, its attempts and the exact body sent',
            example: {
              ...DELIVERY_EXAMPLE,
              body: '{"event":"nfse.issued","deliveryId":"e398b7cc-a573-4d26-8f1f-d8f77bbabe69","timestamp":"2026-11-26T18:42:15.208Z","data":{"invoiceId":"ec96b9b1-e89f-46f6-8351-644687a97c27","chNFSe":"41069022211222333000181000000000134326114839201750","nNFSe":"1343","codigoVerificacao":null,"referencia":"PED-2026-004518"}}',
            },
          }),
          ...errorResponses(404),
        },
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
