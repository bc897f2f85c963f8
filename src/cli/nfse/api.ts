/**
 * The HTTP side of the `nfse` CLI: a project-key client that waits out 429 (Retry-After) and retries network
 * failures and 5xx of requests that are safe to repeat (GETs, and POSTs carrying an Idempotency-Key).
 */

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: JSON of the API
  body: any;
  bytes: Buffer;
}

export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly response: ApiResponse | null,
  ) {
    super(message);
  }
}

export interface ClientOptions {
  baseUrl: string;
  key: string;
  /** how long a retryable request keeps retrying network failures and 5xx (default 0: fail at once) */
  retryForMs?: number;
  onWait?: (reason: string, ms: number) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ApiClient {
  readonly baseUrl: string;
  private reached = false;
  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  async request(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; retry?: boolean; redirect?: 'manual' | 'follow' } = {},
  ): Promise<ApiResponse> {
    const retry = options.retry ?? method === 'GET';
    const deadline = Date.now() + (this.options.retryForMs ?? 0);
    // a 429 is answered before anything is done: always safe to wait out (at least two minutes of it)
    const rateDeadline = Math.max(deadline, Date.now() + 120_000);
    let attempt = 0;
    for (;;) {
      attempt++;
      let res: Response;
      try {
        res = await fetch(path.startsWith('http') ? path : `${this.baseUrl}${path}`, {
          method,
          redirect: options.redirect ?? 'follow',
          headers: {
            'x-api-key': this.options.key,
            ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...options.headers,
          },
          body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
          signal: AbortSignal.timeout(120_000),
        });
      } catch (err) {
        const cause = (err as Error).cause as Error | undefined;
        const reason = `cannot reach ${this.baseUrl} (${cause?.message ?? (err as Error).message})`;
        // a service never reached is a wrong address, not an outage: fail at once
        if (!retry || !this.reached || Date.now() > deadline) throw new ApiFailure(reason, null);
        const wait = Math.min(30_000, 500 * 2 ** Math.min(attempt, 6));
        this.options.onWait?.(reason, wait);
        await sleep(wait);
        continue;
      }
      this.reached = true;
      const bytes = Buffer.from(await res.arrayBuffer());
      let body: unknown = null;
      if ((res.headers.get('content-type') ?? '').includes('json') && bytes.length > 0) {
        try {
          body = JSON.parse(bytes.toString('utf8'));
        } catch {
          body = null;
        }
      }
      const response: ApiResponse = { status: res.status, headers: res.headers, body, bytes };
      if (res.status === 429 && Date.now() < rateDeadline) {
        const seconds = Number(res.headers.get('retry-after'));
        const wait = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 2000;
        this.options.onWait?.('rate limited', wait);
        await sleep(wait);
        continue;
      }
      if (res.status >= 500 && retry && Date.now() < deadline) {
        const wait = Math.min(30_000, 500 * 2 ** Math.min(attempt, 6));
        this.options.onWait?.(`server answered ${res.status}`, wait);
        await sleep(wait);
        continue;
      }
      return response;
    }
  }
}

/** One line describing a problem+json answer (code, detail and the fields named). */
export function describeProblem(res: ApiResponse): string {
  const b = res.body as {
    code?: string;
    detail?: string;
    title?: string;
    errors?: { field: string; message: string }[];
  };
  if (!b || typeof b !== 'object') return `HTTP ${res.status}`;
  const fields = (b.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.field}: ${e.message}`)
    .join('; ');
  return `HTTP ${res.status} ${b.code ?? ''}: ${b.detail ?? b.title ?? ''}${fields && !(b.detail ?? '').includes(fields) ? ` (${fields})` : ''}`;
}
