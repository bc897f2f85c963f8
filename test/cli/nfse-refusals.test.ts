import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/cli/nfse/csv.ts';
import { invoices } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/** `nfse emit` with rows the API refuses, and with a JSON file; `status`, `download` and `cancel` over HTTP. */

const root = new URL('../../', import.meta.url).pathname;
let t: TestService;
let p: OnboardedProject;
let dir: string;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t, { rateLimitPerMinute: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'nfse-refusals-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI as a separate process (asynchronously: the service under test lives in this process). */
function nfse(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['bin/nfse.mjs', ...args], {
    cwd: root,
    env: { ...process.env, NFSE_API_KEY: p.apiKey, NFSE_API_URL: t.api },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('latin1').on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

describe('nfse emit with refused rows', () => {
  it('reports the refused rows with their errors, issues the others of their chunks, exits 1', async () => {
    const header =
      'referencia,tomador.cnpj,tomador.nome,tomador.endereco.logradouro,tomador.endereco.numero,tomador.endereco.bairro,tomador.endereco.cidade,tomador.endereco.uf,tomador.endereco.cep,servico.descricao,valores.total,valores.aliquotaIss';
    const row = (ref: string, cnpj: string, nome: string) =>
      `${ref},${cnpj},${nome},Rua A,1,Centro,Rio de Janeiro,RJ,20010010,Consultoria,100.00,2`;
    const csv = join(dir, 'mixed.csv');
    writeFileSync(
      csv,
      [
        header,
        row('r1', '11444777000161', 'A'),
        row('r2', '11444777000161', 'B'),
        row('r3', '11444777000100', 'C'), // check digits wrong: refused by the invoice rules
        row('r4', '11444777000161', ''), // no name: refused by the schema
        row('r5', '11444777000161', 'E'),
      ].join('\n'),
    );
    const r = await nfse(['emit', csv, '--chunk-size', '2', '--poll-interval', '1']);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout.trim()).toBe(join(dir, 'mixed.results.csv'));
    expect(r.stderr).toContain('3 issued, 0 in error, 2 refused of 5 rows');
    const table = parseCsv(readFileSync(join(dir, 'mixed.results.csv'), 'utf8'));
    expect(table.rows.map((x) => [x[0], x[2], x[5]])).toEqual([
      ['1', 'issued', ''],
      ['2', 'issued', ''],
      ['3', 'refused', 'VALIDATION_FAILED'],
      ['4', 'refused', 'VALIDATION_FAILED'],
      ['5', 'issued', ''],
    ]);
    expect(table.rows[2]![6]).toMatch(/^tomador\.cnpj: /);
    expect(table.rows[3]![6]).toMatch(/^tomador\.nome: /);
    const [n] = await t.service.ctx.db.select({ n: count() }).from(invoices).where(eq(invoices.projectId, p.projectId));
    expect(n!.n).toBe(3);
  }, 300_000);

  it('takes a JSON file; status, download and cancel work on its invoice', async () => {
    const file = join(dir, 'notas.json');
    writeFileSync(file, JSON.stringify([invoiceBody({ referencia: 'json-1' })]));
    // --no-wait: the results as they are once accepted; the same command later completes them from the state file
    const early = await nfse(['emit', file, '--out', join(dir, 'json-results.csv'), '--no-wait']);
    expect(early.status, early.stderr).toBe(0);
    const [first] = parseCsv(readFileSync(join(dir, 'json-results.csv'), 'utf8')).rows;
    expect(['queued', 'processing', 'issued']).toContain(first![2]);
    const r = await nfse(['emit', file, '--out', join(dir, 'json-results.csv')]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('resuming: 1/1 chunks were accepted by an earlier run');
    const [result] = parseCsv(readFileSync(join(dir, 'json-results.csv'), 'utf8')).rows;
    expect(result![2]).toBe('issued');
    const id = result![1]!;
    expect(id).toBe(first![1]);

    const status = await nfse(['status', id]);
    expect(status.status, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ invoiceId: id, status: 'issued', referencia: 'json-1' });

    const xml = await nfse(['download', id, '--xml', '-o', join(dir, 'n.xml')]);
    expect(xml.status, xml.stderr).toBe(0);
    expect(readFileSync(join(dir, 'n.xml'), 'utf8')).toContain(result![3]!);
    const pdf = await nfse(['download', id, '--pdf', '-o', '-']);
    expect(pdf.status, pdf.stderr).toBe(0);
    expect(pdf.stdout.startsWith('%PDF-')).toBe(true);

    const cancel = await nfse(['cancel', id, '--motivo', 'Erro na emissão']);
    expect(cancel.status, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ invoiceId: id, status: 'cancelling' });

    const unknown = await nfse(['status', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr.trim()).toMatch(/^nfse: HTTP 404 INVOICE_NOT_FOUND/);
  }, 300_000);

  it.skipIf(spawnSync('script', ['--version']).status !== 0)(
    'draws a progress bar in place on a terminal (util-linux script provides the pty)',
    async () => {
      const file = join(dir, 'tty.json');
      writeFileSync(file, JSON.stringify([invoiceBody({ referencia: 'tty-1' }), invoiceBody({ referencia: 'tty-2' })]));
      const command = `${process.execPath} bin/nfse.mjs emit ${file} --chunk-size 1 --poll-interval 1`;
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        cwd: root,
        env: { ...process.env, NFSE_API_KEY: p.apiKey, NFSE_API_URL: t.api, COLUMNS: '120' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout!.on('data', (d) => {
        output += d;
      });
      const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(status, output).toBe(0);
      // redrawn in place: carriage return + erase line, a bar of block characters, the counts
      expect(output).toContain('\r\x1b[2K');
      expect(output).toMatch(/█+░*\s+accepted 2\/2 · issued 2 · errors 0 · final 2\/2/);
      expect(output).toContain('chunk 2/2 accepted');
    },
    120_000,
  );
});
