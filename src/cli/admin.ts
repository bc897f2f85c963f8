import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { newPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../access/passwords.ts';
import { createA1Certificate } from '../certificates/generate.ts';
import { ConfigError, operatorAccess } from '../config.ts';
import { normalizeCnpj } from '../domain/tax-ids.ts';

/**
 * Operator CLI: `npm run admin -- <command>`. It reads the service's own configuration with the service's loader
 * and defaults (src/config.ts `operatorAccess`): the API at http://HOST:PORT/api/v1 and the operator key
 * NFSE_ADMIN_KEY or, in embedded mode, the one the service generated into DATA_DIR/admin.key; nothing to set by
 * hand next to a service started with the same environment. `cert sandbox` works offline. Exit codes (sysexits):
 * 0 done, 1 the service refused or cannot be reached, 64 bad usage, 78 bad configuration (no operator key).
 */

const HELP: Record<string, string> = {
  '': `usage: npm run admin -- <command> [options]

commands:
  org create --name <name> [--plan free|dev|pro|enterprise]   create an organization; prints its token (svc_org_…)
  org list [--json]                                        list the organizations
  org plan --org <orgId> --plan <plan>                     change an organization's plan
  org limits --org <orgId> --key-rate-ceiling <n|default>  set (or reset to the plan's) the ceiling of its keys' rate
  token create --org <orgId> --name <name> [--scopes a,b]  create another organization token
  token revoke --org <orgId> --token <tokenId>             revoke an organization token
  member create --org <orgId> --email <e-mail> [--password <p>]
                                                           create a member (e-mail and password sign-in)
  cert sandbox --cnpj <cnpj> [--out file.pfx] [--password <p>] [--name <company>]
                                                           write a test A1 certificate for the local sandboxes

npm run admin -- <command> --help shows one command. The service is reached at http://HOST:PORT/api/v1 (the
service's own PORT, HOST and their defaults 127.0.0.1:3000; --url to override) with NFSE_ADMIN_KEY or
DATA_DIR/admin.key (default ./data, as for the service). Exit codes: 0 done, 1 refused or unreachable, 64 bad
usage, 78 configuration.`,
  org: `usage:
  npm run admin -- org create --name <name> [--plan free|dev|pro|enterprise]
      creates an organization (default plan free) and prints it with its first token (svc_org_…, shown once)
  npm run admin -- org list [--json]
      lists the organizations: id, plan, credits used this period, active projects and tokens, name
  npm run admin -- org plan --org <orgId> --plan <plan>
      changes the plan
  npm run admin -- org limits --org <orgId> --key-rate-ceiling <n|default>
      sets the ceiling of the organization's project keys' rateLimitPerMinute (default: the plan's, capped by
      NFSE_MAX_KEY_RATE_LIMIT)`,
  token: `usage:
  npm run admin -- token create --org <orgId> --name <name> [--scopes projects:read,projects:write,…]
      creates an organization token (every scope by default) and prints it (shown once)
  npm run admin -- token revoke --org <orgId> --token <tokenId>`,
  member: `usage: npm run admin -- member create --org <orgId> --email <e-mail> [--password <p>]

Creates a member of the organization: a person who signs in with e-mail and password (the first member of an
organization is created this way). The e-mail is stored lowercase and belongs to one organization. Without
--password a random one is generated and printed (shown once); a password has ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters and is
stored only as a scrypt hash. (--password puts it in the shell history: prefer the generated one.)`,
  cert: `usage: npm run admin -- cert sandbox --cnpj <cnpj> [--out file.pfx] [--password <p>] [--name <company>] [--days 365]

Writes an ICP-Brasil-shaped test A1 certificate (PKCS#12, RSA 2048, CN "<name>:<cnpj>", the CNPJ in the
ICP-Brasil otherName) that the local Sefin sandbox accepts. Upload it with POST /org/projects/{id}/certificate.
It is self-signed and trusted by nothing else: for the sandboxes only. Default --out <cnpj>.pfx (never
overwritten), default --password a random one (printed).`,
};

class Usage extends Error {}

function fail(message: string, code: number): never {
  process.stderr.write(`admin: ${message}\n`);
  process.exit(code);
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        name: { type: 'string' },
        plan: { type: 'string' },
        org: { type: 'string' },
        token: { type: 'string' },
        scopes: { type: 'string' },
        'key-rate-ceiling': { type: 'string' },
        url: { type: 'string' },
        json: { type: 'boolean' },
        cnpj: { type: 'string' },
        out: { type: 'string', short: 'o' },
        password: { type: 'string' },
        days: { type: 'string' },
        email: { type: 'string' },
      },
    });
  } catch (err) {
    throw new Usage((err as Error).message);
  }
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parse(argv);
  const [resource, action, ...extra] = positionals;
  if (resource === 'help' || (!resource && values.help)) {
    process.stdout.write(`${HELP[action ?? ''] ?? HELP['']}\n`);
    return 0;
  }
  if (!resource) throw new Usage('a command is required');
  if (!(resource in HELP)) throw new Usage(`unknown command "${resource}"`);
  if (values.help) {
    process.stdout.write(`${HELP[resource]}\n`);
    return 0;
  }
  if (extra.length > 0) throw new Usage(`unexpected argument "${extra[0]}"`);
  const required = (name: 'name' | 'plan' | 'org' | 'token' | 'cnpj' | 'key-rate-ceiling' | 'email'): string => {
    const v = values[name];
    if (!v) throw new Usage(`${resource} ${action}: --${name} is required`);
    return v;
  };

  if (resource === 'cert') {
    if (action !== 'sandbox') throw new Usage(`unknown command "cert ${action ?? ''}" (cert sandbox --cnpj …)`);
    const cnpj = normalizeCnpj(required('cnpj'));
    if (!cnpj) throw new Usage(`--cnpj "${values.cnpj}" is not a CNPJ with valid check digits`);
    const days = values.days === undefined ? 365 : Number(values.days);
    if (!Number.isInteger(days) || days < 1 || days > 3650) throw new Usage('--days must be an integer from 1 to 3650');
    const out = resolve(values.out ?? `${cnpj}.pfx`);
    if (existsSync(out)) throw new Usage(`${out} exists; choose another --out`);
    const password = values.password ?? `sandbox-${randomBytes(6).toString('hex')}`;
    const name = (values.name ?? 'EMPRESA DE TESTE LTDA').toUpperCase();
    const notBefore = new Date(Date.now() - 60_000);
    const a1 = createA1Certificate({
      cnpj,
      name,
      password,
      notBefore,
      notAfter: new Date(notBefore.getTime() + days * 86_400_000),
    });
    writeFileSync(out, a1.pfx, { mode: 0o600 });
    process.stdout.write(
      `${out}\n  subject  CN=${name}:${cnpj} (test certificate, self-signed: accepted by the local sandboxes only)\n` +
        `  valid    until ${new Date(notBefore.getTime() + days * 86_400_000).toISOString()}\n` +
        `  password ${password}\n`,
    );
    return 0;
  }

  const command = `${resource} ${action ?? ''}`.trim();
  const commands = [
    'org create',
    'org list',
    'org plan',
    'org limits',
    'token create',
    'token revoke',
    'member create',
  ];
  if (!commands.includes(command)) {
    throw new Usage(action ? `unknown command "${command}"` : `${resource}: a subcommand is required`);
  }
  const needs: Record<string, ('name' | 'plan' | 'org' | 'token' | 'key-rate-ceiling' | 'email')[]> = {
    'org create': ['name'],
    'org plan': ['org', 'plan'],
    'org limits': ['org', 'key-rate-ceiling'],
    'token create': ['org', 'name'],
    'token revoke': ['org', 'token'],
    'member create': ['org', 'email'],
  };
  for (const name of needs[command] ?? []) required(name);
  if (command === 'member create') {
    if (!EMAIL.test(required('email'))) throw new Usage(`--email "${values.email}" is not an e-mail address`);
    const length = values.password?.length ?? PASSWORD_MIN_LENGTH;
    if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
      throw new Usage(`--password must have ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
    }
  }
  if (access instanceof ConfigError) fail(`configuration error: ${access.message}`, 78);
  const key = access.adminKey;
  if (!key) {
    fail(
      `no operator key: set NFSE_ADMIN_KEY (as for the service) or start the service once in embedded mode (it writes ${access.adminKeyFile})`,
      78,
    );
  }
  const base = (values.url ?? access.apiUrl).replace(/\/+$/, '');

  async function call(method: string, path: string, body?: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: { 'x-api-key': key!, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch (err) {
      const cause = (err as Error).cause as Error | undefined;
      fail(
        `cannot reach the service at ${base} (${cause?.message ?? (err as Error).message}); is it running (npm start)?`,
        1,
      );
    }
    const text = await res.text();
    let out: unknown = text;
    try {
      out = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    if (!res.ok) {
      const p = out as { code?: string; detail?: string };
      fail(`HTTP ${res.status}${p?.code ? ` ${p.code}` : ''}: ${p?.detail ?? text}`, 1);
    }
    return out;
  }
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

  switch (command) {
    case 'org create':
      print(
        await call('POST', '/admin/organizations', {
          name: required('name'),
          ...(values.plan ? { plan: values.plan } : {}),
        }),
      );
      return 0;
    case 'org list': {
      const list = (await call('GET', '/admin/organizations')) as {
        data: { id: string; name: string; plan: string; creditsUsed: number; projects: number; activeTokens: number }[];
      };
      if (values.json) {
        print(list.data);
        return 0;
      }
      const rows = [
        ['id', 'plan', 'credits', 'projects', 'tokens', 'name'],
        ...list.data.map((o) => [
          o.id,
          o.plan,
          String(o.creditsUsed),
          String(o.projects),
          String(o.activeTokens),
          o.name,
        ]),
      ];
      const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
      for (const r of rows)
        process.stdout.write(
          `${r
            .map((cell, c) => cell.padEnd(widths[c]!))
            .join('  ')
            .trimEnd()}\n`,
        );
      if (list.data.length === 0) process.stdout.write('(no organization yet: npm run admin -- org create --name …)\n');
      return 0;
    }
    case 'org plan':
      print(await call('PUT', `/admin/organizations/${required('org')}/plan`, { plan: required('plan') }));
      return 0;
    case 'org limits': {
      const raw = required('key-rate-ceiling');
      if (raw !== 'default' && !/^\d+$/.test(raw)) throw new Usage('--key-rate-ceiling must be a number or "default"');
      print(
        await call('PUT', `/admin/organizations/${required('org')}/limits`, {
          keyRateLimitCeiling: raw === 'default' ? null : Number(raw),
        }),
      );
      return 0;
    }
    case 'token create':
      print(
        await call('POST', `/admin/organizations/${required('org')}/tokens`, {
          name: required('name'),
          ...(values.scopes ? { scopes: values.scopes.split(',').map((s) => s.trim()) } : {}),
        }),
      );
      return 0;
    case 'member create': {
      const password = values.password ?? newPassword();
      const member = (await call('POST', `/admin/organizations/${required('org')}/members`, {
        email: required('email'),
        password,
      })) as Record<string, unknown>;
      print(values.password ? member : { ...member, password });
      return 0;
    }
    case 'token revoke':
      await call('DELETE', `/admin/organizations/${required('org')}/tokens/${required('token')}`);
      process.stdout.write('revoked\n');
      return 0;
  }
  throw new Usage(`unknown command "${command}"`);
}

/** A first check of --email before asking the service (which validates the address itself). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

// The service's configuration, read where `npm start` reads it (the package directory: a relative DATA_DIR, and
// the default ./data, mean the same directory for both)
let access: ReturnType<typeof operatorAccess> | ConfigError;
try {
  access = operatorAccess();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  access = err;
}
// `npm run …` starts scripts in the package directory: file arguments are relative to where the user typed it
if (process.env.npm_lifecycle_event && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof Usage) fail(`${err.message} (npm run admin -- --help)`, 64);
  fail((err as Error).message, 1);
}
