import { createEndpoint } from '../../../webhooks/endpoints.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';
import {
  CreatedEndpointSchema,
  CreateEndpointBody,
  endpointView,
  refuseEndpointInput,
  needsScope,
  SIGNING_NOTE,
} from './schemas.ts';

/** POST /webhooks/endpoints: registers an endpoint of the key's project (spec 2.10, 4.5). */
export const createWebhookEndpointRoute: RouteModule = (app, ctx) => {
  app.post(
    '/webhooks/endpoints',
    {
      onRequest: requireProject(ctx, 'emit'),
      attachValidation: true,
      schema: {
        tags: ['webhooks'],
        summary: 'Register a webhook endpoint',
        description: `${needsScope('emit')} 201 with the endpoint; the secret is returned in this response only. 400 VALIDATION_FAILED names the field (url not https, events outside the five names, …); 400 WEBHOOK_URL_REFUSED when the URL does not reach a public internet address. ${SIGNING_NOTE}`,
        body: CreateEndpointBody,
        response: { 201: CreatedEndpointSchema, ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      assertValid(request);
      const { projectId } = projectPrincipal(request);
      const created = await createEndpoint(ctx, projectId, request.body);
      if (!created.ok) refuseEndpointInput(created.error);
      return reply.status(201).send({ ...endpointView(ctx, created.value.row), secret: created.value.secret });
    },
  );
};
