import { chmodSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../http/openapi-document.ts';

/**
 * `npm run openapi`: writes the document the service serves at GET /api/v1/openapi.json to docs/openapi.json
 * (committed; test/service/openapi.test.ts fails when the served document drifts from it).
 */
const target = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
const document = await buildOpenApiDocument();
writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
chmodSync(target, 0o644); // building the app's configuration set the umask of a private data directory
process.stdout.write(`${target}: ${Object.keys(document.paths as object).length} paths\n`);
