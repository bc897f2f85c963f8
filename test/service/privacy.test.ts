import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations } from '../../src/db/schema.ts';
import { createLogger, scrubText } from '../../src/logging.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject, TAKER } from '../support/onboarding.ts';
import { tinyPng } from '../support/route-checks.ts';

/**
 * Smaller leaks (issue 9, item 8): logs never carry request bodies or personal data, and DATA_DIR is private to
 * the service's user whatever the umask. The service runs with its own logger configuration (src/logging.ts)
 * writing into a capture, at debug level so every request line is there, under a permissive umask.
 */

const lines: string[] = [];
const capture = new Writable({
  write(chunk, _encoding, done) {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});

const PERSONAL = {
  cnpj: TAKER.cnpj,
  email: 'maria.silva@cliente-exemplo.com.br',
  nome: 'Maria da Silva Sauro',
  logradouro: 'Rua Secreta das Palmeiras',
  password: 'segredo-muito-secreto',
};

let t: TestService;
let previousUmask: number;

beforeAll(async () => {
  previousUmask = process.umask(0o000); // as permissive as it gets
  t = await startTestService({ LOG_LEVEL: 'debug' }, { logger: createLogger('debug', capture) });
});
afterAll(async () => {
  await t?.close();
  process.umask(previousUmask);
});

describe('logs', () => {
  it('carry no request body, personal data or key, even in errors from the database', async () => {
    const p = await onboardProject(t, { rateLimitPerMinute: 600 });
    // requests carrying personal data: accepted, refused by validation, and refused with a malformed body
    const tomador = { ...TAKER, nome: PERSONAL.nome, email: PERSONAL.email };
    const ok = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ tomador }) });
    expect(ok.status, ok.text).toBe(202);
    await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody({ tomador, valores: { total: -5 } }) });
    await t.request('POST', '/emitir', {
      key: p.apiKey,
      rawBody: `{"tomador": {"email": "${PERSONAL.email}", `,
      headers: { 'content-type': 'application/json' },
    });
    await t.request('GET', `/invoices?cnpj=${PERSONAL.cnpj}`, { key: p.apiKey });

    // a database error whose message names the values (a driver puts the query parameters in it)
    const ctx = t.service.ctx;
    const failed = await ctx.db
      .insert(organizations)
      .values({ name: PERSONAL.nome, slug: `${PERSONAL.email}-${PERSONAL.cnpj}`, planSlug: 'no-such-plan' })
      .catch((err: unknown) => err as Error);
    expect(String((failed as Error).message)).toContain(PERSONAL.email); // the raw error does carry it
    ctx.logger.error({ err: failed, body: { tomador }, tomador, cnpj: PERSONAL.cnpj }, 'unhandled error');
    ctx.logger.warn({ request: { body: { endereco: { logradouro: PERSONAL.logradouro } } } }, 'with a body');
    ctx.logger.warn(`message naming ${PERSONAL.email}, ${PERSONAL.cnpj}, 123.456.789-09 and ${p.apiKey}`);
    ctx.logger.info({ password: PERSONAL.password, secret: PERSONAL.password, key: p.apiKey }, 'credentials');

    const output = lines.join('\n');
    expect(output).toContain('unhandled error'); // the capture works
    expect(output).toContain('/emitir');
    for (const [what, value] of Object.entries({ ...PERSONAL, apiKey: p.apiKey, org: p.orgToken })) {
      expect(output, what).not.toContain(value);
    }
    expect(output).not.toContain('12345678909');
    expect(output).not.toContain('123.456.789-09');
    expect(output).toContain('[redacted]');
  });

  it('scrubs driver parameters, key details, tax ids and e-mails from free text', () => {
    expect(scrubText('Failed query: insert …\nparams: 11444777000161,a@b.com')).not.toMatch(/11444777000161|a@b\.com/);
    expect(scrubText('Key (cnpj)=(11444777000161) already exists.')).toBe('Key (cnpj)=([redacted]) already exists.');
    expect(scrubText('cpf 123.456.789-09 and 12345678909')).toBe('cpf [redacted id] and [redacted id]');
    expect(scrubText('invoice 7f3c2a10-0000-4000-8000-000000000001 issued')).toContain('7f3c2a10');
  });
});

describe('DATA_DIR', () => {
  it('is 0700 and everything under it 0700 (directories) / no group or other access (files), under umask 000', async () => {
    // write something in every area: documents (a logo), the database, the keys
    const p = await onboardProject(t, { rateLimitPerMinute: 600 });
    const form = new FormData();
    const png = tinyPng();
    form.set('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'logo.png');
    const logo = await t.request('POST', `/org/projects/${p.projectId}/logo`, { key: p.orgToken, rawBody: form });
    expect(logo.status, logo.text).toBe(201);

    const loose: string[] = [];
    let files = 0;
    const walk = (path: string) => {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return;
      if (stat.isDirectory()) {
        if ((stat.mode & 0o777) !== 0o700) loose.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
        for (const entry of readdirSync(path)) walk(join(path, entry));
      } else {
        files++;
        if ((stat.mode & 0o077) !== 0) loose.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
      }
    };
    walk(t.dataDir);
    expect(files).toBeGreaterThan(3);
    expect(loose).toEqual([]);
  });
});
