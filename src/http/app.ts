import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyError, type FastifyServerOptions } from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError, type ErrorCode, type FieldError, problemBody } from './errors.ts';
import { type AjvError, fieldErrors } from './field-errors.ts';
import { assertStorableText } from './input-text.ts';
import { type LazyCompilers, lazyCompilers } from './lazy-compilers.ts';
import type { App } from './route.ts';
import { openapiWebhooks } from './openapi-webhooks.ts';
import { withNamedSchemas } from './openapi-components.ts';
import { registerRoutes } from './routes/index.ts';
import { Problem } from './schemas.ts';
import { foregroundRequest } from '../db/priority.ts';

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (header block over the limit, request
 * timeout, malformed HTTP): answer them with problem+json too, then close the connection as Node does.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code]: [number, ErrorCode] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'REQUEST_HEADERS_TOO_LARGE']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT']
        : [400, 'MALFORMED_REQUEST'];
  const requestId = randomUUID();
  const detail =
    status === 431
      ? 'The request headers exceed the size limit'
      : status === 408
        ? 'The request was not received in time'
        : 'The HTTP request is malformed';
  const body = JSON.stringify(problemBody(code, detail, requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

const compilersOf = new WeakMap<object, LazyCompilers>();

/** Compiles the request validators and response serializers no request has needed yet (http/lazy-compilers.ts). */
export function compilePendingSchemas(app: App): Promise<void> {
  return compilersOf.get(app)?.compilePending() ?? Promise.resolve();
}

export async function buildApp(ctx: AppContext, options: { logger?: FastifyServerOptions['logger'] } = {}) {
  const compilers = lazyCompilers();
  const app = Fastify({
    schemaController: { compilersFactory: compilers.compilersFactory },
    logger: options.logger ?? false,
    loggerInstance: options.logger === undefined ? ctx.logger : undefined,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && /^[A-Za-z0-9._-]{8,128}$/.test(incoming) ? incoming : randomUUID();
    },
    bodyLimit: 5 * 1024 * 1024,
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } },
    forceCloseConnections: 'idle',
    // requests that still arrive while closing get our problem+json 503 (onRequest hook below), not Fastify's
    return503OnClosing: false,
    // router-level refusals (bad URL encoding, over-long path parameters) also get the problem+json body
    frameworkErrors: (
      error: FastifyError,
      request: { id: string },
      reply: {
        header: (k: string, v: string) => void;
        status: (n: number) => { type: (t: string) => { send: (b: unknown) => void } };
      },
    ) => {
      const code: ErrorCode = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'URI_TOO_LONG' : 'VALIDATION_FAILED';
      const body = problemBody(code, error.message, String(request.id), [{ field: '(url)', message: error.message }]);
      reply.header('x-request-id', String(request.id));
      reply.status(body.status).type('application/problem+json').send(body);
    },
    // refusals of Node's HTTP parser, before any request exists (431 headers too large, 408, malformed HTTP)
    clientErrorHandler,
  } as FastifyServerOptions).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // an API request in flight: background database work on the embedded database yields to it (db/priority.ts)
  const inFlight = new WeakMap<object, () => void>();
  app.addHook('onRequest', async (request, reply) => {
    inFlight.set(request, foregroundRequest());
    reply.header('x-request-id', request.id);
    if (closing) {
      // pipelined or keep-alive requests reaching a closing process: go elsewhere, on a new connection
      reply.header('connection', 'close');
      throw new ApiError('SERVICE_UNAVAILABLE', 'The service is shutting down; retry the request');
    }
  });

  const ended = async (request: object) => {
    inFlight.get(request)?.();
  };
  app.addHook('onResponse', ended);
  app.addHook('onRequestAbort', ended);

  app.addSchema(Problem);

  // text PostgreSQL cannot store (NUL, unpaired surrogates) and absurd nesting: a 400 naming the field on every
  // route, after authentication (onRequest) and before schema validation
  app.addHook('preValidation', async (request) => assertStorableText(request));

  // JSON routes take JSON (and multipart routes multipart): text/plain is a 415, not a body to validate
  app.removeContentTypeParser('text/plain');

  // JSON bodies: numbers that do not fit a double (1e999 → Infinity) are malformed input, not a 500
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') {
      done(
        Object.assign(new Error('Body cannot be empty when content-type is set to application/json'), {
          statusCode: 400,
          code: 'FST_ERR_CTP_EMPTY_JSON_BODY',
        }),
        undefined,
      );
      return;
    }
    try {
      done(
        null,
        JSON.parse(text, (key, value) => {
          if (key === '__proto__') return undefined;
          if (typeof value === 'number' && !Number.isFinite(value)) {
            throw new Error(`the number of "${key}" is out of range`);
          }
          return value;
        }),
      );
    } catch (err) {
      done(Object.assign(err as Error, { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' }), undefined);
    }
  });

  await app.register(multipart, {
    limits: { fileSize: 1024 * 1024, files: 1, fields: 10, fieldSize: 4096, parts: 12 },
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'NFS-e service API',
        version: '1.0.0',
        license: { name: 'MIT', identifier: 'MIT' },
        description:
          'Issue Brazilian NFS-e through the national environment and municipal engines with one JSON API. ' +
          'Every error is RFC 9457 problem+json with a stable `code`; every response carries `X-Request-Id`.',
      },
      servers: [{ url: ctx.config.publicBaseUrl }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description:
              'Organization token (`svc_org_…`) on /org routes, project key (`svc_…`) elsewhere, operator key (`svc_admin_…`) on /admin routes.',
          },
        },
      },
      security: [{ apiKey: [] }],
      webhooks: openapiWebhooks,
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    // the docs page shows the same document as /api/v1/openapi.json: named component schemas, not inline copies
    transformSpecification: (specification) =>
      withNamedSchemas(specification as Record<string, unknown>) as typeof specification,
    transformSpecificationClone: true,
  });

  app.setErrorHandler(
    (error: FastifyError & { validation?: AjvError[]; validationContext?: string }, request, reply) => {
      const send = (
        code: ErrorCode,
        detail: string,
        errors: FieldError[] = [],
        extras: Record<string, unknown> = {},
        headers: Record<string, string> = {},
      ) => {
        const body = problemBody(code, detail, String(request.id), errors, extras);
        for (const [k, v] of Object.entries(headers)) reply.header(k, v);
        return reply.status(body.status).type('application/problem+json').send(body);
      };
      if (error instanceof ApiError) {
        return send(error.code, error.message, error.errors, error.extras, error.headers);
      }
      if (error.validation) {
        const errors = fieldErrors(error.validation, error.validationContext);
        return send(
          error.validationContext === 'querystring' ? 'INVALID_QUERY' : 'VALIDATION_FAILED',
          errors.map((e) => `${e.field} ${e.message}`).join('; ') || error.message,
          errors,
        );
      }
      switch (error.code) {
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
          return send('MALFORMED_JSON', error.message, [{ field: '(body)', message: error.message }]);
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
        case 'FST_REQ_FILE_TOO_LARGE':
        case 'FST_FILES_LIMIT':
        case 'FST_PARTS_LIMIT':
        case 'FST_FIELDS_LIMIT':
          return send('PAYLOAD_TOO_LARGE', error.message);
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
          return send('UNSUPPORTED_MEDIA_TYPE', error.message);
      }
      if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        // body parsing and multipart errors from plugins (malformed input): a 4xx, never a 500
        return send(
          error.statusCode === 413
            ? 'PAYLOAD_TOO_LARGE'
            : error.statusCode === 415
              ? 'UNSUPPORTED_MEDIA_TYPE'
              : 'VALIDATION_FAILED',
          error.message,
          [{ field: '(body)', message: error.message }],
        );
      }
      request.log.error({ err: error }, 'unhandled error');
      return send('INTERNAL_ERROR', 'An internal error occurred; the request id identifies it in the logs');
    },
  );

  app.setNotFoundHandler((request, reply) => {
    const body = problemBody('ROUTE_NOT_FOUND', `No route ${request.method} ${request.url}`, String(request.id));
    return reply.status(404).type('application/problem+json').send(body);
  });

  registerRoutes(app, ctx);
  compilersOf.set(app, compilers);
  return app;
}
