import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppContext } from '../context.ts';
import { loadConfig } from '../config.ts';
import { buildApp } from './app.ts';
import { withNamedSchemas } from './openapi-components.ts';

/** The API address the committed document names (the service's defaults: HOST 127.0.0.1, PORT 3000). */
export const DOCUMENT_SERVER_URL = 'http://127.0.0.1:3000';

/**
 * The OpenAPI document the service serves at GET /api/v1/openapi.json, built from the same Fastify app without
 * listening and without a database (named schemas: ./openapi-components.ts): the routes are only registered, never called, so every collaborator but the
 * configuration is a stand-in that refuses to be used. `servers` names the default address.
 */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'nfse-openapi-'));
  try {
    const config = loadConfig(
      {
        DATA_DIR: dataDir,
        PUBLIC_BASE_URL: DOCUMENT_SERVER_URL,
        NFSE_ADMIN_KEY: `svc_admin_${'0'.repeat(32)}`,
        NFSE_MASTER_KEY: '0'.repeat(64),
        LOG_LEVEL: 'silent',
      },
      [],
    );
    // route modules may construct their services at registration: they get hollow stand-ins (any property or
    // call gives another one), which only a handler would notice, and no handler runs
    const hollow: object = new Proxy(function hollowCollaborator() {}, {
      get: (_target, property) => (property === 'then' ? undefined : hollow),
      apply: () => hollow,
      construct: () => hollow,
    });
    const ctx = new Proxy({ config } as AppContext, {
      get: (target, property) => (property === 'config' ? target.config : hollow),
    });
    const app = await buildApp(ctx, { logger: false });
    try {
      await app.ready();
      return withNamedSchemas(app.swagger() as unknown as Record<string, unknown>);
    } finally {
      await app.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
