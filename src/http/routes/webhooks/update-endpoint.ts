import { updateEndpoint } from '../../../webhooks/endpoints.ts';
import { requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';
import {
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
        body: UpdateEndpointBody,
        response: { 200: EndpointSchema, ...errorResponses(400, 404) },
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
