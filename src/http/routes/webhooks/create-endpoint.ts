import { createEndpoint } from '../../../webhooks/endpoints.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';
import {
  CreatedEndpointSchema,
  CreateEndpointBody,
  ENDPOINT_EXAMPLE,
  endpointView,
  refuseEndpointInput,
  needsScope,
  SIGNING_NOTE,
} from './schemas.ts';

/** The secret of the examples: `secretHint` of ENDPOINT_EXAMPLE shows its last 4 characters. */
const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3Y8Gd8Kq';

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
        body: documentedBody(CreateEndpointBody, {
          name: 'CreateWebhookEndpointRequest',
          description: 'The HTTPS URL, the events and the signing secret',
          example: {
            url: ENDPOINT_EXAMPLE.url,
            events: ENDPOINT_EXAMPLE.events,
            secret: SECRET_EXAMPLE,
            description: ENDPOINT_EXAMPLE.description,
          },
        }),
        response: {
          201: documented(CreatedEndpointSchema, {
            name: 'WebhookEndpointCreated',
            description: 'The endpoint; its secret is shown only in this response',
            example: { ...ENDPOINT_EXAMPLE, secret: SECRET_EXAMPLE },
          }),
          ...errorResponses(400),
        },
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
