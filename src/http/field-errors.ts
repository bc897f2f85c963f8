import type { FieldError } from './errors.ts';

/**
 * Ajv's validation errors as the API's `{ field, message }` list: used by the app's error handler and by the
 * organization routes that validate after authenticating (`routes/org/common.ts`). A module of its own so that
 * route files need not import `app.ts` (which imports every route).
 */
export interface AjvError {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** Turns Ajv errors into `{ field, message }` with dotted body paths (`tomador.cnpj`). */
export function fieldErrors(validation: AjvError[], context?: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of validation) {
    let path = (e.instancePath ?? '')
      .split('/')
      .filter(Boolean)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .join('.');
    if (e.keyword === 'required' && e.params?.missingProperty) {
      path = path ? `${path}.${e.params.missingProperty}` : String(e.params.missingProperty);
    }
    if (e.keyword === 'additionalProperties' && e.params?.additionalProperty) {
      path = path ? `${path}.${e.params.additionalProperty}` : String(e.params.additionalProperty);
    }
    const field = path || (context === 'body' ? '(body)' : `(${context ?? 'request'})`);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') message = 'is required';
    if (e.keyword === 'additionalProperties') message = 'is not an accepted field';
    if (e.keyword === 'enum' && Array.isArray(e.params?.allowedValues)) {
      message = `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
    }
    const key = `${field}|${message}`;
    if (seen.has(key)) continue;
    // anyOf/oneOf produce one error per branch plus a summary: keep the most useful ones
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    seen.add(key);
    out.push({ field: context === 'querystring' ? `query.${field}` : field, message });
  }
  return out;
}
