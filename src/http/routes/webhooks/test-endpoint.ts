import { Type } from 'typebox';
import { findDelivery, sendTestDelivery } from '../../../webhooks/deliveries.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams, Nullable } from '../../schemas.ts';
import {
  DeliverySchema,
  ENDPOINT_EXAMPLE,
  deliveryView,
  loadProjectEndpoint,
  needsScope,
  SIGNING_NOTE,
} from './schemas.ts';

/** POST /webhooks/endpoints/{id}/test: one signed `webhook.test` attempt, answered with its outcome. */
export const testWebhookEndpointRoute: RouteModule = (app, ctx) => {
  app.post(
    '/webhooks/endpoints/:id/test',
    {
      onRequest: requireProject(ctx, 'emit'),
      schema: {
        tags: ['webhooks'],
        summary: 'Send a test delivery',
        description: `${needsScope('emit')} Sends, once and right away (no retries), the event \`webhook.test\` with the envelope of spec 6 and data \`{endpointId, message}\`, signed like any delivery, and answers 200 with the outcome (success is false for a non-2xx answer, a network error, a refused address or no answer within 10 s). The delivery is kept in the history. An inactive endpoint is not called: 409 WEBHOOK_ENDPOINT_INACTIVE (activate it with PATCH first). ${SIGNING_NOTE}`,
        params: IdParams,
        response: {
          200: documented(
            Type.Object({
              success: Type.Boolean({ description: 'The endpoint answered 2xx within 10 s' }),
              statusCode: Nullable(Type.Integer()),
              durationMs: Nullable(Type.Integer()),
              error: Nullable(Type.String()),
              responseSnippet: Nullable(Type.String({ description: 'The first 1 KB of the answer' })),
              delivery: DeliverySchema,
            }),
            {
              name: 'WebhookTestResult',
              description: 'The outcome of the test delivery (success false for a non-2xx answer or no answer)',
              example: {
                success: true,
                statusCode: 200,
                durationMs: 184,
                error: null,
                responseSnippet: '{"received":true}',
                delivery: {
                  id: '5e9cf4ff-6281-4775-9592-9af3ce5fb531',
                  endpointId: ENDPOINT_EXAMPLE.id,
                  eventId: null,
                  event: 'webhook.test',
                  status: 'succeeded',
                  attemptCount: 1,
                  nextAttemptAt: null,
                  lastStatusCode: 200,
                  lastError: null,
                  createdAt: '2026-11-20T13:21:02.101Z',
                  completedAt: '2026-11-20T13:21:02.298Z',
                  attempts: [
                    {
                      attemptNumber: 1,
                      attemptedAt: '2026-11-20T13:21:02.114Z',
                      success: true,
                      statusCode: 200,
                      durationMs: 184,
                      error: null,
                      responseSnippet: '{"received":true}',
                    },
                  ],
                },
              },
            },
          ),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const endpoint = await loadProjectEndpoint(ctx, request);
      if (!endpoint.active) {
        throw new ApiError(
          'WEBHOOK_ENDPOINT_INACTIVE',
          'The endpoint is inactive: activate it (PATCH active: true) before sending a test',
        );
      }
      const { projectId } = projectPrincipal(request);
      const { delivery, outcome } = await sendTestDelivery(ctx, endpoint);
      const recorded = await findDelivery(ctx, projectId, delivery.id);
      return {
        success: outcome?.ok ?? false,
        statusCode: outcome?.statusCode ?? null,
        durationMs: outcome?.durationMs ?? null,
        error: outcome ? outcome.error : delivery.lastError,
        responseSnippet: outcome?.responseSnippet ?? null,
        delivery: deliveryView(recorded!.delivery, recorded!.attempts),
      };
    },
  );
};
