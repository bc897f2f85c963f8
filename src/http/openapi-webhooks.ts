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

/** One delivery's envelope around `data` (the ids and time of the examples are those of the route examples). */
const envelope = (event: string, data: Record<string, unknown>, timestamp: string) => ({
  event,
  deliveryId: 'e398b7cc-a573-4d26-8f1f-d8f77bbabe69',
  timestamp,
  data,
});

function webhook(
  event: string,
  summary: string,
  data: JsonSchema,
  required: string[],
  example: { data: Record<string, unknown>; timestamp: string },
): JsonSchema {
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
            example: envelope(event, example.data, example.timestamp),
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
    {
      timestamp: '2026-11-26T18:42:15.208Z',
      data: {
        invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
        chNFSe: '41069022211222333000181000000000134326114839201750',
        nNFSe: '1343',
        codigoVerificacao: null,
        referencia: 'PED-2026-004518',
      },
    },
  ),
  'nfse.error': webhook(
    'nfse.error',
    'Issuing an invoice failed',
    { invoiceId, errorCode: str('Stable error code'), errorMessage: str(), referencia },
    ['invoiceId', 'errorCode', 'errorMessage'],
    {
      timestamp: '2026-11-26T18:42:24.880Z',
      data: {
        invoiceId: '088f8ce1-dd9c-46b0-8b29-3de5045cfa89',
        errorCode: 'E0207',
        errorMessage: 'CPF do tomador não encontrado no cadastro CPF.',
        referencia: 'OS-88412',
      },
    },
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
    {
      timestamp: '2026-11-27T11:05:51.730Z',
      data: {
        invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
        numeroNfse: '1343',
        cancelledAt: '2026-11-27T11:05:49.000Z',
        cancelXmlUrl: null,
      },
    },
  ),
  'nfse.documents_ready': webhook(
    'nfse.documents_ready',
    'The documents of an invoice were stored at their public URLs: once, complete, with the XML and the PDF; or, ' +
      'when the PDF cannot be stored with the XML, partial with the XML and then complete with the PDF (at most ' +
      'two per invoice; none for the watermarked PDF of a cancellation)',
    {
      invoiceId,
      xmlUrl: nullable(str('Public URL of the NFS-e XML')),
      pdfUrl: nullable(str('Public URL of the PDF (null while only the XML is stored, or for engines without one)')),
      cancelXmlUrl: nullable(str('Public URL of the cancellation XML (null for an issued note)')),
      documentStatus: {
        type: 'string',
        enum: ['partial', 'complete'],
        description:
          'partial: the XML is ready, the PDF could not be stored with it and may follow (up to 10 minutes later); ' +
          'complete: every document',
      },
      cachedAt: dateTime('When the documents were stored'),
    },
    ['invoiceId', 'xmlUrl', 'pdfUrl', 'cancelXmlUrl', 'documentStatus', 'cachedAt'],
    {
      timestamp: '2026-11-26T18:42:21.904Z',
      data: {
        invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
        xmlUrl:
          'https://notas.horizontetecnologia.com.br/p/a408dbd1-361b-4349-ae99-111df8564c37/9c1d7e4b2a6f48d0b3e5a7c9d1f20486/nfse.xml',
        pdfUrl:
          'https://notas.horizontetecnologia.com.br/p/a408dbd1-361b-4349-ae99-111df8564c37/9c1d7e4b2a6f48d0b3e5a7c9d1f20486/danfse.pdf',
        cancelXmlUrl: null,
        documentStatus: 'complete',
        cachedAt: '2026-11-26T18:42:21.904Z',
      },
    },
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
    {
      timestamp: '2026-11-26T18:42:24.880Z',
      data: { batchId: '521b67b2-e53d-4617-b9bd-f27d083e6bab', total: 2, issued: 1, errors: 1 },
    },
  ),
  [TEST_EVENT]: webhook(
    TEST_EVENT,
    'A test delivery (POST /webhooks/endpoints/{id}/test)',
    { endpointId: str('The endpoint id (UUID)'), message: str() },
    ['endpointId', 'message'],
    {
      timestamp: '2026-11-20T13:21:02.101Z',
      data: {
        endpointId: '86101c2f-2a2a-425a-beb0-56c8e98a18e4',
        message: 'Test delivery from the NFS-e service',
      },
    },
  ),
};
