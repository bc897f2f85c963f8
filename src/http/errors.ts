/**
 * The one error catalogue. Every 4xx/5xx body is RFC 9457 problem+json:
 * `{ type, title, status, detail, code, errors: [{ field, message }], requestId, ...extras }`.
 * Codes are stable; add new ones here (the OpenAPI document lists them).
 */
export const ERROR_CATALOGUE = {
  VALIDATION_FAILED: { status: 400, title: 'The request is invalid' },
  MALFORMED_JSON: { status: 400, title: 'The body is not valid JSON' },
  MALFORMED_REQUEST: { status: 400, title: 'The HTTP request is malformed' },
  REQUEST_TIMEOUT: { status: 408, title: 'The request was not received in time' },
  URI_TOO_LONG: { status: 414, title: 'The URL or one of its path parameters is too long' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported content type' },
  INVALID_CNPJ: { status: 400, title: 'Invalid CNPJ' },
  INVALID_CPF: { status: 400, title: 'Invalid CPF' },
  UNKNOWN_MUNICIPALITY: { status: 400, title: 'Unknown IBGE municipality code' },
  INVALID_STORAGE_BASE_URL: { status: 400, title: 'Invalid storage base URL' },
  CERTIFICATE_MISSING_FILE: { status: 400, title: 'The certificate file is missing' },
  CERTIFICATE_MISSING_PASSWORD: { status: 400, title: 'The certificate password is missing' },
  CERTIFICATE_NOT_PKCS12: { status: 400, title: 'The file is not a PKCS#12 certificate' },
  CERTIFICATE_WRONG_PASSWORD: { status: 400, title: 'Wrong certificate password' },
  CERTIFICATE_NO_PRIVATE_KEY: { status: 400, title: 'The certificate has no private key' },
  CERTIFICATE_EXPIRED: { status: 400, title: 'The certificate has expired' },
  CERTIFICATE_NOT_YET_VALID: { status: 400, title: 'The certificate is not valid yet' },
  CERTIFICATE_CNPJ_MISMATCH: { status: 400, title: "The certificate does not belong to the project's company" },
  LOGO_MISSING_FILE: { status: 400, title: 'The logo file is missing' },
  LOGO_UNSUPPORTED_FORMAT: { status: 400, title: 'The logo must be PNG, JPEG or WebP' },
  LOGO_INVALID_IMAGE: { status: 400, title: 'The logo is truncated or not a well-formed image' },
  IBSCBS_FRAMING_AMBIGUOUS: { status: 400, title: 'The IBS/CBS framing is ambiguous' },
  INVALID_IBSCBS_FRAMING: { status: 400, title: 'Invalid IBS/CBS framing' },
  INVALID_QUERY: { status: 400, title: 'Invalid query parameters' },
  MUNICIPAL_BREAKDOWN_INVALID: {
    status: 400,
    title: "The municipal breakdown (cTribMun) is not in the municipality's table",
  },
  ISS_RATE_MISMATCH: { status: 400, title: "The ISS rate differs from the municipality's parametrised rate" },
  WEBHOOK_URL_REFUSED: { status: 400, title: 'The webhook URL does not reach a public internet address' },
  UNAUTHENTICATED: { status: 401, title: 'Missing or invalid API key' },
  DASHBOARD_SIGN_IN_FAILED: { status: 401, title: 'Wrong e-mail or password' },
  DASHBOARD_SESSION_REQUIRED: { status: 401, title: 'Sign in to the dashboard' },
  PAYMENT_REQUIRED_CREDITS_EXHAUSTED: { status: 402, title: "The plan's credits are exhausted" },
  WRONG_KEY_KIND: { status: 403, title: 'This kind of key cannot use this route' },
  CSRF_TOKEN_INVALID: { status: 403, title: 'The CSRF token or the request origin is not valid' },
  INSUFFICIENT_SCOPE: { status: 403, title: 'The key lacks the scope this route needs' },
  PLAN_PROJECT_LIMIT: { status: 403, title: "The plan's project limit is reached" },
  PLAN_LOGO_NOT_ALLOWED: { status: 403, title: 'Custom-logo DANFSe templates need the Pro plan or higher' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  PROJECT_NOT_FOUND: { status: 404, title: 'Project not found' },
  MUNICIPALITY_NOT_FOUND: { status: 404, title: 'Unknown municipality' },
  INVOICE_NOT_FOUND: { status: 404, title: 'Invoice not found' },
  BATCH_NOT_FOUND: { status: 404, title: 'Batch not found' },
  XML_NOT_AVAILABLE: { status: 404, title: 'XML not available for this invoice' },
  WEBHOOK_ENDPOINT_NOT_FOUND: { status: 404, title: 'Webhook endpoint not found' },
  WEBHOOK_DELIVERY_NOT_FOUND: { status: 404, title: 'Webhook delivery not found' },
  ROUTE_NOT_FOUND: { status: 404, title: 'Route not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  API_KEY_LIMIT_REACHED: { status: 409, title: 'The project already has the maximum number of active API keys' },
  CNPJ_ALREADY_REGISTERED: { status: 409, title: 'The CNPJ is already registered in the organization' },
  MEMBER_EMAIL_TAKEN: { status: 409, title: 'A member with this e-mail already exists' },
  WEBHOOK_ENDPOINT_INACTIVE: { status: 409, title: 'The webhook endpoint is inactive' },
  WEBHOOK_DELIVERY_NOT_RETRYABLE: { status: 409, title: 'The webhook delivery cannot be retried now' },
  PROJECT_CERTIFICATE_REQUIRED: {
    status: 409,
    title: "The government service needs the project's A1 certificate (mutual TLS)",
  },
  INVOICE_NOT_ISSUED: { status: 409, title: 'The invoice is not issued' },
  INVOICE_NOT_CANCELLED: { status: 409, title: 'The invoice is not cancelled' },
  INVOICE_CANCELLATION_IN_PROGRESS: { status: 409, title: 'A cancellation is already in progress' },
  INVOICE_ALREADY_CANCELLED: { status: 409, title: 'The invoice is already cancelled' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, title: 'The Idempotency-Key was used with a different body' },
  IDEMPOTENCY_KEY_IN_PROGRESS: { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'The body or file is too large' },
  ENGINE_NOT_AVAILABLE: {
    status: 422,
    title: "No engine this service implements can issue for the project's municipality and regime",
  },
  PDF_UNAVAILABLE: { status: 422, title: 'The PDF cannot be produced for this invoice' },
  PROJECT_CERTIFICATE_MISSING: { status: 422, title: 'The project has no A1 certificate' },
  PROJECT_CERTIFICATE_EXPIRED: { status: 422, title: "The project's A1 certificate has expired" },
  RATE_LIMITED: { status: 429, title: 'Rate limit exceeded' },
  REQUEST_HEADERS_TOO_LARGE: { status: 431, title: 'The request headers are too large' },
  INTERNAL_ERROR: { status: 500, title: 'Internal error' },
  PDF_NOT_SUPPORTED: { status: 501, title: 'The municipal system does not support PDF download' },
  PORTAL_ERROR: { status: 502, title: 'The external portal returned an error' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface FieldError {
  field: string;
  message: string;
}

/** The only exception type of the HTTP edge: thrown by handlers, rendered by the error handler. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    detail?: string,
    readonly errors: FieldError[] = [],
    readonly extras: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? ERROR_CATALOGUE[code].title);
    this.status = ERROR_CATALOGUE[code].status;
  }
}

export function problemBody(
  code: ErrorCode,
  detail: string,
  requestId: string,
  errors: FieldError[] = [],
  extras: Record<string, unknown> = {},
) {
  const entry = ERROR_CATALOGUE[code];
  return {
    type: `https://nfse-service.dev/errors/${code.toLowerCase().replace(/_/g, '-')}`,
    title: entry.title,
    status: entry.status,
    detail,
    code,
    errors,
    requestId,
    ...extras,
  };
}

export const notFound = (what: 'project' | 'invoice' | 'batch' | 'other' = 'other') =>
  new ApiError(
    what === 'project'
      ? 'PROJECT_NOT_FOUND'
      : what === 'invoice'
        ? 'INVOICE_NOT_FOUND'
        : what === 'batch'
          ? 'BATCH_NOT_FOUND'
          : 'NOT_FOUND',
  );
