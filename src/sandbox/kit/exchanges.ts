import { appendFile, chmod, rename, stat } from 'node:fs/promises';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { FaultKind } from './faults.ts';
import { ensurePrivateDirectory } from './jsonl.ts';

/**
 * The exchange log of the sandbox kit: one JSON line per exchange of a family's API (admin routes excluded) in
 * `<sandboxDir>/<family>/exchanges.jsonl` (the service's `DATA_DIR/sandbox/<family>/exchanges.jsonl`), directory
 * 0700 and file 0600. Lines are appended in order, off the request path: a failing disk is reported to the
 * logger and never changes an answer. Bodies over `maxBodyBytes` are cut, with a marker; credentials in
 * `authorization`, `proxy-authorization` and `cookie` headers are replaced by `[redacted]` (the scheme is kept).
 * When the file passes `maxFileBytes` it is renamed to `exchanges.jsonl.1` (replacing the previous one).
 */

/** A body as recorded: the text when it is UTF-8, else `{ base64 }`. Cut bodies end with the marker. */
export type RecordedBody = string | { base64: string; truncatedFrom?: number } | null;

export interface ExchangeLine {
  /** When the request arrived (ISO 8601, UTC). */
  at: string;
  family: string;
  method: string;
  /** Path and query as received. */
  url: string;
  requestHeaders: Record<string, string | string[]>;
  requestBody: RecordedBody;
  /** null when no answer was sent (the connection was dropped before processing). */
  status: number | null;
  responseHeaders: Record<string, string | string[]> | null;
  responseBody: RecordedBody;
  /** Present when a fault was injected into this exchange. */
  fault?: FaultKind;
}

export interface ExchangeRecorderOptions {
  sandboxDir: string;
  family: string;
  /** Default 256 KiB. */
  maxBodyBytes?: number;
  /** Default 64 MiB. */
  maxFileBytes?: number;
  warn?: (message: string) => void;
}

export const EXCHANGES_FILE = 'exchanges.jsonl';
const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Lines waiting for the disk beyond this are dropped (and counted), so a stuck disk cannot exhaust memory. */
const MAX_PENDING_BYTES = 32 * 1024 * 1024;
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
const FAMILY_NAME = /^[a-z0-9][a-z0-9-]*$/;

/** The body as it goes into a line: text or base64, cut to `max` bytes with a marker. */
export function recordedBody(body: Buffer | string | null | undefined, max = DEFAULT_MAX_BODY_BYTES): RecordedBody {
  if (body === null || body === undefined) return null;
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const cut = bytes.length > max;
  const kept = cut ? bytes.subarray(0, max) : bytes;
  try {
    // `stream` keeps a character split by the cut out of the text instead of failing on it
    const text = new TextDecoder('utf-8', { fatal: true }).decode(kept, { stream: cut });
    return cut ? `${text}…[truncated: ${bytes.length} bytes in all]` : text;
  } catch {
    return cut ? { base64: kept.toString('base64'), truncatedFrom: bytes.length } : { base64: kept.toString('base64') };
  }
}

/** Header values as strings, secrets redacted. */
export function recordedHeaders(headers: IncomingHttpHeaders | OutgoingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.map(String) : String(value);
    if (SECRET_HEADERS.has(key)) {
      const redact = (v: string) => (key === 'cookie' ? '[redacted]' : `${v.split(' ')[0]} [redacted]`);
      out[key] = Array.isArray(text) ? text.map(redact) : redact(text);
    } else {
      out[key] = text;
    }
  }
  return out;
}

/** A family name becomes a directory name: kebab-case only. */
export function assertFamilyName(family: string): void {
  if (!FAMILY_NAME.test(family)) throw new Error(`sandbox family must be kebab-case: ${family}`);
}

export class ExchangeRecorder {
  readonly file: string;
  private readonly dir: string;
  private readonly maxBodyBytes: number;
  private readonly maxFileBytes: number;
  private readonly warn: (message: string) => void;
  private pending: string[] = [];
  private pendingBytes = 0;
  private dropped = 0;
  private writing: Promise<void> | null = null;
  private size: number | null = null;
  private failing = false;

  constructor(readonly options: ExchangeRecorderOptions) {
    assertFamilyName(options.family);
    this.dir = join(options.sandboxDir, options.family);
    this.file = join(this.dir, EXCHANGES_FILE);
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.warn = options.warn ?? (() => {});
  }

  /** Queues one line; never throws. */
  record(exchange: {
    at: Date;
    method: string;
    url: string;
    requestHeaders: IncomingHttpHeaders;
    requestBody: Buffer | null;
    status: number | null;
    responseHeaders: OutgoingHttpHeaders | null;
    responseBody: Buffer | string | null;
    fault?: FaultKind;
  }): void {
    try {
      const line: ExchangeLine = {
        at: exchange.at.toISOString(),
        family: this.options.family,
        method: exchange.method,
        url: exchange.url,
        requestHeaders: recordedHeaders(exchange.requestHeaders),
        requestBody: recordedBody(exchange.requestBody, this.maxBodyBytes),
        status: exchange.status,
        responseHeaders: exchange.responseHeaders ? recordedHeaders(exchange.responseHeaders) : null,
        responseBody: recordedBody(exchange.responseBody, this.maxBodyBytes),
        ...(exchange.fault ? { fault: exchange.fault } : {}),
      };
      const text = `${JSON.stringify(line)}\n`;
      if (this.pendingBytes + text.length > MAX_PENDING_BYTES) {
        this.dropped++;
        return;
      }
      this.pending.push(text);
      this.pendingBytes += text.length;
      if (!this.writing) this.writing = this.drain();
    } catch (err) {
      this.warn(`sandbox exchange log ${this.file}: ${(err as Error).message}`);
    }
  }

  /** Resolves when every line recorded so far has been written (or given up on). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.join('');
        this.pending = [];
        this.pendingBytes = 0;
        await this.write(batch);
      }
      if (this.dropped > 0) {
        this.warn(`sandbox exchange log ${this.file}: ${this.dropped} exchanges not recorded (disk too slow)`);
        this.dropped = 0;
      }
    } finally {
      this.writing = null;
    }
  }

  private async write(batch: string): Promise<void> {
    try {
      if (this.size === null) {
        ensurePrivateDirectory(this.dir);
        this.size = await stat(this.file).then(
          (s) => s.size,
          () => 0,
        );
        if (this.size > 0) await chmod(this.file, 0o600);
      }
      const bytes = Buffer.byteLength(batch);
      if (this.size > 0 && this.size + bytes > this.maxFileBytes) {
        await rename(this.file, `${this.file}.1`);
        this.size = 0;
      }
      await appendFile(this.file, batch, { mode: 0o600 });
      this.size += bytes;
      this.failing = false;
    } catch (err) {
      this.size = null;
      if (!this.failing) this.warn(`sandbox exchange log ${this.file}: not written (${(err as Error).message})`);
      this.failing = true;
    }
  }
}
