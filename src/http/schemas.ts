import { type Static, type TSchema, Type } from 'typebox';

/** Shared TypeBox schemas of the HTTP layer (they also feed the OpenAPI document). */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable machine-readable error code (see the error catalogue)' }),
    errors: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
    requestId: Type.String(),
  },
  {
    additionalProperties: true,
    $id: 'Problem',
    description: 'RFC 9457 problem details',
    examples: [
      {
        type: 'https://nfse-service.dev/errors/invalid-cnpj',
        title: 'Invalid CNPJ',
        status: 400,
        detail: 'cnpj must be a CNPJ of 14 digits (formatted or not) with valid check digits',
        code: 'INVALID_CNPJ',
        errors: [{ field: 'cnpj', message: 'must be a CNPJ of 14 digits (formatted or not) with valid check digits' }],
        requestId: '0b6f5a52-3c1e-4d8a-9f0e-2a7d4c6b1e93',
      },
    ],
  },
);

export const problemRef = Type.Unsafe<unknown>({ $ref: 'Problem#' });

/** Response map entries for the usual errors of an authenticated route. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, unknown> = {};
  for (const s of [401, 403, 429, ...statuses]) out[s] = problemRef;
  return out;
}

/**
 * A request or response schema as the OpenAPI document shows it (next to the route that uses it, so they stay in
 * sync): `name` is its component in `components.schemas` (see ../openapi-components.ts), `description` the
 * response's description, and `example` one value of the schema's own type, which the document shows
 * as the operation's example (test/service/openapi-examples.test.ts validates it against the schema).
 */
export function documented<T extends TSchema>(
  schema: T,
  doc: { name: string; description: string; example: Static<T> },
): T {
  return { ...schema, title: doc.name, 'x-response-description': doc.description, examples: [doc.example] };
}

/** `documented()` for a request body (Ajv validates it: the description is the schema's own). */
export function documentedBody<T extends TSchema>(
  schema: T,
  doc: { name: string; description: string; example: Static<T> },
): T {
  return { ...schema, title: doc.name, description: doc.description, examples: [doc.example] };
}

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const IdParams = Type.Object({ id: Type.String({ description: 'Resource id (UUID)' }) });

export const Pagination = Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() });

export const MAX_PAGE = 1_000_000;
export const MAX_PAGE_SIZE = 100;

/**
 * The one pagination of the API (spec 8: page size default 20, max 100). Both bounds are checked, so the
 * offset `(page - 1) * limit` always fits the database (a page of 1e21 is a 400, not a 500). Spread it into a
 * route's querystring object: `Type.Object({ ...PageQuery, other })`.
 */
export const PageQuery = {
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: `Page number, 1 to ${MAX_PAGE}` }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: 20,
      description: `Page size, 1 to ${MAX_PAGE_SIZE} (default 20)`,
    }),
  ),
};

/** The page and size of a query validated with `PageQuery` (defaults when absent). */
export function pageOf(query: { page?: number; limit?: number }): { page: number; limit: number } {
  return { page: query.page ?? 1, limit: query.limit ?? 20 };
}

export const isUuid = (value: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
