import SerializerSelector from '@fastify/fast-json-stringify-compiler';

/**
 * Response serializers compiled on first use instead of all at start. Fastify compiles a fast-json-stringify
 * function for every response schema of every route when the app becomes ready: about a hundred of them here, a
 * noticeable part of the start time (issue "Performance as users run it": start to healthy ≤ 3 s). Each is now
 * compiled the first time its route answers with that status, or earlier by `compilePending()`, which the service
 * runs in the background once it listens, one serializer per macrotask, so the first requests rarely pay for it.
 *
 * Only the serializers: a custom validator compiler would change how Fastify treats header schemas
 * (lower-casing), while a custom serializer compiler changes nothing else (fastify/lib/schema-controller.js).
 * A schema fast-json-stringify cannot compile fails in `compilePending()` (the service logs it; the OpenAPI test
 * compiles every one and fails), not only at the first answer.
 */
export interface LazySerializers {
  /** Fastify's `schemaController.compilersFactory.buildSerializer` */
  buildSerializer: SerializerSelector.SerializerFactory;
  /** Compiles every serializer not compiled yet, yielding between them; rejects with the first failure. */
  compilePending(): Promise<void>;
}

export function lazySerializers(): LazySerializers {
  const selector = SerializerSelector();
  const pending = new Set<() => unknown>();
  return {
    buildSerializer(externalSchemas, options) {
      const compile = selector(externalSchemas, options);
      return (route) => {
        let compiled: SerializerSelector.Serializer | null = null;
        const ensure = () => {
          if (!compiled) {
            compiled = compile(route);
            pending.delete(ensure);
          }
          return compiled;
        };
        pending.add(ensure);
        return (doc: unknown) => ensure()(doc);
      };
    },
    async compilePending() {
      for (const ensure of [...pending]) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        ensure();
      }
    },
  };
}
