import { Type } from 'typebox';

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
  { additionalProperties: true, $id: 'Problem', description: 'RFC 9457 problem details' },
);

export const problemRef = Type.Unsafe<unknown>({ $ref: 'Problem#' });

/** Response map entries for the usual errors of an authenticated route. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, unknown> = {};
  for (const s of [401, 403, 429, ...statuses]) out[s] = problemRef;
  return out;
}

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const IdParams = Type.Object({ id: Type.String({ description: 'Resource id (UUID)' }) });

export const Pagination = Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() });

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Page number, from 1' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, max 100' })),
};

export const isUuid = (value: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
