import { updateEndpoint } from '../../../webhooks/endpoints.ts';
import { requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';
import {
  ENDPOINT_EXAMPLE,
  EndpointSchema,
  endpointView,
  loadProjectEndpoint,
  refuseEndpointInput,
  needsScope,
  SIGNING_NOTE,
  UpdateEndpointBody,
} from './schemas.ts';

/** PATCH /webhooks/endpoints/{id}: url, events, active, secret (rotation), description. */
export const updateWebhookEndpointRoute: RouteModule = (app, ctx) => {
  app.patch(
    '/webhooks/endpoints/:id',
    {
      onRequest: requireProject(ctx, 'emit'),
      attachValidation: true,
      schema: {
        tags: ['webhooks'],
        summary: 'Update a webhook endpoint',
        description: `${needsScope('emit')} Any subset of url, events, active, secret, description. A new secret rotates it: the previous one keeps signing (webhook-signature) for 24 hours. Pending deliveries use the endpoint as it is at each attempt. ${SIGNING_NOTE}`,
        params: IdParams,
        body: documentedBody(UpdateEndpointBody, {
          name: 'UpdateWebhookEndpointRequest',
          description: 'The endpoint fields to change',
          example: { events: ['nfse.issued', 'nfse.error', 'nfse.cancelled', 'nfse.documents_ready'] },
        }),
        response: {
          200: documented(EndpointSchema, {
            name: 'WebhookEndpoint',
            description: 'The endpoint as updated',
            example: {
              ...ENDPOINT_EXAMPLE,
              events: ['nfse.issued', 'nfse.error', 'nfse.cancelled', 'nfse.documents_ready'],
              updatedAt: '2026-11-24T09:48:30.512Z',
            },
          }),
          ...errorResponses(400, 404),
        },
      },
    },
    async (request) => {
      const row = await loadProjectEndpoint(ctx, request);
      assertValid(request);
      const updated = await updateEndpoint(ctx, row, request.body);
      if (!updated.ok) refuseEndpointInput(updated.error);
      return endpointView(ctx, updated.value);
    },
  );
};
