/**
 * The transport under the generated client (src/generated.ts): builds each request from an operation's
 * description (method, path template, who authenticates it, body kind), sends it with `fetch`, and reads the
 * answer into `{ ok, status, data, headers }` — JSON parsed, binary as bytes, text as a string, a redirect as its
 * `location`. Hand-written; the generator only emits the typed surface over it.
 */

/** Which credential an operation takes in `x-api-key`. */
export type Auth = 'project' | 'organization' | 'operator' | 'none';

export interface OperationSpec {
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI path template, e.g. `/api/v1/invoices/{id}/status` */
  path: string;
  auth: Auth;
  body: 'json' | 'multipart' | 'none';
  /** the statuses the document declares for this operation */
  statuses: readonly number[];
}

export interface ClientOptions {
  /** The service's address, e.g. `http://127.0.0.1:3000` (operation paths carry `/api/v1`). */
  baseUrl: string;
  /** Project key (`svc_…`): issuing, status, documents, batches, webhooks, lookups. */
  projectKey?: string;
  /** Organization token (`svc_org_…`): the /org routes (projects, certificates, API keys, settings). */
  organizationToken?: string;
  /** Operator key (`svc_admin_…`): the /admin routes. */
  operatorKey?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** A `fetch` of your own (tests, proxies); the global one by default. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** Overrides the configured credential for this call. */
  apiKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A file for a multipart field: a Blob/File, or bytes with a file name. */
export type FileInput = Blob | { data: Uint8Array | ArrayBuffer; filename: string; contentType?: string };

export interface RequestInput {
  path?: Record<string, string | number>;
  query?: Record<string, unknown>;
  headers?: Record<string, string | undefined>;
  body?: unknown;
}

/** A 2xx answer. */
export interface Success<S extends number, T> {
  ok: true;
  status: S;
  data: T;
  headers: Headers;
}

/** A 3xx answer: the document's address (not followed). */
export interface Redirect<S extends number> {
  ok: true;
  status: S;
  /** absolute URL of the `Location` header */
  location: string;
  data: undefined;
  headers: Headers;
}

/** A 4xx/5xx answer the document declares (the body is RFC 9457 problem+json). */
export interface Failure<S extends number, T> {
  ok: false;
  status: S;
  data: T;
  headers: Headers;
}

interface AnyResult {
  ok: boolean;
  status: number;
  data: unknown;
  headers: Headers;
  location?: string;
}

/** Thrown for a status the document does not declare for the operation (the body is kept). */
export class UnexpectedStatusError extends Error {
  constructor(
    readonly operationId: string,
    readonly status: number,
    readonly data: unknown,
    readonly headers: Headers,
  ) {
    super(`${operationId}: unexpected HTTP ${status}${problemSuffix(data)}`);
    this.name = 'UnexpectedStatusError';
  }
}

/** Thrown by `expectOk` for a declared failure. */
export class ApiProblemError extends Error {
  constructor(
    readonly status: number,
    readonly problem: unknown,
    readonly headers: Headers,
  ) {
    super(`HTTP ${status}${problemSuffix(problem)}`);
    this.name = 'ApiProblemError';
  }
}

function problemSuffix(data: unknown): string {
  if (data && typeof data === 'object' && 'code' in data) {
    const p = data as { code?: unknown; detail?: unknown };
    return `: ${String(p.code)}${p.detail ? ` — ${String(p.detail)}` : ''}`;
  }
  return '';
}

/** The successful answer, or an `ApiProblemError` carrying the problem document. */
export function expectOk<R extends { ok: boolean; status: number; data: unknown; headers: Headers }>(
  result: R,
): Extract<R, { ok: true }> {
  if (!result.ok) throw new ApiProblemError(result.status, result.data, result.headers);
  return result as Extract<R, { ok: true }>;
}

export class BaseClient {
  readonly baseUrl: string;
  protected readonly options: ClientOptions;

  constructor(options: ClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** The credential an operation would send (the call's override first). */
  protected credential(auth: Auth, call: CallOptions): string | undefined {
    if (call.apiKey) return call.apiKey;
    if (auth === 'project') return this.options.projectKey;
    if (auth === 'organization') return this.options.organizationToken;
    if (auth === 'operator') return this.options.operatorKey;
    return undefined;
  }

  /** The absolute URL of an operation for the given path and query parameters. */
  url(spec: OperationSpec, input: RequestInput = {}): string {
    const path = spec.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      const value = input.path?.[name];
      if (value === undefined || value === '') throw new TypeError(`${spec.operationId}: path parameter ${name}`);
      return encodeURIComponent(String(value));
    });
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(input.query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) query.append(name, String(v));
    }
    const qs = query.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  protected async call(spec: OperationSpec, input: RequestInput = {}, call: CallOptions = {}): Promise<AnyResult> {
    const headers: Record<string, string> = { accept: 'application/json, */*', ...this.options.headers };
    for (const [k, v] of Object.entries(input.headers ?? {})) if (v !== undefined) headers[k] = v;
    Object.assign(headers, call.headers);
    const key = this.credential(spec.auth, call);
    if (key) headers['x-api-key'] = key;
    let body: string | FormData | undefined;
    if (spec.body === 'json' && input.body !== undefined) {
      body = JSON.stringify(input.body);
      headers['content-type'] = 'application/json';
    } else if (spec.body === 'multipart' && input.body !== undefined) {
      body = toFormData(input.body as Record<string, unknown>);
    }
    const doFetch = this.options.fetch ?? fetch;
    const res = await doFetch(this.url(spec, input), {
      method: spec.method,
      headers,
      body,
      redirect: 'manual',
      signal: call.signal,
    });
    const data = await readBody(res);
    if (!spec.statuses.includes(res.status)) {
      throw new UnexpectedStatusError(spec.operationId, res.status, data, res.headers);
    }
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.get('location');
      if (!location) throw new UnexpectedStatusError(spec.operationId, res.status, data, res.headers);
      return {
        ok: true,
        status: res.status,
        location: new URL(location, res.url || this.baseUrl).href,
        data: undefined,
        headers: res.headers,
      };
    }
    return { ok: res.status < 300, status: res.status, data, headers: res.headers };
  }
}

async function readBody(res: Response): Promise<unknown> {
  if (res.status === 204 || res.status === 304) return undefined;
  const type = (res.headers.get('content-type') ?? '').toLowerCase();
  if (type.includes('json')) {
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  }
  if (type.startsWith('text/') || type.includes('xml')) return res.text();
  const bytes = new Uint8Array(await res.arrayBuffer());
  return bytes.length || type ? bytes : undefined;
}

function toFormData(fields: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue;
    if (value instanceof Blob) form.set(name, value);
    else if (typeof value === 'object' && 'data' in value && 'filename' in value) {
      const file = value as { data: Uint8Array | ArrayBuffer; filename: string; contentType?: string };
      const bytes = file.data instanceof Uint8Array ? file.data : new Uint8Array(file.data);
      form.set(
        name,
        new Blob([new Uint8Array(bytes)], { type: file.contentType ?? 'application/octet-stream' }),
        file.filename,
      );
    } else form.set(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return form;
}
