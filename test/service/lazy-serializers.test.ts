import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePendingSerializers } from '../../src/http/app.ts';
import { lazySerializers } from '../../src/http/lazy-serializers.ts';
import type { App } from '../../src/http/route.ts';
import { startTestService, type TestService } from '../support/harness.ts';

/**
 * Response serializers are compiled on first use or in the background after the service listens
 * (src/http/lazy-serializers.ts): every response schema of every route must still compile, and answers must be
 * serialized by its schema (extra properties dropped) as before.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('lazy response serializers', () => {
  it('every response schema of every route compiles', async () => {
    await expect(compilePendingSerializers(t.service.app as App)).resolves.toBeUndefined();
  });

  it('answers are serialized by their response schema', async () => {
    const res = await t.request('GET', '/health', { key: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', database: 'ok' });
  });

  it('a serializer is compiled once, at its first use or by compilePending', async () => {
    const serializers = lazySerializers();
    const compiler = serializers.buildSerializer();
    const route = { method: 'GET', url: '/x', httpStatus: '200' };
    const first = compiler({ ...route, schema: { type: 'object', properties: { a: { type: 'integer' } } } });
    const second = compiler({ ...route, schema: { type: 'object', properties: { b: { type: 'string' } } } });
    expect(first({ a: 1, hidden: true })).toBe('{"a":1}');
    await serializers.compilePending();
    expect(second({ b: 'x', hidden: true })).toBe('{"b":"x"}');
  });

  it('a schema that cannot compile fails compilePending', async () => {
    const serializers = lazySerializers();
    serializers.buildSerializer()({ method: 'GET', url: '/y', httpStatus: '200', schema: { $ref: '#/nowhere' } });
    await expect(serializers.compilePending()).rejects.toThrow();
  });
});
