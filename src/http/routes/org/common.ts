import type { FastifyRequest } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import type { AppContext } from '../../../context.ts';
import { findOrgProject, type ProjectRow } from '../../../db/repositories/projects.ts';
import { orgPrincipal } from '../../auth.ts';
import { ApiError, type FieldError } from '../../errors.ts';
import { fieldErrors } from '../../field-errors.ts';
import { isUuid } from '../../schemas.ts';

/**
 * Helpers shared by the organization routes (spec 4.1). Every org route authenticates in `onRequest`
 * (before the body is read, so an unauthenticated request gets 401 whatever it carries) and validates
 * its body with `attachValidation`, turning the Ajv result into a 400 here, after authentication. Text that
 * cannot be stored (NUL, unpaired surrogates) is refused for every route by the app (`../../input-text.ts`).
 */

/** Friendlier messages than Ajv's `must match pattern "…"` for the formatted fields. */
const PATTERN_MESSAGES: Record<string, string> = {
  serieNfse: 'must be 1 to 5 digits',
  cstPisCofins: 'must be 2 digits',
  defaultCstIbscbs: 'must be 3 digits',
  defaultClassificacaoTributaria: 'must be 6 digits',
  defaultIndicadorOperacao: 'must be 6 digits',
  defaultNbs: 'must be 9 digits',
  codigoServicoSp: 'must be 5 digits',
  cnae: 'must be a 7-digit CNAE code (0000-0/00 or 0000000)',
  telefone: 'must contain only digits, spaces and ( ) + -',
  'endereco.cep': 'must be 8 digits',
};

/**
 * A schema that also accepts null, as `type: [T, 'null']` (and null added to an `enum`). Unlike
 * `anyOf: [T, null]` this keeps Ajv's type coercion from turning null into 0 or "" (or 0 into null).
 */
export function orNull<T extends TSchema>(schema: T) {
  const s = schema as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = { ...s, type: [s.type, 'null'] };
  if (Array.isArray(s.enum)) out.enum = [...s.enum, null];
  return Type.Unsafe<Static<T> | null>(out);
}

/** Throws the 400 of an attached validation error (body or query), with one `{field, message}` per field. */
export function assertValid(request: FastifyRequest): void {
  const error = request.validationError;
  if (!error) {
    // Ajv's type coercion turns "1e999" into Infinity and lets it through integer and range checks
    assertFiniteNumbers(request.body, '', 'VALIDATION_FAILED');
    assertFiniteNumbers(request.query, 'query', 'INVALID_QUERY');
    return;
  }
  const raw = fieldErrors(error.validation ?? [], error.validationContext);
  const byField = new Map<string, string[]>();
  for (const e of raw) {
    const field = e.field.startsWith('query.') ? e.field.slice('query.'.length) : e.field;
    let message = e.message;
    if (message.startsWith('must match pattern') && PATTERN_MESSAGES[field]) message = PATTERN_MESSAGES[field]!;
    if (message === 'must match format "email"') message = 'must be an e-mail address';
    // an enum that includes null (see orNull) lists it as an empty value
    if (message.startsWith('must be one of ') && message.endsWith(', ')) message = `${message.slice(0, -2)} or null`;
    const list = byField.get(e.field) ?? [];
    if (!list.includes(message)) list.push(message);
    byField.set(e.field, list);
  }
  const errors: FieldError[] = [];
  for (const [field, messages] of byField) {
    // a nullable field reports both its own failure and "must be null": keep the useful one
    const nested = [...byField.keys()].some((f) => f.startsWith(`${field}.`));
    const useful = messages.length > 1 || nested ? messages.filter((m) => m !== 'must be null') : messages;
    for (const message of useful) errors.push({ field, message });
  }
  const query = error.validationContext === 'querystring';
  throw new ApiError(
    query ? 'INVALID_QUERY' : 'VALIDATION_FAILED',
    errors.map((e) => `${e.field} ${e.message}`).join('; ') || error.message,
    errors,
  );
}

function assertFiniteNumbers(value: unknown, path: string, code: 'VALIDATION_FAILED' | 'INVALID_QUERY'): void {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      const field = path || '(body)';
      throw new ApiError(code, `${field} must be a finite number`, [{ field, message: 'must be a finite number' }]);
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) assertFiniteNumbers(v, path ? `${path}.${k}` : k, code);
  }
}

/**
 * The project named by the `:id` path parameter, within the caller's organization. Any id of another
 * organization, a nonexistent or malformed id (and, unless `includeInactive`, a deleted project) is 404:
 * never data, never a hint that the id exists elsewhere.
 */
export async function loadOrgProject(
  ctx: AppContext,
  request: FastifyRequest,
  options: { includeInactive?: boolean } = {},
): Promise<ProjectRow> {
  const { orgId } = orgPrincipal(request);
  const id = (request.params as { id?: string }).id ?? '';
  const project = isUuid(id) ? await findOrgProject(ctx.db, orgId, id, options) : null;
  if (!project) throw new ApiError('PROJECT_NOT_FOUND', 'Project not found');
  return project;
}

export const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);
