import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { type ApiClient, describeProblem } from './api.ts';
import { CsvError, csvLine, csvToInvoices, parseCsv } from './csv.ts';
import { Progress } from './progress.ts';

/**
 * `nfse emit <file.json|file.csv>`: the rows go in chunks (default 100) through POST /emitir/batch, each with an
 * Idempotency-Key derived from the file's SHA-256 and the chunk number, so a run killed at any moment can be
 * started again: chunks recorded in the state file (`<results>.state.json`, written after each acceptance) are
 * not sent again, and a chunk whose answer was lost is resent with the same key and replayed by the service
 * (same batch, no duplicate). Then the batches are polled until every invoice is final and the results CSV is
 * written (row, invoiceId, status, chNFSe, numeroNfse, errorCode, errorMessage).
 *
 * Rows the API refuses (400 naming `items.<i>.<field>`) are reported as `refused` with the error, and the rest
 * of their chunk is sent without them (a deterministic key of its own).
 */

export const RESULT_COLUMNS = ['row', 'invoiceId', 'status', 'chNFSe', 'numeroNfse', 'errorCode', 'errorMessage'];
const STATE_VERSION = 1;

export class UsageError extends Error {}

interface ChunkState {
  /** idempotency key that was accepted */
  key: string;
  batchId: string;
  /** 1-based rows of the input, in the batch's item order */
  rows: number[];
  invoiceIds: string[];
  refused: { row: number; code: string; message: string }[];
}

interface EmitState {
  version: number;
  input: string;
  fileSha256: string;
  chunkSize: number;
  rows: number;
  chunks: Record<string, ChunkState>;
}

interface RowResult {
  invoiceId: string;
  status: string;
  chNFSe?: string;
  numeroNfse?: string;
  errorCode?: string;
  errorMessage?: string;
}

export interface EmitOptions {
  file: string;
  out?: string;
  chunkSize: number;
  pollIntervalMs: number;
  waitTimeoutMs: number;
  wait: boolean;
  stderr: NodeJS.WriteStream;
}

/** The invoices of the input file (JSON: an array or {items}; CSV: dotted headers, see csv.ts). */
export function readInput(path: string): { items: Record<string, unknown>[]; sha256: string } {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file`);
  const bytes = readFileSync(path);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const ext = extname(path).toLowerCase();
  if (ext === '.json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      throw new UsageError(`${path}: not valid JSON (${(err as Error).message})`);
    }
    const items = Array.isArray(parsed) ? parsed : (parsed as { items?: unknown })?.items;
    if (!Array.isArray(items) || items.some((i) => !i || typeof i !== 'object' || Array.isArray(i))) {
      throw new UsageError(`${path}: expected an array of invoice objects (or {"items": [...]})`);
    }
    return { items: items as Record<string, unknown>[], sha256 };
  }
  if (ext === '.csv') {
    let table: ReturnType<typeof parseCsv>;
    try {
      table = parseCsv(bytes.toString('utf8'));
    } catch (err) {
      if (err instanceof CsvError) throw new UsageError(`${path}: ${err.message}`);
      throw err;
    }
    const { items, issues } = csvToInvoices(table);
    if (issues.length > 0) {
      const lines = issues
        .slice(0, 20)
        .map((i) => `  ${i.row === 0 ? 'header' : `row ${i.row}`}, column ${i.column}: ${i.message}`);
      const more = issues.length > 20 ? `\n  … and ${issues.length - 20} more` : '';
      throw new UsageError(`${path}: ${issues.length} problem(s), nothing was sent:\n${lines.join('\n')}${more}`);
    }
    return { items, sha256 };
  }
  throw new UsageError(`${path}: the file must end in .json or .csv`);
}

function writeAtomic(path: string, text: string) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

function chunkKey(sha256: string, chunkSize: number, index: number, skipped: number[]): string {
  const base = `nfse-cli.${sha256.slice(0, 40)}.${chunkSize}.${index}`;
  if (skipped.length === 0) return base;
  return `${base}.skip-${createHash('sha256').update(skipped.join(',')).digest('hex').slice(0, 16)}`;
}

/** The item-level refusals of a 400 (fields `items.<i>.…`), or null when the refusal is not about items. */
function refusedItems(body: unknown): Map<number, { code: string; message: string }> | null {
  const b = body as { code?: string; errors?: { field: string; message: string }[] } | null;
  if (!b?.errors?.length) return null;
  const out = new Map<number, { code: string; message: string }>();
  for (const e of b.errors) {
    const m = /^items\.(\d+)\.(.*)$/.exec(e.field);
    if (!m) return null;
    const index = Number(m[1]);
    const prior = out.get(index);
    const message = `${m[2]}: ${e.message}`;
    out.set(index, { code: b.code ?? 'VALIDATION_FAILED', message: prior ? `${prior.message}; ${message}` : message });
  }
  return out;
}

export async function emit(client: ApiClient, options: EmitOptions): Promise<number> {
  const input = resolve(options.file);
  const { items, sha256 } = readInput(input);
  if (items.length === 0) throw new UsageError(`${options.file}: no rows`);
  const out = resolve(options.out ?? join(dirname(input), `${basename(input, extname(input))}.results.csv`));
  const statePath = `${out}.state.json`;
  let state: EmitState;
  if (existsSync(statePath)) {
    state = JSON.parse(readFileSync(statePath, 'utf8')) as EmitState;
    if (state.version !== STATE_VERSION || state.fileSha256 !== sha256 || state.chunkSize !== options.chunkSize) {
      throw new UsageError(
        `${statePath} belongs to another run (other file content or --chunk-size); delete it or choose another --out`,
      );
    }
  } else {
    state = {
      version: STATE_VERSION,
      input,
      fileSha256: sha256,
      chunkSize: options.chunkSize,
      rows: items.length,
      chunks: {},
    };
  }
  const saveState = () => writeAtomic(statePath, `${JSON.stringify(state)}\n`);

  const chunkCount = Math.ceil(items.length / options.chunkSize);
  const progress = new Progress(options.stderr);
  const results = new Map<number, RowResult>();
  const counts = () => {
    let accepted = 0;
    let refused = 0;
    for (const c of Object.values(state.chunks)) {
      accepted += c.rows.length;
      refused += c.refused.length;
    }
    let issued = 0;
    let errors = 0;
    for (const r of results.values()) {
      if (r.status === 'issued' || r.status === 'cancelled') issued++;
      else if (r.status === 'error') errors++;
    }
    return { total: items.length, accepted, refused, issued, errors };
  };
  const resumed = Object.keys(state.chunks).length;
  if (resumed > 0) progress.log(`resuming: ${resumed}/${chunkCount} chunks were accepted by an earlier run`);

  // ---- send ----
  for (let index = 0; index < chunkCount; index++) {
    if (state.chunks[index]) continue;
    const first = index * options.chunkSize;
    let rows = items.slice(first, first + options.chunkSize).map((_, i) => first + i + 1);
    const refused: ChunkState['refused'] = [];
    let replayed = false;
    for (;;) {
      if (rows.length === 0) {
        state.chunks[index] = { key: '', batchId: '', rows: [], invoiceIds: [], refused };
        break;
      }
      const skipped = refused.map((r) => r.row).sort((a, b) => a - b);
      const key = chunkKey(sha256, options.chunkSize, index, skipped);
      const res = await client.request('POST', '/emitir/batch', {
        body: { items: rows.map((row) => items[row - 1]) },
        headers: { 'idempotency-key': key },
        retry: true, // safe: the key makes a resend a replay
      });
      if (res.status === 202) {
        replayed = res.headers.get('idempotent-replayed') === 'true';
        state.chunks[index] = {
          key,
          batchId: res.body.batchId,
          rows,
          invoiceIds: (res.body.items as { invoiceId: string }[]).map((i) => i.invoiceId),
          refused,
        };
        break;
      }
      const itemRefusals = res.status === 400 ? refusedItems(res.body) : null;
      if (!itemRefusals || itemRefusals.size === 0) {
        saveState();
        progress.end();
        throw new Error(`chunk ${index + 1}/${chunkCount} (rows ${rows[0]}–${rows.at(-1)}): ${describeProblem(res)}`);
      }
      for (const [i, r] of itemRefusals) refused.push({ row: rows[i]!, ...r });
      rows = rows.filter((_, i) => !itemRefusals.has(i));
    }
    saveState();
    const c = state.chunks[index]!;
    progress.log(
      `chunk ${index + 1}/${chunkCount} accepted: rows ${first + 1}–${Math.min(first + options.chunkSize, items.length)}` +
        `${c.batchId ? `, batch ${c.batchId}` : ''}${c.refused.length ? `, ${c.refused.length} refused` : ''}` +
        `${replayed ? ' (already accepted before: the service replayed its answer)' : ''}`,
    );
    progress.update(counts(), true);
  }

  // ---- wait for final statuses ----
  const chunks = Object.values(state.chunks).filter((c) => c.batchId);
  const pending = new Set(chunks);
  const deadline = Date.now() + options.waitTimeoutMs;
  let first = true;
  while (pending.size > 0) {
    if (!first) await new Promise((r) => setTimeout(r, options.pollIntervalMs));
    first = false;
    // batches are issued roughly in order: a round stops at the first still processing (fewer requests)
    for (const chunk of [...pending]) {
      const res = await client.request('GET', `/invoices/batch/${chunk.batchId}/status`);
      if (res.status !== 200) {
        progress.end();
        throw new Error(`batch ${chunk.batchId}: ${describeProblem(res)}`);
      }
      for (const item of res.body.items as (RowResult & { index: number })[]) {
        const row = chunk.rows[item.index];
        if (row !== undefined) results.set(row, item);
      }
      if (res.body.status !== 'processing') pending.delete(chunk);
      else break;
    }
    progress.update(counts());
    if (!options.wait || Date.now() > deadline) break;
  }
  progress.update(counts(), true);
  progress.end();

  // ---- results ----
  const refusedByRow = new Map<number, ChunkState['refused'][number]>();
  for (const c of Object.values(state.chunks)) for (const r of c.refused) refusedByRow.set(r.row, r);
  for (const c of chunks) {
    c.rows.forEach((row, i) => {
      if (!results.has(row)) results.set(row, { invoiceId: c.invoiceIds[i]!, status: 'queued' });
    });
  }
  let text = csvLine(RESULT_COLUMNS);
  let failed = 0;
  let notFinal = 0;
  for (let row = 1; row <= items.length; row++) {
    const refusal = refusedByRow.get(row);
    if (refusal) {
      failed++;
      text += csvLine([row, '', 'refused', '', '', refusal.code, refusal.message]);
      continue;
    }
    const r = results.get(row);
    if (!r) throw new Error(`row ${row} has no result (state file damaged?)`);
    if (r.status === 'error') failed++;
    else if (r.status !== 'issued' && r.status !== 'cancelled') notFinal++;
    text += csvLine([row, r.invoiceId, r.status, r.chNFSe, r.numeroNfse, r.errorCode, r.errorMessage]);
  }
  writeAtomic(out, text);
  const c = counts();
  const unfinished = notFinal > 0;
  options.stderr.write(
    `${c.issued} issued, ${c.errors} in error, ${c.refused} refused of ${items.length} rows; results: ${out}` +
      `${unfinished ? ' (some invoices are not final yet: run the same command again to update)' : ''}\n`,
  );
  process.stdout.write(`${out}\n`);
  // 1: a row was refused or ended in error, or (when waiting) some invoice is not final yet
  return failed > 0 || (options.wait && notFinal > 0) ? 1 : 0;
}
