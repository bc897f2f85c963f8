import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_SERVER_URL } from '../../src/http/openapi-document.ts';
import { startTestService, type TestService } from '../support/harness.ts';

/**
 * docs/openapi.json (written by `npm run openapi`) is the document the service serves at GET /api/v1/openapi.json,
 * and every operation in it has a unique operationId (the typed clients and the linters key on it).
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
});
