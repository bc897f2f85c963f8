import type { EventType } from '../events/outbox.ts';
import { TEST_EVENT } from '../webhooks/deliveries.ts';

/**
 * The `webhooks` section of the OpenAPI document (OpenAPI 3.1): one entry per event the service POSTs to the
 * registered endpoints (spec section 6, the data of src/events/outbox.ts `EventData`, and the test delivery of
 * POST /webhooks/endpoints/{id}/test), each with the envelope and its `data`, and the delivery headers of both
 * signature schemes (src/webhooks/signing.ts). The typed client (packages/client) derives its event types from it.
 */

type JsonSchema = Record<string, unknown>;

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
const str = (description?: string): JsonSchema => ({ type: 'string', ...(description ? { description } : {}) });
const dateTime = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });

const headers = [
  { name: 'X-Svc-Event', description: 'The event name', required: true },
  {
    name: 'X-Svc-Delivery',
    description: 'Unique delivery id (UUID), the same across retries: the idempotency key of the receiver',
    required: true,
  },
  {
    name: 'X-Svc-Signature',
    description:
      '`sha256=` and the lowercase hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the current secret; only when the endpoint has a secret',
    required: false,
  },
  { name: 'webhook-id', description: 'Standard Webhooks: the delivery id (as X-Svc-Delivery)', required: true },
  {
    name: 'webhook-timestamp',
    description: 'Standard Webhooks: Unix seconds of this attempt (signed; refuse deliveries outside a tolerance)',
    required: true,
  },
  {
    name: 'webhook-signature',
    description:
      'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`, one per valid secret (the previous secret too for 24 h after a change); the key is the secret as UTF-8 bytes, or the base64-decoded bytes after the prefix of a `whsec_…` secret. Only when the endpoint has a secret',
    required: false,
  },
].map((h) => ({
  in: 'header',
  name: h.name,
  required: h.required,
  description: h.description,
  schema: { type: 'string' },
}));

function webhook(event: string, summary: string, data: JsonSchema, required: string[]): JsonSchema {
  const operationId = `${event.replace(/[._](\w)/g, (_m, c: string) => c.toUpperCase())}Webhook`;
  return {
    post: {
      operationId,
      summary,
      description:
        'POSTed to every active endpoint subscribed to the event, as `application/json`. Verify a signature over the raw body before parsing it; payloads may gain fields (ignore unknown ones). Retries: after 1 min, 5 min, 30 min and 2 h, then failed.',
      tags: ['webhooks'],
      parameters: headers,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['event', 'deliveryId', 'timestamp', 'data'],
              properties: {
                event: { type: 'string', enum: [event] },
                deliveryId: str('Unique delivery id (UUID), as the X-Svc-Delivery header'),
                timestamp: dateTime('When the event happened (the same across retries)'),
                data: { type: 'object', required, properties: data },
              },
            },
          },
        },
      },
      responses: {
        '200': { description: 'Any 2xx answer within 10 seconds acknowledges the delivery' },
        default: { description: 'Any other answer, a network error or a timeout fails the attempt (retried)' },
      },
    },
  };
}

const invoiceId = str('The invoice id (UUID)');
const referencia = nullable(str("The caller's external identifier of the invoice"));

export const openapiWebhooks: Record<EventType | typeof TEST_EVENT, JsonSchema> = {
  'nfse.issued': webhook(
    'nfse.issued',
    'An invoice was issued',
    {
      invoiceId,
      chNFSe: nullable(str('The national access key; null for a municipal note (known by nNFSe)')),
      nNFSe: str('The NFS-e number'),
      codigoVerificacao: nullable(str('The verification code of a municipal note')),
      referencia,
    },
    ['invoiceId', 'chNFSe', 'nNFSe'],
  ),
  'nfse.error': webhook(
    'nfse.error',
    'Issuing an invoice failed',
    { invoiceId, errorCode: str('Stable error code'), errorMessage: str(), referencia },
    ['invoiceId', 'errorCode', 'errorMessage'],
  ),
  'nfse.cancelled': webhook(
    'nfse.cancelled',
    'An invoice was cancelled',
    {
      invoiceId,
      numeroNfse: nullable(str('The NFS-e number')),
      cancelledAt: dateTime('When the cancellation was registered'),
      cancelXmlUrl: nullable(str('Public URL of the stored cancellation event XML')),
    },
    ['invoiceId', 'numeroNfse', 'cancelledAt', 'cancelXmlUrl'],
  ),
  'nfse.documents_ready': webhook(
    'nfse.documents_ready',
    'The documents of an invoice were stored at their public URLs',
    {
      invoiceId,
      xmlUrl: nullable(str('Public URL of the NFS-e XML')),
      pdfUrl: nullable(str('Public URL of the PDF (null while only the XML is stored, or for engines without one)')),
      cancelXmlUrl: nullable(str('Public URL of the cancellation XML (null for an issued note)')),
      documentStatus: {
        type: 'string',
        enum: ['partial', 'complete'],
        description: 'partial: the XML is ready, the PDF may follow (up to 10 minutes later); complete: every document',
      },
      cachedAt: dateTime('When the documents were stored'),
    },
    ['invoiceId', 'xmlUrl', 'pdfUrl', 'cancelXmlUrl', 'documentStatus', 'cachedAt'],
  ),
  'batch.completed': webhook(
    'batch.completed',
    'Every item of a batch was processed',
    {
      batchId: str('The batch id (UUID)'),
      total: { type: 'integer' },
      issued: { type: 'integer' },
      errors: { type: 'integer' },
    },
    ['batchId', 'total', 'issued', 'errors'],
  ),
  [TEST_EVENT]: webhook(
    TEST_EVENT,
    'A test delivery (POST /webhooks/endpoints/{id}/test)',
    { endpointId: str('The endpoint id (UUID)'), message: str() },
    ['endpointId', 'message'],
  ),
};
