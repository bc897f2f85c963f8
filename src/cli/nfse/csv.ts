import type { TSchema } from 'typebox';
import { InvoiceRequestSchema } from '../../domain/invoice-request.ts';

/**
 * CSV for the `nfse` CLI: an RFC 4180 reader/writer and the mapping of dotted column headers
 * (`tomador.cnpj`, `valores.total`, `servico.ibscbs.cClassTrib`…) to the JSON body of POST /emitir.
 *
 * The JSON type of every column comes from the API's own request schema (`InvoiceRequestSchema`), so a CSV
 * never sends a string where the API wants a number or a boolean: numeric fields are parsed as numbers
 * (`1500.50`; `1500,50` only in a `;`-separated file), boolean fields as booleans (`true`/`false`), fields the API
 * takes as text stay text (CNPJ, CEP, codes keep their leading zeros). Empty cells are omitted. An unknown
 * column or a value of the wrong type stops the run before anything is sent, naming the row and column.
 */

export type CellKind = 'string' | 'number' | 'boolean' | 'string-or-boolean';

export interface CsvTable {
  header: string[];
  rows: string[][];
  delimiter: ',' | ';';
}

export class CsvError extends Error {}

/** Parses RFC 4180 CSV (quotes, doubled quotes, CRLF/LF, BOM). The delimiter is `,` or, when the header has only `;`, `;`. */
export function parseCsv(text: string): CsvTable {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const firstLine = source.slice(0, source.search(/\r?\n|$/));
  const delimiter: ',' | ';' = !firstLine.includes(',') && firstLine.includes(';') ? ';' : ',';
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  let line = 1;
  let fieldStarted = false;
  while (i < source.length) {
    const c = source[i]!;
    if (quoted) {
      if (c === '"') {
        if (source[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      if (c === '\n') line++;
      field += c;
      i++;
      continue;
    }
    if (c === '"' && !fieldStarted) {
      quoted = true;
      fieldStarted = true;
      i++;
      continue;
    }
    if (c === delimiter) {
      record.push(field);
      field = '';
      fieldStarted = false;
      i++;
      continue;
    }
    if (c === '\r' || c === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      fieldStarted = false;
      i += c === '\r' && source[i + 1] === '\n' ? 2 : 1;
      line++;
      continue;
    }
    if (c === '"') throw new CsvError(`line ${line}: a quote inside an unquoted field`);
    field += c;
    fieldStarted = true;
    i++;
  }
  if (quoted) throw new CsvError('the file ends inside a quoted field');
  if (fieldStarted || field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  const nonEmpty = records.filter((r) => !(r.length === 1 && r[0] === ''));
  const [header, ...rows] = nonEmpty;
  if (!header) throw new CsvError('the file is empty (a header line is required)');
  return { header: header.map((h) => h.trim()), rows, delimiter };
}

/** One CSV field, quoted when needed. */
export function csvField(value: string | number | null | undefined): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: (string | number | null | undefined)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

// ----- column mapping --------------------------------------------------------------------------------------------

interface SchemaNode {
  type?: string | string[];
  const?: unknown;
  anyOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
}

function kindOf(schema: SchemaNode): Set<'string' | 'number' | 'boolean'> {
  const kinds = new Set<'string' | 'number' | 'boolean'>();
  if (schema.anyOf) {
    for (const member of schema.anyOf) for (const k of kindOf(member)) kinds.add(k);
    return kinds;
  }
  if (schema.const !== undefined) {
    const t = typeof schema.const;
    if (t === 'string' || t === 'number' || t === 'boolean') kinds.add(t);
    return kinds;
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  for (const t of types) {
    if (t === 'integer' || t === 'number') kinds.add('number');
    else if (t === 'string' || t === 'boolean') kinds.add(t);
  }
  return kinds;
}

/** Every leaf field of the POST /emitir body as a dotted path, with the JSON type the API wants. */
export function invoiceColumns(schema: TSchema = InvoiceRequestSchema): Map<string, CellKind> {
  const out = new Map<string, CellKind>();
  const walk = (node: SchemaNode, path: string) => {
    if (node.properties) {
      for (const [name, child] of Object.entries(node.properties)) walk(child, path ? `${path}.${name}` : name);
      return;
    }
    const kinds = kindOf(node);
    // text wins when the API takes text (tipoOperacao "1" or 1): the cell is sent exactly as written
    const kind: CellKind = kinds.has('string')
      ? kinds.has('boolean')
        ? 'string-or-boolean'
        : 'string'
      : kinds.has('number')
        ? 'number'
        : kinds.has('boolean')
          ? 'boolean'
          : 'string';
    out.set(path, kind);
  };
  walk(schema as unknown as SchemaNode, '');
  return out;
}

function parseCell(raw: string, kind: CellKind, delimiter: ',' | ';'): { value: unknown } | { error: string } {
  const text = raw.trim();
  if (kind === 'string') return { value: raw };
  if (kind === 'boolean' || kind === 'string-or-boolean') {
    if (/^(true|false)$/i.test(text)) return { value: text.toLowerCase() === 'true' };
    if (kind === 'string-or-boolean') return { value: raw };
    return { error: `must be true or false, got "${raw}"` };
  }
  const normalized = delimiter === ';' && /^-?\d+,\d+$/.test(text) ? text.replace(',', '.') : text;
  if (!/^-?\d+(\.\d+)?$/.test(normalized)) {
    return {
      error: `must be a number written like 1500.50${delimiter === ';' ? ' or 1500,50' : ''} (no thousands separators), got "${raw}"`,
    };
  }
  return { value: Number(normalized) };
}

export interface CsvIssue {
  row: number;
  column: string;
  message: string;
}

/** Turns CSV rows into POST /emitir bodies; all problems of the file at once (nothing is sent when there is one). */
export function csvToInvoices(table: CsvTable): { items: Record<string, unknown>[]; issues: CsvIssue[] } {
  const columns = invoiceColumns();
  const issues: CsvIssue[] = [];
  const seen = new Set<string>();
  for (const name of table.header) {
    if (!name) issues.push({ row: 0, column: '(empty)', message: 'a header cell is empty' });
    else if (!columns.has(name)) {
      issues.push({ row: 0, column: name, message: 'is not a field of POST /emitir (see README, "CLI nfse")' });
    } else if (seen.has(name)) issues.push({ row: 0, column: name, message: 'appears twice' });
    seen.add(name);
  }
  if (issues.length > 0) return { items: [], issues };
  const items = table.rows.map((cells, r) => {
    const row = r + 1;
    if (cells.length !== table.header.length) {
      issues.push({
        row,
        column: '*',
        message: `has ${cells.length} cells, the header has ${table.header.length}`,
      });
    }
    const item: Record<string, unknown> = {};
    table.header.forEach((name, c) => {
      const raw = cells[c] ?? '';
      if (raw.trim() === '') return;
      const parsed = parseCell(raw, columns.get(name)!, table.delimiter);
      if ('error' in parsed) {
        issues.push({ row, column: name, message: parsed.error });
        return;
      }
      const path = name.split('.');
      let target = item;
      for (const part of path.slice(0, -1)) {
        target[part] ??= {};
        target = target[part] as Record<string, unknown>;
      }
      target[path.at(-1)!] = parsed.value;
    });
    return item;
  });
  return { items, issues };
}
