import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { verifyPassword } from '../../src/access/passwords.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { orgMembers } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * The operator CLI (`npm run admin`, src/cli/admin.ts) run as a process, as an operator runs it: with the
 * service's own configuration (DATA_DIR with the generated admin.key, PORT) and nothing else.
 */

const root = new URL('../../', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'nfse-admin-cli-'));
let t: TestService;
/** The data directory of a service in embedded mode: its operator key is in admin.key, not in the environment. */
let dataDir: string;

beforeAll(async () => {
  t = await startTestService();
  dataDir = join(work, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(join(dataDir, 'admin.key'), `${t.adminKey}\n`, { mode: 0o600 });
});
afterAll(async () => {
  await t?.close();
  rmSync(work, { recursive: true, force: true });
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a process (asynchronous: the service answering it lives in this process). */
function admin(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['NFSE_ADMIN_KEY', 'PORT', 'HOST', 'DATA_DIR', 'DATABASE_URL', 'npm_lifecycle_event']) {
    delete base[name];
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
      cwd: root,
      env: { ...base, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** What an operator has next to the service: its DATA_DIR and PORT. */
const serviceEnv = () => ({ DATA_DIR: dataDir, PORT: new URL(t.baseUrl).port });

function oneLine(r: Run, status: number, message: RegExp) {
  expect(r.status, r.stderr).toBe(status);
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

describe('npm run admin', () => {
  it('prints the usage for --help and <command> --help, exit 0', async () => {
    const top = await admin(['--help']);
    expect(top.status, top.stderr).toBe(0);
    expect(top.stdout).toMatch(/^usage: npm run admin -- <command>/);
    for (const command of ['org list', 'member create', 'cert sandbox --cnpj']) expect(top.stdout).toContain(command);
    const commands = [
      ['member', '--help'],
      ['org', 'list', '--help'],
      ['cert', 'sandbox', '--help'],
      ['help', 'member'],
    ];
    for (const r of await Promise.all(commands.map((args) => admin(args)))) {
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^usage:/);
    }
  });

  it('answers bad usage with one line and exit 64, never a stack trace', async () => {
    const cases: [string[], RegExp][] = [
      [[], /^admin: a command is required \(npm run admin -- --help\)$/],
      [['member', 'create', '--org', 'x'], /^admin: member create: --email is required/],
      [['member', 'create', '--org', 'x', '--email', 'ana'], /--email "ana" is not an e-mail address/],
      [
        ['member', 'create', '--org', 'x', '--email', 'a@b.co', '--password', 'short'],
        /--password must have 12 to 256/,
      ],
      [['member', 'delete'], /^admin: unknown command "member delete"/],
      [['org', 'list', '--bogus'], /^admin: Unknown option '--bogus'/],
      [['cert', 'sandbox'], /--cnpj is required/],
    ];
    const runs = await Promise.all(cases.map(([args]) => admin(args, serviceEnv())));
    for (const [i, [, message]] of cases.entries()) oneLine(runs[i]!, 64, message);
  });

  it('without an operator key (no NFSE_ADMIN_KEY, no admin.key in DATA_DIR): one line naming both, exit 78', async () => {
    const r = await admin(['org', 'list'], { DATA_DIR: join(work, 'empty'), PORT: '1' });
    oneLine(r, 78, /no operator key: set NFSE_ADMIN_KEY .*admin\.key/);
  });

  it('a service that is not running: one line, exit 1', async () => {
    const r = await admin(['org', 'list'], { DATA_DIR: dataDir, PORT: '9' });
    oneLine(r, 1, /^admin: cannot reach the service at http:\/\/127\.0\.0\.1:9\/api\/v1 .*npm start/);
  });

  it('org create, org list and member create with the configuration of the service only', async () => {
    const created = await admin(['org', 'create', '--name', 'Acme Operações'], serviceEnv());
    expect(created.status, created.stderr).toBe(0);
    const org = JSON.parse(created.stdout);
    expect(org.token).toMatch(/^svc_org_/);

    const list = await admin(['org', 'list'], serviceEnv());
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^id\s+plan\s+credits\s+projects\s+tokens\s+name$/);
    expect(list.stdout).toMatch(new RegExp(`^${org.id}\\s+free\\s+0\\s+0\\s+1\\s+Acme Operações$`, 'm'));
    const json = await admin(['org', 'list', '--json'], serviceEnv());
    expect(JSON.parse(json.stdout)).toContainEqual(expect.objectContaining({ id: org.id, name: 'Acme Operações' }));

    const member = await admin(['member', 'create', '--org', org.id, '--email', 'Ana@Example.com'], serviceEnv());
    expect(member.status, member.stderr).toBe(0);
    const m = JSON.parse(member.stdout);
    expect(m).toMatchObject({ orgId: org.id, email: 'ana@example.com' });
    expect(m.password).toMatch(/^[A-Za-z0-9_-]{24}$/); // generated, shown once
    const [row] = await t.service.ctx.db.select().from(orgMembers).where(eq(orgMembers.id, m.id));
    expect(row!.passwordHash).toMatch(/^scrypt\$32768\$8\$3\$/);
    expect(await verifyPassword(m.password, row!.passwordHash)).toBe(true);
    expect(await verifyPassword('not-the-password', row!.passwordHash)).toBe(false);

    const chosen = await admin(
      ['member', 'create', '--org', org.id, '--email', 'bia@example.com', '--password', 'uma senha longa'],
      serviceEnv(),
    );
    expect(chosen.status, chosen.stderr).toBe(0);
    expect(JSON.parse(chosen.stdout)).not.toHaveProperty('password');
    const taken = await admin(['member', 'create', '--org', org.id, '--email', 'ANA@example.com'], serviceEnv());
    oneLine(taken, 1, /^admin: HTTP 409 MEMBER_EMAIL_TAKEN: A member with the e-mail ana@example.com exists$/);

    const unknown = await admin(
      ['member', 'create', '--org', '00000000-0000-4000-8000-000000000000', '--email', 'a@b.co'],
      serviceEnv(),
    );
    oneLine(unknown, 1, /^admin: HTTP 404 NOT_FOUND: Organization not found$/);
  });

  it('cert sandbox writes an A1 certificate (0600) that the project accepts and the local sandbox issues with', async () => {
    const p = await onboardProject(t, { withCertificate: false });
    const out = join(work, 'empresa.pfx');
    const r = await admin(['cert', 'sandbox', '--cnpj', p.cnpj, '--out', out, '--password', 'segredo-1'], {});
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`CN=EMPRESA DE TESTE LTDA:${p.cnpj}`);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const pfx = readFileSync(out);
    expect(readPkcs12(pfx, 'segredo-1')).toMatchObject({ ok: true, value: { cnpj: p.cnpj } });
    oneLine(await admin(['cert', 'sandbox', '--cnpj', p.cnpj, '--out', out]), 64, /exists; choose another --out/);

    const form = new FormData();
    form.set('password', 'segredo-1');
    form.set('file', new Blob([new Uint8Array(pfx)], { type: 'application/x-pkcs12' }), 'empresa.pfx');
    const upload = await t.request('POST', `/org/projects/${p.projectId}/certificate`, {
      key: p.orgToken,
      rawBody: form,
    });
    expect(upload.status, upload.text).toBe(201);
    const issued = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(issued.status, issued.text).toBe(202);
    expect(await waitForInvoice(t, p.apiKey, issued.body.invoiceId)).toMatchObject({ status: 'issued' });
  });
});
