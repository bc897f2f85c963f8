import { Type } from 'typebox';
import { EVENT_TYPES } from '../../../events/outbox.ts';
import { listDeliveries, TEST_EVENT } from '../../../webhooks/deliveries.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, pageOf, PageQuery, Pagination } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';
import { DELIVERY_EXAMPLE, DeliverySchema, deliveryView, needsScope } from './schemas.ts';

/** GET /webhooks/deliveries: the delivery history with status and attempts (spec 4.5). */
export const listWebhookDeliveriesRoute: RouteModule = (app, ctx) => {
  app.get(
    '/webhooks/deliveries',
    {
      onRequest: requireProject(ctx, 'query'),
      attachValidation: true,
      schema: {
        tags: ['webhooks'],
        summary: 'List webhook deliveries',
        description: `${needsScope('query')} Newest first, each with its attempts; filters combine. Deliveries of deleted endpoints stay listed.`,
        querystring: Type.Object({
          endpointId: Type.Optional(Type.String({ format: 'uuid', description: 'Only this endpoint' })),
          event: Type.Optional(
            Type.Unsafe<string>({
              type: 'string',
              enum: [...EVENT_TYPES, TEST_EVENT],
              description: 'Only this event name',
            }),
          ),
          status: Type.Optional(
            Type.Unsafe<string>({
              type: 'string',
              enum: ['pending', 'succeeded', 'failed'],
              description: 'Only this status',
            }),
          ),
          ...PageQuery,
        }),
        response: {
          200: documented(Type.Object({ data: Type.Array(DeliverySchema), pagination: Pagination }), {
            name: 'WebhookDeliveryList',
            description: 'One page of deliveries, newest first, each with its attempts',
            example: {
              data: [DELIVERY_EXAMPLE],
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
      const { endpointId, event, status } = request.query;
      const { page, limit } = pageOf(request.query);
      const { rows, total } = await listDeliveries(ctx, projectId, { endpointId, event, status }, { page, limit });
      return {
        data: rows.map((r) => deliveryView(r.delivery, r.attempts)),
        pagination: { page, limit, total },
      };
    },
  );
};
