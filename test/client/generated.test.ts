import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_FILE, generateClient, OPENAPI_FILE, type OpenApiDocument } from '../../scripts/generate-client.ts';
import { NfseClient, operations } from '../../packages/client/src/index.ts';
import { EVENT_TYPES } from '../../src/events/outbox.ts';
import { TEST_EVENT } from '../../src/webhooks/deliveries.ts';

/**
 * packages/client/src/generated.ts is what scripts/generate-client.ts produces from the committed
 * docs/openapi.json (`npm run openapi` regenerates both; `npm run generate-client` only the client).
 */

const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;

describe('the generated client', () => {
  it('is what the generator produces from docs/openapi.json (run `npm run generate-client`)', () => {
    const committed = readFileSync(CLIENT_FILE, 'utf8');
    const fresh = generateClient(document);
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(
        `packages/client/src/generated.ts is stale from line ${line + 1} (${JSON.stringify(b[line])}): run \`npm run generate-client\``,
      );
    }
  });

  it('has one method per operationId, with the method, path and credential of the document', () => {
    const ids: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const id = operation.operationId!;
        ids.push(id);
        expect(typeof (NfseClient.prototype as unknown as Record<string, unknown>)[id], id).toBe('function');
        const spec = operations[id as keyof typeof operations];
        expect(spec).toMatchObject({ method: method.toUpperCase(), path });
        const expected = path.startsWith('/api/v1/org/')
          ? 'organization'
          : path.startsWith('/api/v1/admin/')
            ? 'operator'
            : operation.security?.length === 0
              ? 'none'
              : 'project';
        expect(spec.auth, id).toBe(expected);
      }
    }
    expect(Object.keys(operations).sort()).toEqual(ids.sort());
  });

  it('types every webhook event the document describes, and the document describes every event', () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES, TEST_EVENT].sort());
    const generated = readFileSync(CLIENT_FILE, 'utf8');
    for (const event of Object.keys(document.webhooks!)) expect(generated).toContain(`event: '${event}';`);
  });
});
