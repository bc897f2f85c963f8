import { Type } from 'typebox';
import { EVENT_TYPES } from '../../../events/outbox.ts';
import { listDeliveries, TEST_EVENT } from '../../../webhooks/deliveries.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, pageOf, PageQuery, Pagination } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';
import { DeliverySchema, deliveryView, needsScope } from './schemas.ts';

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
              data: [
                {
                  id: 'e398b7cc-a573-4d26-8f1f-d8f77bbabe69',
                  endpointId: '86101c2f-2a2a-425a-beb0-56c8e98a18e4',
                  eventId: 'a303efac-4891-4407-ba2f-68e4313cb077',
                  event: 'nfse.issued',
                  status: 'succeeded',
                  attemptCount: 2,
                  nextAttemptAt: null,
                  lastStatusCode: 200,
                  lastError: null,
                  createdAt: '2026-11-26T18:42:15.233Z',
                  completedAt: '2026-11-26T18:43:15.871Z',
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
