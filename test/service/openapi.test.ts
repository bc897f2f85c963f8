import { readFileSync } from 'node:fs';
import { Errors } from 'typebox/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_SERVER_URL } from '../../src/http/openapi-document.ts';
import { startTestService, type TestService } from '../support/harness.ts';

/**
 * docs/openapi.json (written by `npm run openapi`) is the document the service serves at GET /api/v1/openapi.json,
 * and every operation in it has a unique operationId (the typed clients and the linters key on it), named schemas
 * for its body and every response, and examples (kept next to each route's schema) that its own schemas accept.
 */

const committedFile = new URL('../../docs/openapi.json', import.meta.url);
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

let t: TestService;
let served: Record<string, unknown> & { paths: Record<string, Record<string, { operationId?: string }>> };
beforeAll(async () => {
  t = await startTestService();
  const res = await t.request('GET', '/openapi.json');
  expect(res.status).toBe(200);
  served = res.body;
});
afterAll(async () => {
  await t?.close();
});

describe('the OpenAPI document', () => {
  it('is the committed docs/openapi.json (run `npm run openapi` after changing a route)', () => {
    const committed = JSON.parse(readFileSync(committedFile, 'utf8'));
    // only the address differs: the test service listens on a port of its own
    const normalized = { ...served, servers: [{ url: DOCUMENT_SERVER_URL }] };
    const drift = JSON.stringify(normalized) !== JSON.stringify(committed);
    // name the first differing parts to help the reader; the fix is always the same
    const keys = new Set([...Object.keys(served.paths), ...Object.keys(committed.paths ?? {})]);
    const paths = [...keys].filter((k) => JSON.stringify(served.paths[k]) !== JSON.stringify(committed.paths?.[k]));
    expect(
      drift,
      `docs/openapi.json differs from the served document (${paths.slice(0, 5).join(', ') || 'outside paths'}): run \`npm run openapi\` and commit it`,
    ).toBe(false);
  });

  it('gives every operation a unique operationId', () => {
    const ids: string[] = [];
    for (const [path, item] of Object.entries(served.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        expect(operation.operationId, `${method.toUpperCase()} ${path}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
        ids.push(operation.operationId!);
      }
    }
    expect(ids.length).toBeGreaterThan(30);
    expect(new Set(ids).size).toBe(ids.length);
    expect(served.paths['/api/v1/org/projects']?.post?.operationId).toBe('createProject');
  });

  it('is also what the /docs page shows (named component schemas, not inline copies)', async () => {
    const res = await fetch(`${t.baseUrl}/docs/json`);
    expect(res.status).toBe(200);
    const shown = (await res.json()) as { components?: { schemas?: Record<string, unknown> }; paths: unknown };
    const servedSchemas = (served.components as { schemas: Record<string, unknown> }).schemas;
    expect(Object.keys(shown.components?.schemas ?? {}).sort()).toEqual(Object.keys(servedSchemas).sort());
    expect(shown.paths).toEqual(served.paths);
  });
});

type Json = Record<string, unknown>;
interface Media {
  schema?: Json;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Operation {
  operationId?: string;
  requestBody?: { description?: string; content?: Record<string, Media> };
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
}

/** Every operation of the served document, as `GET /api/v1/…` and its object. */
function operations(): [string, Operation][] {
  const out: [string, Operation][] = [];
  for (const [path, item] of Object.entries(served.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (METHODS.includes(method)) out.push([`${method.toUpperCase()} ${path}`, operation as Operation]);
    }
  }
  return out;
}

/** The validation errors of `value` against a schema of the document (its `#/components/schemas/…` refs resolved). */
function errorsOf(schema: Json, value: unknown): string[] {
  const prefix = '#/components/schemas/';
  // TypeBox's JSON Schema checker resolves `$ref` by name in a context of schemas
  const rename = (node: unknown): unknown =>
    Array.isArray(node)
      ? node.map(rename)
      : node && typeof node === 'object'
        ? Object.fromEntries(
            Object.entries(node).map(([k, v]) => [
              k,
              k === '$ref' && typeof v === 'string' && v.startsWith(prefix) ? v.slice(prefix.length) : rename(v),
            ]),
          )
        : node;
  const components = (served.components as { schemas: Record<string, Json> }).schemas;
  const context = rename(components) as Record<string, Json>;
  const [, errors] = Errors(context as never, rename(schema) as never, value);
  return errors.map((e) => `${e.instancePath || '(root)'} ${e.message}`);
}

const examplesOf = (media: Media): unknown[] =>
  media.example !== undefined ? [media.example] : Object.values(media.examples ?? {}).map((e) => e.value);
/** A schema of the document, its `$ref` followed. */
function resolved(schema: Json | undefined): Json | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  return (served.components as { schemas: Record<string, Json> }).schemas[ref.replace('#/components/schemas/', '')];
}
const isBinary = (schema: Json | undefined) =>
  resolved(schema)?.type === 'string' && resolved(schema)?.format === 'binary';

describe('the operations of the OpenAPI document', () => {
  it('have an example of their success response, and of their body when they take one', () => {
    const missing: string[] = [];
    for (const [name, operation] of operations()) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        if (examplesOf(media).length === 0) missing.push(`${name} request ${type}`);
      }
      const success = Object.keys(operation.responses).filter((s) => /^2/.test(s));
      expect(success.length, `${name} declares no success response`).toBeGreaterThan(0);
      for (const status of success) {
        for (const [type, media] of Object.entries(operation.responses[status]!.content ?? {})) {
          // a PDF's bytes have no useful JSON example
          if (!isBinary(media.schema) && examplesOf(media).length === 0) missing.push(`${name} ${status} ${type}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(operations().length).toBeGreaterThan(30);
  });

  it('have examples that their own schemas accept (the webhooks section too)', () => {
    const refused: string[] = [];
    let checked = 0;
    for (const [name, operation] of operations()) {
      const media: [string, Media][] = Object.entries(operation.requestBody?.content ?? {}).map(([type, m]) => [
        `${name} request ${type}`,
        m,
      ]);
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, m] of Object.entries(response.content ?? {})) media.push([`${name} ${status} ${type}`, m]);
      }
      for (const [where, m] of media) {
        for (const example of examplesOf(m)) {
          checked++;
          const errors = errorsOf(m.schema ?? {}, example);
          if (errors.length) refused.push(`${where}: ${errors.join('; ')}`);
        }
      }
    }
    // the webhooks section: each event's payload example
    const webhooks = (served.webhooks ?? {}) as Record<string, { post: Operation }>;
    expect(Object.keys(webhooks).length).toBeGreaterThan(5);
    for (const [event, item] of Object.entries(webhooks)) {
      const media = item.post.requestBody?.content?.['application/json'];
      const examples = media ? examplesOf(media) : [];
      if (examples.length === 0) refused.push(`webhook ${event}: no example`);
      for (const example of examples) {
        checked++;
        const errors = errorsOf(media!.schema ?? {}, example);
        if (errors.length) refused.push(`webhook ${event}: ${errors.join('; ')}`);
      }
    }
    const components = (served.components as { schemas: Record<string, Json & { examples?: unknown[] }> }).schemas;
    for (const [name, schema] of Object.entries(components)) {
      for (const example of schema.examples ?? []) {
        checked++;
        const errors = errorsOf({ $ref: `#/components/schemas/${name}` }, example);
        if (errors.length) refused.push(`components.schemas.${name}: ${errors.join('; ')}`);
      }
    }
    expect(refused).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('name the schema of every body and response, and describe every response', () => {
    const problems: string[] = [];
    for (const [name, operation] of operations()) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        if (!media.schema?.$ref) problems.push(`${name} request ${type}: inline schema`);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response.description || response.description === 'Default Response') {
          problems.push(`${name} ${status}: no description`);
        }
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (!media.schema?.$ref) problems.push(`${name} ${status} ${type}: inline schema`);
          // a name made up from the operation means the route did not name its schema (documented() of schemas.ts)
          else if (/Response\d{3}$/.test(media.schema.$ref as string)) problems.push(`${name} ${status}: unnamed`);
        }
        if (/^[45]/.test(status) && status !== '503') {
          const ref = response.content?.['application/problem+json']?.schema?.$ref;
          if (ref !== '#/components/schemas/Problem') problems.push(`${name} ${status}: not a Problem`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(served.paths['/api/v1/org/projects']?.post).toMatchObject({
      responses: {
        201: { content: { 'application/json': { schema: { $ref: '#/components/schemas/ProjectCreated' } } } },
      },
    });
  });
});
