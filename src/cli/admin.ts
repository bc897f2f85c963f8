import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * Operator CLI over the admin API (organization tokens are "created in the dashboard"; until one exists
 * this is how an operator onboards organizations).
 *
 *   npm run admin -- org create --name Acme --plan pro
 *   npm run admin -- org plan --org <id> --plan enterprise
 *   npm run admin -- token create --org <id> --name ci [--scopes projects:read,projects:write]
 *   npm run admin -- token revoke --org <id> --token <tokenId>
 *
 * Server: NFSE_API_URL (default http://127.0.0.1:$PORT/api/v1); key: NFSE_ADMIN_KEY or $DATA_DIR/admin.key.
 */
const usage = `usage:
  npm run admin -- org create --name <name> [--plan free|dev|pro|enterprise]
  npm run admin -- org plan --org <orgId> --plan <plan>
  npm run admin -- token create --org <orgId> --name <name> [--scopes a,b]
  npm run admin -- token revoke --org <orgId> --token <tokenId>`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    plan: { type: 'string' },
    org: { type: 'string' },
    token: { type: 'string' },
    scopes: { type: 'string' },
    url: { type: 'string' },
  },
});

function adminKey(): string {
  if (process.env.NFSE_ADMIN_KEY) return process.env.NFSE_ADMIN_KEY;
  const file = resolve(process.env.DATA_DIR || './data', 'admin.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  console.error('No operator key: set NFSE_ADMIN_KEY or start the service once (it writes DATA_DIR/admin.key)');
  process.exit(2);
}

const base = (values.url ?? process.env.NFSE_API_URL ?? `http://127.0.0.1:${process.env.PORT || 3000}/api/v1`).replace(
  /\/+$/,
  '',
);

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': adminKey(), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let out: unknown = text;
  try {
    out = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  console.log(JSON.stringify(out, null, 2));
  if (!res.ok) process.exit(1);
}

function required(name: keyof typeof values): string {
  const v = values[name];
  if (!v) {
    console.error(`--${name} is required\n${usage}`);
    process.exit(2);
  }
  return v as string;
}

const [resource, action] = positionals;
if (resource === 'org' && action === 'create') {
  await call('POST', '/admin/organizations', { name: required('name'), ...(values.plan ? { plan: values.plan } : {}) });
} else if (resource === 'org' && action === 'plan') {
  await call('PUT', `/admin/organizations/${required('org')}/plan`, { plan: required('plan') });
} else if (resource === 'token' && action === 'create') {
  await call('POST', `/admin/organizations/${required('org')}/tokens`, {
    name: required('name'),
    ...(values.scopes ? { scopes: values.scopes.split(',').map((s) => s.trim()) } : {}),
  });
} else if (resource === 'token' && action === 'revoke') {
  await call('DELETE', `/admin/organizations/${required('org')}/tokens/${required('token')}`);
} else {
  console.error(usage);
  process.exit(2);
}
