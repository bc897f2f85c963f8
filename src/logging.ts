import pino from 'pino';

/**
 * The service's logger. Logs never carry request bodies or personal data: the fields that hold them are redacted
 * wherever they appear (two levels deep and under `body`, `data`, `request`), request bodies and credentials are
 * never serialized, and error messages are scrubbed of the values a database driver puts in them (query
 * parameters, `Key (cnpj)=(…)` details) and of anything shaped like a CPF, CNPJ or e-mail address.
 */
const PERSONAL_FIELDS = [
  'cnpj',
  'cpf',
  'nome',
  'name',
  'razaoSocial',
  'nomeFantasia',
  'email',
  'telefone',
  'phone',
  'endereco',
  'address',
  'logradouro',
  'cep',
  'password',
  'senha',
  'secret',
  'key',
  'apiKey',
  'token',
  'tomador',
  'prestador',
  'intermediario',
  'body',
  'rawBody',
  'params',
  'query',
  'detail',
];

const SECRET_HEADERS = ['authorization', 'x-api-key', 'cookie', 'set-cookie', 'webhook-signature', 'x-svc-signature'];

export const LOG_REDACT_PATHS: string[] = [
  ...PERSONAL_FIELDS,
  ...PERSONAL_FIELDS.map((f) => `*.${f}`),
  ...PERSONAL_FIELDS.map((f) => `*.*.${f}`),
  ...SECRET_HEADERS.map((h) => `req.headers["${h}"]`),
  ...SECRET_HEADERS.map((h) => `headers["${h}"]`),
];

const CNPJ_LIKE = /\b\d{2}\.?\d{3}\.?\d{3}\/?\d{4}-?\d{2}\b|\b[0-9A-Z]{12}\d{2}\b/g;
const CPF_LIKE = /\b\d{3}\.?\d{3}\.?\d{3}-?\d{2}\b/g;
const EMAIL_LIKE = /[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[A-Za-z]{2,}/g;
const KEY_LIKE = /\bsvc_[A-Za-z0-9_-]{8,}/g;

/** Removes the personal values a message may carry (driver parameters and details, tax ids, e-mails, keys). */
export function scrubText(text: string): string {
  return text
    .replace(/params: .*/g, 'params: [redacted]')
    .replace(/\(([^()]*)\)=\(([^()]*)\)/g, '($1)=([redacted])')
    .replace(KEY_LIKE, '[redacted key]')
    .replace(EMAIL_LIKE, '[redacted e-mail]')
    .replace(CNPJ_LIKE, '[redacted id]')
    .replace(CPF_LIKE, '[redacted id]');
}

function scrubError(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error) || depth > 3) return value;
  const out = pino.stdSerializers.err(value) as unknown as Record<string, unknown>;
  for (const field of ['message', 'stack']) {
    if (typeof out[field] === 'string') out[field] = scrubText(out[field] as string);
  }
  // drivers attach the statement and its values; a PostgreSQL error its detail and row
  for (const field of ['query', 'params', 'detail', 'where', 'parameters']) delete out[field];
  if (value.cause) out.cause = scrubError(value.cause, depth + 1);
  return out;
}

export function createLogger(level: string, destination?: pino.DestinationStream): pino.Logger {
  return pino(
    {
      level,
      base: { service: 'nfse' },
      redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        err: scrubError,
        error: scrubError,
        // the request line: method, path (without its query: it may carry identifiers), request id
        req: (req: { method?: string; url?: string; id?: string }) => ({
          method: req.method,
          url: typeof req.url === 'string' ? req.url.split('?')[0] : req.url,
          id: req.id,
        }),
      },
      hooks: {
        // free-text messages are scrubbed too (interpolated values never reach the output)
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubText(a) : a)) as typeof args;
          return method.apply(this, scrubbed);
        },
      },
    },
    destination,
  );
}
