import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvLine, parseCsv } from '../../src/cli/nfse/csv.ts';
import { invoices } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * `nfse emit` as a customer runs it: a real process (bin/nfse.mjs) against the service over HTTP, a CSV of 1,000
 * rows, SIGKILLed half-way and started again, then once more after losing the answer of an accepted chunk: exactly
 * 1,000 invoices (in the database and in the sandbox's issued notes), the results CSV complete.
 */

const root = new URL('../../', import.meta.url).pathname;
const ROWS = 1000;
let t: TestService;
let p: OnboardedProject;
let dir: string;

beforeAll(async () => {
  t = await startTestService();
  // the CLI waits out 429s; a roomy limit keeps this test about issuing, not about waiting
  p = await onboardProject(t, { rateLimitPerMinute: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'nfse-cli-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const HEADER = [
  'referencia',
  'tomador.cnpj',
  'tomador.nome',
  'tomador.endereco.logradouro',
  'tomador.endereco.numero',
  'tomador.endereco.bairro',
  'tomador.endereco.cidade',
  'tomador.endereco.uf',
  'tomador.endereco.cep',
  'servico.descricao',
  'servico.codigo',
  'valores.total',
  'valores.aliquotaIss',
  'valores.issRetido',
];

function writeCsv(path: string, rows: number) {
  let text = csvLine(HEADER);
  for (let i = 1; i <= rows; i++) {
    text += csvLine([
      `row-${i}`,
      '11444777000161',
      'Cliente SA',
      'Rua da Assembleia',
      '10',
      'Centro',
      'Rio de Janeiro',
      'RJ',
      '20010010',
      `Consultoria, parcela "${i}"`, // a comma and quotes: the CSV quoting round-trips
      '010101',
      `${100 + i}.25`,
      '2',
      i % 2 === 0 ? 'true' : 'false',
    ]);
  }
  writeFileSync(path, text);
}

interface Run {
  child: ChildProcess;
  stderr: () => string;
  exit: Promise<number | null>;
}

function runCli(args: string[]): Run {
  const child = spawn(process.execPath, ['bin/nfse.mjs', ...args], {
    cwd: root,
    env: { ...process.env, NFSE_API_KEY: p.apiKey, NFSE_API_URL: t.api },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  child.stdout!.resume();
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exit };
}

async function until(what: string, probe: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('nfse emit', () => {
  it('issues a CSV of 1,000 rows, killed half-way and resumed, with no duplicate and a complete results CSV', async () => {
    const csv = join(dir, 'notas.csv');
    writeCsv(csv, ROWS);
    const results = join(dir, 'notas.results.csv');
    const statePath = `${results}.state.json`;
    const started = Date.now();

    // 1. killed (SIGKILL) right after the 5th chunk is accepted: the 6th request is usually in flight
    const first = runCli(['emit', csv, '--poll-interval', '1']);
    await until('5 accepted chunks', () => first.stderr().includes('chunk 5/10 accepted'), 180_000);
    first.child.kill('SIGKILL');
    expect(await first.exit).toBeNull();
    const killedAfterMs = Date.now() - started;
    // the stderr was not a terminal: plain lines, one per chunk
    expect(first.stderr()).toMatch(/^chunk 1\/10 accepted: rows 1–100, batch [0-9a-f-]{36}$/m);
    const afterKill = JSON.parse(readFileSync(statePath, 'utf8'));
    const recorded = Object.keys(afterKill.chunks).map(Number);
    expect(recorded.length).toBeGreaterThanOrEqual(5);
    expect(recorded.length).toBeLessThan(10);

    // 2. resumed: chunks of the state file are not sent again, the rest is; then everything is polled to the end
    const second = runCli(['emit', csv, '--poll-interval', '1']);
    expect(await second.exit, second.stderr()).toBe(0);
    expect(second.stderr()).toContain(`resuming: ${recorded.length}/10 chunks were accepted by an earlier run`);
    const resumedAfterMs = Date.now() - started;

    // 3. an accepted chunk whose answer was lost (killed between the 202 and the state write): resent with the
    //    same Idempotency-Key, the service replays the same batch
    const state = JSON.parse(readFileSync(statePath, 'utf8'));
    const lost = state.chunks['9'];
    delete state.chunks['9'];
    writeFileSync(statePath, JSON.stringify(state));
    const third = runCli(['emit', csv, '--poll-interval', '1']);
    expect(await third.exit, third.stderr()).toBe(0);
    expect(third.stderr()).toContain(
      `chunk 10/10 accepted: rows 901–1000, batch ${lost.batchId} (already accepted before: the service replayed its answer)`,
    );
    expect(JSON.parse(readFileSync(statePath, 'utf8')).chunks['9']).toEqual(lost);

    // exactly 1,000 invoices: in the database and in the government's (sandbox's) issued notes
    const rows = await t.service.ctx.db
      .select({ id: invoices.id, referencia: invoices.referencia, status: invoices.status, request: invoices.request })
      .from(invoices)
      .where(eq(invoices.projectId, p.projectId));
    expect(rows).toHaveLength(ROWS);
    expect(new Set(rows.map((r) => r.referencia)).size).toBe(ROWS);
    const issuedNotes = t.service.sandbox!.issued().filter((n) => n.prestador === p.cnpj || n.emitente === p.cnpj);
    expect(issuedNotes).toHaveLength(ROWS);
    expect(new Set(issuedNotes.map((n) => n.idDps)).size).toBe(ROWS);

    // the CSV cells went with the API's types: numbers and booleans, codes as text
    const byId = new Map(rows.map((r) => [r.id, r]));
    const sample = rows.find((r) => r.referencia === 'row-42')!.request as Record<string, Record<string, unknown>>;
    expect(sample.valores).toEqual({ total: 142.25, aliquotaIss: 2, issRetido: true });
    expect(sample.servico).toEqual({ descricao: 'Consultoria, parcela "42"', codigo: '010101' });
    expect((sample.tomador as { endereco: { cep: string } }).endereco.cep).toBe('20010010');

    // the results CSV: one line per row, in order, every invoice final with its key and number
    const table = parseCsv(readFileSync(results, 'utf8'));
    expect(table.header).toEqual(['row', 'invoiceId', 'status', 'chNFSe', 'numeroNfse', 'errorCode', 'errorMessage']);
    expect(table.rows).toHaveLength(ROWS);
    table.rows.forEach(([row, invoiceId, status, chNFSe, numeroNfse, errorCode], i) => {
      expect(row).toBe(String(i + 1));
      expect(byId.get(invoiceId!)?.referencia).toBe(`row-${i + 1}`);
      expect(status).toBe('issued');
      expect(chNFSe).toMatch(/^\d{50}$/);
      expect(numeroNfse).toMatch(/^\d+$/);
      expect(errorCode).toBe('');
    });
    expect(new Set(table.rows.map((r) => r[3])).size).toBe(ROWS);
    expect(new Set(issuedNotes.map((n) => n.chaveAcesso))).toEqual(new Set(table.rows.map((r) => r[3])));

    const totalMs = Date.now() - started;
    console.log(
      `nfse emit, ${ROWS} rows: killed after ${killedAfterMs} ms (${recorded.length} chunks recorded), ` +
        `resumed run finished (all final) at ${resumedAfterMs} ms, replay run at ${totalMs} ms`,
    );
  }, 600_000);
});
