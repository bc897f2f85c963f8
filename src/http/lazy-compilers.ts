import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

/**
 * Request validators and response serializers compiled on first use instead of all at start. Fastify compiles an
 * Ajv validator for every request schema and a fast-json-stringify function for every response schema of every
 * route when the app becomes ready: a few hundred of them here, about a fifth of the start's CPU (issue
 * "Performance as users run it": start to healthy ≤ 3 s). Each is now compiled the first time a request needs it,
 * or earlier by `compilePending()`, which the service runs in the background once it listens, one per macrotask,
 * so the first requests rarely pay for it. A schema that does not compile fails `compilePending()` (the service
 * logs it; test/service/lazy-compilers.test.ts compiles every one), not only at its first request.
 *
 * The compilers are Fastify's own (`@fastify/ajv-compiler` with the app's Ajv options, and
 * `@fastify/fast-json-stringify-compiler`), in the versions Fastify depends on. Two things a custom validator
 * compiler changes, kept as they were:
 * - Fastify passes `{ parentData, parentDataProperty }` to a validator that has a `schemaEnv` (Ajv's functions do;
 *   Ajv coerces a root value only with them): the lazy validator has one and hands them on.
 * - Fastify lower-cases the property names of a header schema for its default compiler, not for a custom one:
 *   header schemas are written in lower case here, and one that is not is refused at start.
 */
type ValidatorFactory = ReturnType<typeof AjvCompiler>;
type RouteValidator = ((data: unknown, dataContext?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

export interface LazyCompilers {
  /** Fastify's `schemaController.compilersFactory` */
  compilersFactory: { buildValidator: ValidatorFactory; buildSerializer: SerializerSelector.SerializerFactory };
  /** Compiles every validator and serializer not compiled yet, yielding between them; rejects at the first failure. */
  compilePending(): Promise<void>;
}

export function lazyCompilers(): LazyCompilers {
  const validators = AjvCompiler();
  const serializers = SerializerSelector();
  const pending = new Set<() => unknown>();
  /** `compile()` once, at the first call of the result or by compilePending */
  const once = <T>(compile: () => T): (() => T) => {
    let compiled: T | undefined;
    const ensure = () => {
      if (compiled === undefined) {
        compiled = compile();
        pending.delete(ensure);
      }
      return compiled;
    };
    pending.add(ensure);
    return ensure;
  };
  const buildValidator = ((externalSchemas: unknown, options: unknown) => {
    const compile = (validators as (e: unknown, o: unknown) => (route: unknown) => RouteValidator)(
      externalSchemas,
      options,
    );
    return (route: { schema: unknown; method: string; url: string; httpPart?: string }) => {
      if (route.httpPart === 'headers') assertLowerCaseHeaderNames(route.schema, `${route.method} ${route.url}`);
      const ensure = once(() => compile(route));
      const validate: RouteValidator = (data, dataContext) => {
        const compiled = ensure();
        const result = compiled(data, dataContext);
        validate.errors = compiled.errors;
        return result;
      };
      validate.schemaEnv = true;
      return validate;
    };
  }) as unknown as ValidatorFactory;
  const buildSerializer: SerializerSelector.SerializerFactory = (externalSchemas, options) => {
    const compile = serializers(externalSchemas, options);
    return (route) => {
      const ensure = once(() => compile(route));
      return (doc: unknown) => ensure()(doc);
    };
  };
  return {
    compilersFactory: { buildValidator, buildSerializer },
    async compilePending() {
      for (const ensure of [...pending]) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        ensure();
      }
    },
  };
}

function assertLowerCaseHeaderNames(schema: unknown, route: string): void {
  const properties = (schema as { properties?: Record<string, unknown> } | null)?.properties ?? {};
  const upper = Object.keys(properties).filter((name) => name !== name.toLowerCase());
  if (upper.length > 0) {
    throw new Error(`${route}: header schema properties must be lower case (${upper.join(', ')})`);
  }
}
