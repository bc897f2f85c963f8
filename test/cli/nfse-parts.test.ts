import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { csvToInvoices, invoiceColumns, parseCsv } from '../../src/cli/nfse/csv.ts';
import { parseHeaderFile, verifyDelivery } from '../../src/cli/nfse/webhook-verify.ts';
import { signatureHeaders } from '../../src/webhooks/signing.ts';

const root = new URL('../../', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'nfse-parts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('CSV mapping to the POST /emitir body', () => {
  it('takes the JSON type of each column from the API schema', () => {
    const columns = invoiceColumns();
    expect(columns.get('valores.total')).toBe('number');
    expect(columns.get('valores.aliquotaIss')).toBe('number');
    expect(columns.get('valores.tribISSQN')).toBe('number');
    expect(columns.get('valores.issRetido')).toBe('boolean');
    expect(columns.get('tomador.cnpj')).toBe('string');
    expect(columns.get('tomador.endereco.cep')).toBe('string');
    expect(columns.get('valores.ibscbs.tipoOperacao')).toBe('string');
    expect(columns.get('valores.ibscbs.consumidorFinal')).toBe('string-or-boolean');
  });

  it('parses quotes, types and a ;-separated file with decimal commas', () => {
    const text =
      '\ufefftomador.cnpj;tomador.nome;servico.descricao;valores.total;valores.issRetido;valores.ibscbs.consumidorFinal;servico.codigo\r\n' +
      '01444777000161;"Cliente; ""Aspas""";"linha 1\nlinha 2";1500,50;TRUE;1;010101\r\n' +
      '11444777000161;B;C;7;;;\r\n';
    const { items, issues } = csvToInvoices(parseCsv(text));
    expect(issues).toEqual([]);
    expect(items[0]).toEqual({
      tomador: { cnpj: '01444777000161', nome: 'Cliente; "Aspas"' },
      servico: { descricao: 'linha 1\nlinha 2', codigo: '010101' },
      valores: { total: 1500.5, issRetido: true, ibscbs: { consumidorFinal: '1' } },
    });
    expect(items[1]).toEqual({
      tomador: { cnpj: '11444777000161', nome: 'B' },
      servico: { descricao: 'C' },
      valores: { total: 7 },
    });
  });

  it('names the row and column of every problem and sends nothing', () => {
    const unknown = csvToInvoices(parseCsv('tomador.cnpj,valores.totl\n1,2\n'));
    expect(unknown.issues).toEqual([
      { row: 0, column: 'valores.totl', message: 'is not a field of POST /emitir (see README, "CLI nfse")' },
    ]);
    const bad = csvToInvoices(parseCsv('valores.total,valores.issRetido\n"1,500.00",sim\n1500,false,extra\n'));
    expect(bad.issues).toEqual([
      expect.objectContaining({ row: 1, column: 'valores.total' }),
      expect.objectContaining({ row: 1, column: 'valores.issRetido', message: 'must be true or false, got "sim"' }),
      { row: 2, column: '*', message: 'has 3 cells, the header has 2' },
    ]);
    // in a ,-separated file a decimal comma is not a number
    expect(csvToInvoices(parseCsv('valores.total\n"1500,50"\n')).issues).toHaveLength(1);
  });
});

describe('webhooks verify', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = '{"event":"nfse.issued","deliveryId":"d1","data":{"invoiceId":"x"}}';
  const ts = 1_790_000_000;
  const headers = {
    'webhook-id': 'd1',
    'webhook-timestamp': String(ts),
    'x-svc-delivery': 'd1',
    ...signatureHeaders({ current: secret, previous: 'old-secret' }, 'd1', ts, body),
  };

  it('accepts a delivery signed by the service (both schemes, the rotated secret too)', () => {
    const report = verifyDelivery(Buffer.from(body), headers, secret, { toleranceSeconds: 300, nowSeconds: ts + 10 });
    expect(report.ok).toBe(true);
    expect(report.lines).toContain('X-Svc-Signature: valid');
    expect(report.lines).toContain('webhook-signature: valid (signature 1 of 2)');
    const old = verifyDelivery(Buffer.from(body), headers, 'old-secret', { toleranceSeconds: 0 });
    expect(old.lines).toContain('webhook-signature: valid (signature 2 of 2)');
    expect(old.ok).toBe(false); // X-Svc-Signature uses the new secret only
  });

  it('refuses a changed body, a wrong secret and an old timestamp', () => {
    const changed = verifyDelivery(Buffer.from(`${body} `), headers, secret, { toleranceSeconds: 0 });
    expect(changed.ok).toBe(false);
    expect(changed.lines.filter((l) => l.includes('INVALID'))).toHaveLength(2);
    expect(verifyDelivery(Buffer.from(body), headers, 'whsec_other', { toleranceSeconds: 0 }).ok).toBe(false);
    const stale = verifyDelivery(Buffer.from(body), headers, secret, { toleranceSeconds: 300, nowSeconds: ts + 3600 });
    expect(stale.ok).toBe(false);
    expect(stale.lines.at(-1)).toContain('OUTSIDE the 300 s replay window');
  });

  it('reads headers as JSON or as header lines', () => {
    expect(parseHeaderFile('HTTP/1.1 200 OK\r\nWebhook-Id: d1\r\nX-Svc-Signature: sha256=ab\r\n')).toEqual({
      'webhook-id': 'd1',
      'x-svc-signature': 'sha256=ab',
    });
    expect(parseHeaderFile('{"Webhook-Id": "d1"}')).toEqual({ 'webhook-id': 'd1' });
  });

  it('runs as a command: exit 0 when valid, 1 when not', () => {
    writeFileSync(join(work, 'body.bin'), body);
    writeFileSync(join(work, 'headers.json'), JSON.stringify(headers));
    const run = (s: string) =>
      spawnSync(
        process.execPath,
        [
          'bin/nfse.mjs',
          'webhooks',
          'verify',
          '--secret',
          s,
          '--body',
          join(work, 'body.bin'),
          '--headers',
          join(work, 'headers.json'),
          '--tolerance',
          '0',
        ],
        { cwd: root, encoding: 'utf8' },
      );
    const good = run(secret);
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/OK\n$/);
    expect(run('whsec_wrong').status).toBe(1);
  });
});

describe('usage errors: one line, exit 64 (EX_USAGE)', () => {
  const cases: [string, string[], RegExp][] = [
    ['src/cli/nfse.ts', ['frobnicate'], /^nfse: unknown command "frobnicate" \(nfse --help\)$/],
    ['src/cli/nfse.ts', ['emit', '--nope'], /^nfse: Unknown option '--nope'/],
    ['src/cli/nfse.ts', ['download', 'abc', '--xml', '--pdf', '--key', 'svc_x'], /exactly one of --xml and --pdf/],
    ['src/cli/nfse.ts', ['emit', 'missing.csv', '--key', 'svc_x'], /missing\.csv: no such file/],
    ['src/cli/admin.ts', ['frobnicate'], /^admin: unknown command "frobnicate"/],
    ['src/cli/admin.ts', ['org', 'create'], /^admin: org create: --name is required/],
    ['src/cli/admin.ts', ['cert', 'sandbox', '--cnpj', '11222333000100'], /is not a CNPJ with valid check digits/],
    ['src/cli/admin.ts', ['org', 'list', '--bogus'], /^admin: Unknown option '--bogus'/],
  ];
  it.each(cases)('%s %j', (script, args, message) => {
    const env = { ...process.env };
    delete env.NFSE_API_KEY;
    const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(64);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  it('--help of each CLI and command answers 0 with the usage', () => {
    for (const [script, args] of [
      ['src/cli/nfse.ts', ['--help']],
      ['src/cli/nfse.ts', ['emit', '--help']],
      ['src/cli/admin.ts', ['--help']],
      ['src/cli/admin.ts', ['cert', '--help']],
    ] as const) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^usage: /);
    }
  });
});
