/**
 * The finishing step of the OpenAPI document @fastify/swagger builds from the route schemas (GET /openapi.json and
 * `npm run openapi` both serve it through here): every response schema, and every request body, becomes a named
 * component of `components.schemas` referenced by `$ref`. The name is the schema's `title` (set next to the route
 * with `documented()` of ./schemas.ts); a schema without one is named after its operation and status, so a route
 * added without documentation still yields a valid document (test/service/openapi-examples.test.ts then names it).
 * A schema inside a component that has a title of its own (the resource in a list, or extended by an `allOf`)
 * becomes a component too, so the document describes each resource once.
 * Problem responses get the description of their status and the media type the error handler sends,
 * `application/problem+json` (a 429 also its Retry-After header). The input document is not modified.
 */

type Json = Record<string, unknown>;
interface Media {
  schema?: Json;
  example?: unknown;
}
interface Operation {
  operationId?: string;
  requestBody?: { description?: string; content?: Record<string, Media> };
  responses?: Record<string, { description?: string; headers?: Json; content?: Record<string, Media> }>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
const PROBLEM_REF = '#/components/schemas/Problem';
const RESPONSE_DESCRIPTION = 'x-response-description';

/** What a problem+json answer of each status means on this API (the `code` tells which case it is). */
const PROBLEM_DESCRIPTIONS: Record<string, string> = {
  '400': 'The request is invalid: problem+json naming each refused field in `errors`',
  '401': 'Missing or invalid API key (UNAUTHENTICATED)',
  '402': "The plan's credits are exhausted (PAYMENT_REQUIRED_CREDITS_EXHAUSTED)",
  '403': 'The key cannot use this route: wrong kind of key, missing scope, or a plan limit',
  '404': 'The resource does not exist or belongs to another organization or project',
  '409': "The request conflicts with the resource's current state (the `code` names the conflict)",
  '413': 'The body or the uploaded file is too large (PAYLOAD_TOO_LARGE)',
  '415': 'Unsupported content type (UNSUPPORTED_MEDIA_TYPE)',
  '422': 'Well-formed, but cannot be processed for this project or invoice (the `code` says why)',
  '429': 'Rate limit exceeded (RATE_LIMITED); retry after the Retry-After seconds',
  '431': 'The request headers exceed the size limit (REQUEST_HEADERS_TOO_LARGE)',
  '500': 'Internal error; the requestId identifies it in the logs',
  '501': 'The municipal system does not support this operation',
  '502': 'The government or municipal portal returned an error (PORTAL_ERROR)',
  '503': 'Service unavailable (SERVICE_UNAVAILABLE); retry later',
};

const RETRY_AFTER = {
  description: 'Seconds until a request may be admitted again',
  schema: { type: 'integer', minimum: 1 },
};

/** Keywords whose value is data, not a schema. */
const VALUE_KEYS = new Set(['examples', 'example', 'default', 'enum', 'const']);

/** JSON with sorted keys: two schemas built in different key orders compare equal. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** A copy of `document` whose response and request-body schemas are `$ref`s to named components. */
export function withNamedSchemas(document: Json): Json {
  const out = structuredClone(document) as Json & { paths?: Record<string, Record<string, Operation>> };
  const components = (out.components ?? {}) as Json & { schemas?: Record<string, Json> };
  out.components = components;
  const schemas = components.schemas ?? {};
  components.schemas = schemas;

  const name = (schema: Json, fallback: string, where: string): string => {
    const title = typeof schema.title === 'string' && schema.title ? schema.title : fallback;
    const component = withNestedRefs({ ...schema, title }, where) as Json;
    delete component[RESPONSE_DESCRIPTION];
    const existing = schemas[title];
    if (existing && canonical(existing) !== canonical(component)) {
      throw new Error(`${where}: two different schemas are named ${title}`);
    }
    schemas[title] = component;
    return `#/components/schemas/${title}`;
  };
  // below a component, a schema with a title of its own (a resource inside a list, or extended by an allOf) is
  // a component too, referenced where it stands; values (examples, defaults, enums) are left as they are
  const withNestedRefs = (node: Json, where: string): Json =>
    Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, VALUE_KEYS.has(key) ? value : nestedRefs(value, where)]),
    );
  const nestedRefs = (node: unknown, where: string): unknown => {
    if (Array.isArray(node)) return node.map((item) => nestedRefs(item, where));
    if (!node || typeof node !== 'object') return node;
    const schema = node as Json;
    if (typeof schema.title === 'string' && schema.title) return { $ref: name(schema, schema.title, where) };
    return withNestedRefs(schema, where);
  };

  for (const [path, item] of Object.entries(out.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const base = pascal(operation.operationId ?? `${method} ${path}`);
      const body = operation.requestBody;
      for (const [type, media] of Object.entries(body?.content ?? {})) {
        if (!media.schema || media.schema.$ref) continue;
        const description = media.schema[RESPONSE_DESCRIPTION];
        if (typeof description === 'string' && !body!.description) body!.description = description;
        media.schema = { $ref: name(media.schema, `${base}Request`, `${where} ${type}`) };
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const json = response.content?.['application/json'];
        if (json?.schema?.$ref === PROBLEM_REF && Object.keys(response.content!).length === 1) {
          // what the error handler really sends (app.ts)
          response.content = { 'application/problem+json': json };
          if (PROBLEM_DESCRIPTIONS[status] && response.description === 'RFC 9457 problem details') {
            response.description = PROBLEM_DESCRIPTIONS[status];
          }
          // the rate limiter's answer says when to come back (auth.ts)
          if (status === '429') response.headers ??= { 'retry-after': RETRY_AFTER };
          continue;
        }
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (!media.schema) continue;
          if (media.schema.$ref) continue;
          media.schema = { $ref: name(media.schema, `${base}Response${status}`, `${where} ${status} ${type}`) };
        }
      }
    }
  }
  // components in a stable order: the document is committed and compared
  components.schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  return out;
}
