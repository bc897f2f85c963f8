import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePendingSchemas } from '../../src/http/app.ts';
import { lazyCompilers } from '../../src/http/lazy-compilers.ts';
import type { App } from '../../src/http/route.ts';
import { startTestService, type TestService } from '../support/harness.ts';

/**
 * Request validators and response serializers are compiled on first use or in the background after the service
 * listens (src/http/lazy-compilers.ts): every schema of every route must still compile, validation must refuse
 * and coerce as Fastify's own compiler did, and answers must be serialized by their schema.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

const ajvOptions = { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } };
const route = { method: 'GET', url: '/x' };

describe('lazy schema compilers', () => {
  it('every request and response schema of every route compiles', async () => {
    await expect(compilePendingSchemas(t.service.app as App)).resolves.toBeUndefined();
  });

  it('answers are serialized, and requests validated, as before', async () => {
    const health = await t.request('GET', '/health', { key: null });
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok', database: 'ok' });
    // a querystring the schema refuses: 400 naming the field, through the lazily compiled Ajv validator
    const org = await t.createOrganization();
    const refused = await t.request('GET', '/org/projects?limit=abc', { key: org.token });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('limit');
  });

  it('a validator is compiled once, hands Ajv the parent (root coercion) and exposes its errors', () => {
    const compilers = lazyCompilers();
    const compile = compilers.compilersFactory.buildValidator({}, ajvOptions as never) as unknown as (
      r: unknown,
    ) => ((data: unknown, ctx?: unknown) => boolean) & { errors?: unknown[]; schemaEnv?: unknown };
    const validate = compile({
      ...route,
      httpPart: 'querystring',
      schema: { type: 'object', properties: { n: { type: 'integer' } } },
    });
    expect(validate.schemaEnv).toBeTruthy();
    const query: { n: unknown } = { n: '7' };
    expect(validate(query)).toBe(true);
    expect(query.n).toBe(7);
    expect(validate({ n: 'x' })).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ instancePath: '/n', keyword: 'type' });
  });

  it('a header schema with upper-case names is refused at start (Fastify would not lower-case it)', () => {
    const compile = lazyCompilers().compilersFactory.buildValidator({}, ajvOptions as never) as unknown as (
      r: unknown,
    ) => unknown;
    expect(() =>
      compile({ ...route, httpPart: 'headers', schema: { type: 'object', properties: { 'Idempotency-Key': {} } } }),
    ).toThrow(/lower case/);
  });

  it('a serializer is compiled once, at its first use or by compilePending', async () => {
    const compilers = lazyCompilers();
    const compile = compilers.compilersFactory.buildSerializer();
    const first = compile({
      ...route,
      httpStatus: '200',
      schema: { type: 'object', properties: { a: { type: 'integer' } } },
    });
    const second = compile({
      ...route,
      httpStatus: '200',
      schema: { type: 'object', properties: { b: { type: 'string' } } },
    });
    expect(first({ a: 1, hidden: true })).toBe('{"a":1}');
    await compilers.compilePending();
    expect(second({ b: 'x', hidden: true })).toBe('{"b":"x"}');
  });

  it('a schema that cannot compile fails compilePending', async () => {
    const compilers = lazyCompilers();
    compilers.compilersFactory.buildSerializer()({ ...route, httpStatus: '200', schema: { $ref: '#/nowhere' } });
    await expect(compilers.compilePending()).rejects.toThrow();
  });
});
