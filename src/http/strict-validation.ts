import { Compile } from 'typebox/compile';
import type { FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';

/**
 * A route-level validator compiler without type coercion, for the invoice bodies (POST /emitir, /emitir/batch).
 * The application's Ajv coerces types (`coerceTypes: 'array'`, which the querystrings of the org routes rely
 * on): in an invoice body that would turn `"total": true` into 1, `"100"` into 100, `[100]` into 100 and
 * `"issRetido": "true"` into true, issuing a note with a value the caller did not mean. Here every money, rate,
 * boolean and enum must have its JSON type; the spec's documented alternatives (consumidorFinal "0"/"1",
 * tipoOperacao and tipoEnteGovernamental as string or number) are unions in the schema itself. Errors have the
 * Ajv shape, so the problem+json handler names the fields as for every other route.
 */
export function strictValidatorCompiler({ schema }: { schema: unknown }) {
  const compiled = Compile(schema as TSchema);
  return (data: unknown) => {
    if (compiled.Check(data)) return { value: data };
    return { error: [...compiled.Errors(data)].flatMap((e) => toAjvShape(e as SchemaError)) };
  };
}

type SchemaError = FastifySchemaValidationError;

/** TypeBox reports the missing properties of an object together; Ajv one by one (`params.missingProperty`). */
function toAjvShape(error: SchemaError): SchemaError[] {
  const missing = error.params.requiredProperties;
  if (error.keyword !== 'required' || !Array.isArray(missing)) return [error];
  return missing.map((name) => ({ ...error, params: { missingProperty: String(name) }, message: 'is required' }));
}
