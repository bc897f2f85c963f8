import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';

/**
 * Input PostgreSQL cannot store, refused at the edge with a 400 naming the field, once for every route (a
 * `preValidation` hook of the app, and the multipart reader for form fields):
 *
 * - U+0000 (text and jsonb cannot hold it: the insert would fail, and fail the whole transaction it shares);
 * - unpaired UTF-16 surrogates (`"\ud800"` in JSON): jsonb refuses them and text columns would silently store
 *   U+FFFD instead, a value the caller did not send;
 * - JSON nested deeper than `MAX_DEPTH` (no request of the API needs more than a few levels; deeper bodies
 *   only exhaust stacks).
 *
 * Object keys are checked as well as values: routes that accept extra fields keep them in jsonb.
 */
export const MAX_DEPTH = 32;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export type TextProblem = { field: string; message: string };

/** What is wrong with a string, if anything. */
export function textProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text (it contains an unpaired surrogate)';
  return null;
}

/** A field name fit for a message: the characters that made it unusable shown as \uXXXX. */
function printable(key: string): string {
  return key.replace(/[\u0000-\u001f\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The first string (value or key) of a parsed JSON value, query or params object that cannot be stored, with
 * its dotted path (`items.0.tomador.nome`, like the schema errors). Iterative: any nesting depth is safe.
 */
export function findUnstorableText(root: unknown, prefix = ''): TextProblem | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: prefix, depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const message = textProblem(value);
      if (message) return { field: path || '(body)', message };
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    if (depth >= MAX_DEPTH) {
      return { field: path || '(body)', message: `must not be nested more than ${MAX_DEPTH} levels deep` };
    }
    const entries = Object.entries(value);
    // reversed so that the first problem in document order is the one reported
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const childPath = path ? `${path}.${printable(key)}` : printable(key);
      stack.push({ value: child, path: childPath, depth: depth + 1 });
      // a bad key is reported before its value (popped first)
      if (!Array.isArray(value) && textProblem(key)) stack.push({ value: key, path: childPath, depth: depth + 1 });
    }
  }
  return null;
}

/** Throws the 400 of the first unstorable text of the request's body, query string or path parameters. */
export function assertStorableText(request: FastifyRequest): void {
  const checks: [unknown, string, 'VALIDATION_FAILED' | 'INVALID_QUERY'][] = [
    [request.params, 'params', 'VALIDATION_FAILED'],
    [request.query, 'query', 'INVALID_QUERY'],
    [request.body, '', 'VALIDATION_FAILED'],
  ];
  for (const [value, prefix, code] of checks) {
    const problem = findUnstorableText(value, prefix);
    if (problem) {
      throw new ApiError(code, `${problem.field} ${problem.message}`, [problem]);
    }
  }
}
