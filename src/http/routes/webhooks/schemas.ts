import type { FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../../../context.ts';
import { EVENT_TYPES } from '../../../events/outbox.ts';
import type { AttemptRow, DeliveryRow } from '../../../webhooks/deliveries.ts';
import { TEST_EVENT } from '../../../webhooks/deliveries.ts';
import { type EndpointRow, findEndpoint, secretHint } from '../../../webhooks/endpoints.ts';
import { projectPrincipal } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import { isUuid, Nullable } from '../../schemas.ts';
import { orNull } from '../org/common.ts';

/** Schemas and views shared by the webhook routes (spec 2.10, 4.5, 6); they are the OpenAPI document. */

const stringEnum = (values: readonly string[], description: string) =>
  Type.Unsafe<string>({ type: 'string', enum: [...values], description });

export const EventName = stringEnum(EVENT_TYPES, 'An event of spec section 6');

/** The opening of each route's description: the project key scope it needs (management `emit`, reading `query`). */
export const needsScope = (scope: 'emit' | 'query') => `Needs the project key scope \`${scope}\`.`;

export const SIGNING_NOTE =
  'Signing: with a secret, each delivery carries `X-Svc-Signature: sha256=<hex HMAC-SHA256 of the raw body>` (key: the secret as UTF-8 bytes) and the Standard Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` (key: the secret as UTF-8 bytes, or the base64-decoded bytes after the prefix of a `whsec_…` secret). After a secret change the previous secret signs too, for 24 hours: `webhook-signature` then carries two space-separated signatures (`X-Svc-Signature` always uses the current secret). `secret` null or "" removes signing.';

const url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'HTTPS URL reached by POST. Refused: plain http, credentials in the URL, and hosts that are or resolve to loopback, private, link-local, CGNAT, multicast, reserved or cloud-metadata addresses (checked again at every attempt).',
});
const events = Type.Array(EventName, {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  description: 'Event names to receive (a subset of the five of spec section 6)',
});
const secret = orNull(
  Type.String({
    maxLength: 256,
    description:
      'HMAC key (any string; 32+ random characters recommended, or a Standard Webhooks `whsec_<base64>` secret). null or "" removes signing. Never returned after creation.',
  }),
);
const description = orNull(Type.String({ maxLength: 255, description: 'Free text for your own reference' }));

export const CreateEndpointBody = Type.Object(
  {
    url,
    events,
    secret: Type.Optional(secret),
    active: Type.Optional(Type.Boolean({ default: true, description: 'Deliveries are made only to active endpoints' })),
    description: Type.Optional(description),
  },
  { additionalProperties: false },
);

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    secret: Type.Optional(secret),
    active: Type.Optional(Type.Boolean()),
    description: Type.Optional(description),
  },
  { additionalProperties: false },
);

const dateTime = (description: string) => Type.String({ format: 'date-time', description });

export const EndpointSchema = Type.Object(
  {
    id: Type.String({ description: 'Endpoint id (UUID)' }),
    url: Type.String(),
    description: Nullable(Type.String()),
    events: Type.Array(EventName),
    active: Type.Boolean(),
    signing: Type.Boolean({ description: 'A secret is set: deliveries are signed' }),
    secretHint: Nullable(Type.String({ description: 'The last 4 characters of a secret of 16+ characters, masked' })),
    previousSecretExpiresAt: Nullable(
      dateTime('After a secret change: until when the previous secret also signs (webhook-signature)'),
    ),
    createdAt: dateTime('Creation time'),
    updatedAt: dateTime('Last change'),
  },
  // the title names it in the OpenAPI document wherever it stands (lists, the created endpoint, …)
  { title: 'WebhookEndpoint', description: 'A webhook endpoint (the secret itself is never returned after creation)' },
);

/** The endpoint the OpenAPI examples show (get, list; create and update vary it). */
export const ENDPOINT_EXAMPLE: Static<typeof EndpointSchema> = {
  id: '86101c2f-2a2a-425a-beb0-56c8e98a18e4',
  url: 'https://erp.horizontetecnologia.com.br/webhooks/nfse',
  description: 'ERP: invoice status updates',
  events: ['nfse.issued', 'nfse.error', 'nfse.cancelled'],
  active: true,
  signing: true,
  secretHint: '…d8Kq',
  previousSecretExpiresAt: null,
  createdAt: '2026-11-20T13:20:11.045Z',
  updatedAt: '2026-11-20T13:20:11.045Z',
};

export const CreatedEndpointSchema = Type.Intersect([
  EndpointSchema,
  Type.Object({
    secret: Nullable(Type.String({ description: 'The secret as registered: shown only in this response' })),
  }),
]);

export const DeliveryStatus = stringEnum(
  ['pending', 'succeeded', 'failed'],
  'pending: an attempt is due or scheduled; succeeded: a 2xx answer; failed: 5 failed attempts (or the endpoint was deleted/disabled)',
);

const AttemptSchema = Type.Object({
  attemptNumber: Type.Integer({ description: '1 to 5 on the automatic schedule; manual retries go on counting' }),
  attemptedAt: dateTime('When the attempt started'),
  success: Type.Boolean({ description: 'A 2xx answer' }),
  statusCode: Nullable(Type.Integer({ description: "The receiver's HTTP status (null: no answer)" })),
  durationMs: Type.Integer(),
  error: Nullable(
    Type.String({ description: 'Why the attempt failed: HTTP status, network error, timeout, redirect, refused URL' }),
  ),
  responseSnippet: Nullable(Type.String({ description: 'The first 1 KB of the answer' })),
});

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'Delivery id: the X-Svc-Delivery and webhook-id of every attempt (UUID)' }),
    endpointId: Type.String(),
    eventId: Nullable(Type.String({ description: 'The outbox event (null for a test delivery)' })),
    event: stringEnum([...EVENT_TYPES, TEST_EVENT], 'Event name (X-Svc-Event)'),
    status: DeliveryStatus,
    attemptCount: Type.Integer(),
    nextAttemptAt: Nullable(dateTime('When the next attempt is due (pending only)')),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    createdAt: dateTime('Creation time (the first attempt is due then)'),
    completedAt: Nullable(dateTime('When it succeeded or failed')),
    attempts: Type.Array(AttemptSchema, { description: 'Every attempt, oldest first' }),
  },
  { title: 'WebhookDelivery', description: 'One event delivered to one endpoint, with its attempts' },
);

/** The delivery the OpenAPI examples show: succeeded at its second attempt (get, list; retry varies it). */
export const DELIVERY_EXAMPLE: Static<typeof DeliverySchema> = {
  id: 'e398b7cc-a573-4d26-8f1f-d8f77bbabe69',
  endpointId: ENDPOINT_EXAMPLE.id,
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
};

export const DeliveryDetailSchema = Type.Intersect([
  DeliverySchema,
  Type.Object({ body: Type.String({ description: 'The exact JSON body sent on every attempt' }) }),
]);

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function endpointView(ctx: AppContext, row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    active: row.active,
    signing: row.secret !== null,
    secretHint: secretHint(ctx, row),
    previousSecretExpiresAt:
      row.previousSecret && row.previousSecretExpiresAt && row.previousSecretExpiresAt > ctx.now()
        ? row.previousSecretExpiresAt.toISOString()
        : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function attemptView(row: AttemptRow) {
  return {
    attemptNumber: row.attemptNumber,
    attemptedAt: row.attemptedAt.toISOString(),
    success: row.statusCode !== null && row.statusCode >= 200 && row.statusCode < 300 && row.error === null,
    statusCode: row.statusCode,
    durationMs: row.durationMs,
    error: row.error,
    responseSnippet: row.responseSnippet,
  };
}

export function deliveryView(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    event: row.eventType,
    status: row.status,
    attemptCount: row.attemptCount,
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    completedAt: iso(row.completedAt),
    attempts: attempts.map(attemptView),
  };
}

/** The endpoint named by `:id` within the caller's project; 404 for any other (or malformed) id. */
export async function loadProjectEndpoint(ctx: AppContext, request: FastifyRequest): Promise<EndpointRow> {
  const { projectId } = projectPrincipal(request);
  const id = (request.params as { id?: string }).id ?? '';
  const row = isUuid(id) ? await findEndpoint(ctx, projectId, id) : null;
  if (!row) throw new ApiError('WEBHOOK_ENDPOINT_NOT_FOUND', 'Webhook endpoint not found');
  return row;
}

/** The 400 of a refused endpoint input, naming the field. */
export function refuseEndpointInput(error: {
  code: 'VALIDATION_FAILED' | 'WEBHOOK_URL_REFUSED';
  field: string;
  message: string;
}): never {
  throw new ApiError(error.code, `${error.field} ${error.message}`, [{ field: error.field, message: error.message }]);
}
