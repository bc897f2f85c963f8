import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type PeerCertificate, peerCertificateOf } from './client-certificate.ts';
import { assertFamilyName, ExchangeRecorder } from './exchanges.ts';
import { type FaultKind, planFaults, type SandboxFaults, SandboxHttpError, sanitizeFaults } from './faults.ts';
import { type CompiledMount, type CompiledRoute, compileMount, compileRoute, decodedSegments } from './routes.ts';

/**
 * The sandbox kit's server: what every government sandbox needs, once. A sandbox is a list of services, each a
 * family name, a mount prefix, a routes table and its rules (`SandboxService`); `startSandboxServer` serves them over
 * HTTPS with client certificates (or plain HTTP), bounds request bodies, injects faults, serves the admin routes
 * under `/__sandbox/` and records every exchange of a service in `<sandboxDir>/<family>/exchanges.jsonl`.
 */

export type { SandboxFaults } from './faults.ts';
export { SandboxHttpError } from './faults.ts';

export interface SandboxReply {
  status: number;
  /** undefined: no body; a string or Buffer: sent as is (set `content-type`); anything else: JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface SandboxRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  /** The raw path below the service's mount (`/` when empty). */
  subPath: string;
  /** Mount parameters (raw) and route parameters (percent-decoded). */
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The whole request body (already read, within the body limit). */
  body: Buffer;
  /** The TLS client certificate, or null. */
  clientCertificate: PeerCertificate | null;
  /** `name` of the matched route, null before routing or when none matched. */
  routeName: string | null;
  /** The body as a JSON object, or null when it is not one. */
  json(): Record<string, unknown> | null;
}

export type SandboxHandler = (req: SandboxRequest) => SandboxReply | Promise<SandboxReply>;

export interface SandboxRoute {
  method: string | readonly string[];
  /** Below the mount, e.g. `/nfse/:chave/eventos`. */
  path: string;
  name?: string;
  handler: SandboxHandler;
}

/** A route under `/__sandbox/` (no client certificate, no faults, not recorded). Errors answer `{error}`. */
export interface SandboxAdminRoute {
  method: string;
  /** The full path, e.g. `/__sandbox/issued`. */
  path: string;
  handler: SandboxHandler;
}

export interface SandboxService {
  /** The engine family whose government service this is (kebab-case): the exchange log's directory. */
  family: string;
  /** For log lines, e.g. `Sefin`. */
  name: string;
  /** Prefix pattern, e.g. `/:ambiente(producao|producaorestrita)/SefinNacional` (see ./routes.ts). */
  mount: string;
  routes: readonly SandboxRoute[];
  /** Runs before routing; a reply refuses the request (e.g. no client certificate). */
  before?: (req: SandboxRequest) => SandboxReply | null;
  /** The answer when no route matches path and method. */
  notFound: (req: SandboxRequest) => SandboxReply;
  /** The answer for a SandboxHttpError (also the body limit, 413) or an unexpected error. Default `{error}`. */
  errorReply?: (req: SandboxRequest, err: Error) => SandboxReply;
  /** Opts the service in to fault injection; `errorReply` is the injected 5xx. */
  faults?: {
    errorReply: (req: SandboxRequest) => SandboxReply;
    /** Which requests "commit, then drop" may hit. Default: POST, PUT, PATCH, DELETE. */
    isWrite?: (req: SandboxRequest) => boolean;
  };
  admin?: readonly SandboxAdminRoute[];
}

export type SandboxTransport =
  | {
      kind: 'https';
      tls: { keyPem: string; certPem: string };
      /**
       * `required`: the handshake fails without a certificate issued by `clientCa`. `requested`: a certificate is
       * asked for but not required, the services decide (`authorized` tells whether it chains to `clientCa`).
       * `none`: not asked for (providers authenticating by HTTP).
       */
      clientCertificates: 'required' | 'requested' | 'none';
      clientCa?: string | readonly string[];
    }
  | { kind: 'http' };

export interface SandboxLogger {
  info(message: string): void;
  warn(message: string): void;
}

export interface SandboxServerOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  transport: SandboxTransport;
  services: readonly SandboxService[];
  /** Exchanges are recorded under `<sandboxDir>/<family>/exchanges.jsonl`; null/absent records nothing. */
  sandboxDir?: string | null;
  faults?: SandboxFaults;
  /** Request bodies above this are answered 413. Default 10 MiB. */
  bodyLimitBytes?: number;
  /** Source of randomness for the fault decisions (tests may pin it). */
  random?: () => number;
  logger?: SandboxLogger;
}

export interface SandboxServer {
  /** `https://host:port` (or `http://`). */
  url: string;
  faults(): SandboxFaults;
  /** Replaces the fault configuration (SandboxHttpError 400 when invalid). */
  setFaults(faults: SandboxFaults): void;
  /** The exchange log of a family, or null when not recording. */
  exchangesFile(family: string): string | null;
  /** Resolves when the exchanges recorded so far are written. */
  flushExchanges(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_BODY_LIMIT_BYTES = 10 * 1024 * 1024;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface MountedService {
  service: SandboxService;
  mount: CompiledMount;
  routes: { route: SandboxRoute; methods: Set<string>; compiled: CompiledRoute }[];
  recorder: ExchangeRecorder | null;
}

class BodyTooLarge extends Error {}

/**
 * Reads the whole body. Past `limit` the rest is read and discarded (so that the 413 reaches a client still
 * sending) and BodyTooLarge is thrown.
 */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= limit) chunks.push(chunk as Buffer);
  }
  if (size > limit) throw new BodyTooLarge(`request body too large (limit ${limit} bytes)`);
  return Buffer.concat(chunks);
}

function parseJsonObject(body: Buffer): Record<string, unknown> | null {
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function encodeReply(reply: SandboxReply): { headers: OutgoingHttpHeaders; payload: Buffer | null } {
  if (reply.body === undefined) return { headers: { 'content-length': '0', ...reply.headers }, payload: null };
  const raw = typeof reply.body === 'string' || Buffer.isBuffer(reply.body);
  const payload = Buffer.isBuffer(reply.body)
    ? reply.body
    : Buffer.from(raw ? (reply.body as string) : JSON.stringify(reply.body), 'utf8');
  return {
    headers: {
      'content-type': raw ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
      ...reply.headers,
      'content-length': String(payload.length),
    },
    payload,
  };
}

/** Writes the reply (no body for HEAD) and returns what was sent, for the exchange log. */
function send(res: ServerResponse, method: string, reply: SandboxReply) {
  const { headers, payload } = encodeReply(reply);
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
  res.writeHead(reply.status);
  const sent = method === 'HEAD' ? null : payload;
  res.end(sent ?? undefined);
  return { headers: res.getHeaders(), body: sent };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startSandboxServer(options: SandboxServerOptions): Promise<SandboxServer> {
  const random = options.random ?? Math.random;
  const logger = options.logger ?? { info: () => {}, warn: () => {} };
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  let faults = sanitizeFaults(options.faults ?? {});

  const recorders = new Map<string, ExchangeRecorder>();
  const recorderOf = (family: string): ExchangeRecorder | null => {
    if (!options.sandboxDir) return null;
    let recorder = recorders.get(family);
    if (!recorder) {
      recorder = new ExchangeRecorder({ sandboxDir: options.sandboxDir, family, warn: (m) => logger.warn(m) });
      recorders.set(family, recorder);
    }
    return recorder;
  };
  for (const service of options.services) assertFamilyName(service.family);
  const mounted: MountedService[] = options.services.map((service) => ({
    service,
    mount: compileMount(service.mount),
    routes: service.routes.map((route) => ({
      route,
      methods: new Set(typeof route.method === 'string' ? [route.method] : route.method),
      compiled: compileRoute(route.path),
    })),
    recorder: recorderOf(service.family),
  }));

  const adminRoutes: SandboxAdminRoute[] = [
    { method: 'GET', path: '/__sandbox/faults', handler: () => ({ status: 200, body: faults }) },
    {
      method: 'PUT',
      path: '/__sandbox/faults',
      handler: (req) => {
        faults = sanitizeFaults(req.json());
        logger.info(`sandbox: faults set to ${JSON.stringify(faults)}`);
        return { status: 200, body: faults };
      },
    },
    ...options.services.flatMap((s) => s.admin ?? []),
  ];
  const adminKeys = adminRoutes.map((r) => `${r.method} ${r.path}`);
  const duplicate = adminKeys.find((key, index) => adminKeys.indexOf(key) !== index);
  if (duplicate) throw new Error(`sandbox: admin route ${duplicate} declared twice`);
  if (adminRoutes.some((r) => !r.path.startsWith('/__sandbox/'))) {
    throw new Error('sandbox: admin routes live under /__sandbox/');
  }

  function requestOf(req: IncomingMessage, url: URL, subPath: string, params: Record<string, string>, body: Buffer) {
    const request: SandboxRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      subPath,
      params,
      query: url.searchParams,
      headers: req.headers,
      body,
      clientCertificate: peerCertificateOf(req),
      routeName: null,
      json: () => parseJsonObject(body),
    };
    return request;
  }

  async function handleAdmin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    let reply: SandboxReply;
    try {
      const body = await readBody(req, bodyLimit).catch((err) => {
        throw err instanceof BodyTooLarge ? new SandboxHttpError(413, err.message) : err;
      });
      const route = adminRoutes.find((r) => r.path === url.pathname && r.method === method);
      if (!route) throw new SandboxHttpError(404, `no sandbox route ${method} ${url.pathname}`);
      reply = await route.handler(requestOf(req, url, url.pathname, {}, body));
    } catch (err) {
      const status = err instanceof SandboxHttpError ? err.status : 500;
      reply = { status, body: { error: (err as Error).message } };
    }
    send(res, method, reply);
  }

  function errorReplyOf(target: MountedService, request: SandboxRequest, err: Error): SandboxReply {
    const { service } = target;
    if (!(err instanceof SandboxHttpError)) {
      logger.warn(`sandbox ${service.name}: internal error on ${request.method} ${request.url}: ${err.stack ?? err}`);
    }
    if (service.errorReply) return service.errorReply(request, err);
    return err instanceof SandboxHttpError
      ? { status: err.status, body: { error: err.message } }
      : { status: 500, body: { error: 'internal sandbox error' } };
  }

  /** The route of the request (path and method), or null; throws URIError on a malformed escape. */
  function resolveRoute(target: MountedService, request: SandboxRequest): SandboxRoute | null {
    const segments = decodedSegments(request.subPath);
    for (const { route, methods, compiled } of target.routes) {
      const params = compiled.match(segments);
      if (!params || !methods.has(request.method)) continue;
      request.params = { ...request.params, ...params };
      request.routeName = route.name ?? route.path;
      return route;
    }
    return null;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedAt = new Date();
    const url = new URL(req.url ?? '/', 'https://sandbox.invalid');
    if (url.pathname.startsWith('/__sandbox/')) return handleAdmin(req, res, url);

    let target: MountedService | undefined;
    let mountMatch: ReturnType<CompiledMount['match']> = null;
    for (const candidate of mounted) {
      mountMatch = candidate.mount.match(url.pathname);
      if (mountMatch) {
        target = candidate;
        break;
      }
    }
    if (!target || !mountMatch) {
      const where = mounted.map((m) => `${m.mount.display}/…`).join(' or ');
      send(res, req.method ?? 'GET', { status: 404, body: { error: `use ${where}` } });
      return;
    }

    const { service, recorder } = target;
    const method = req.method ?? 'GET';
    let body: Buffer | null = null;
    const record = (
      status: number | null,
      sent: { headers: OutgoingHttpHeaders; body: Buffer | null } | null,
      fault?: FaultKind,
    ) =>
      recorder?.record({
        at: arrivedAt,
        method,
        url: req.url ?? '/',
        requestHeaders: req.headers,
        requestBody: body,
        status,
        responseHeaders: sent?.headers ?? null,
        responseBody: sent?.body ?? null,
        fault,
      });

    let tooLarge: Error | null = null;
    try {
      body = await readBody(req, bodyLimit);
    } catch (err) {
      if (err instanceof BodyTooLarge) tooLarge = err;
      else if (req.destroyed)
        return; // the client went away mid-body
      else throw err;
    }
    const request = requestOf(req, url, mountMatch.subPath, mountMatch.params, body ?? Buffer.alloc(0));
    if (tooLarge) {
      const reply = errorReplyOf(target, request, new SandboxHttpError(413, tooLarge.message));
      record(reply.status, send(res, method, reply));
      return;
    }

    let resolved: SandboxRoute | null = null;
    let unresolvable: Error | null = null;
    try {
      resolved = resolveRoute(target, request);
    } catch (err) {
      unresolvable = err as Error;
    }

    let commitThenDrop = false;
    if (service.faults) {
      const isWrite = service.faults.isWrite ? service.faults.isWrite(request) : WRITE_METHODS.has(method);
      const plan = planFaults(faults, isWrite, random);
      if (plan.delayMs > 0) await sleep(plan.delayMs);
      if (plan.before === 'drop-before') {
        logger.warn(`sandbox ${service.name} fault: dropped ${method} ${url.pathname} before processing`);
        record(null, null, 'drop-before');
        req.socket.destroy();
        return;
      }
      if (plan.before === 'error') {
        logger.warn(`sandbox ${service.name} fault: 5xx for ${method} ${url.pathname}`);
        const reply = service.faults.errorReply(request);
        record(reply.status, send(res, method, reply), 'error');
        return;
      }
      commitThenDrop = plan.commitThenDrop;
    }

    let reply: SandboxReply;
    try {
      if (unresolvable) throw unresolvable;
      const refused = service.before?.(request);
      if (refused) reply = refused;
      else reply = resolved ? await resolved.handler(request) : service.notFound(request);
    } catch (err) {
      reply = errorReplyOf(target, request, err as Error);
    }
    if (commitThenDrop) {
      logger.warn(
        `sandbox ${service.name} fault: processed ${method} ${url.pathname} (HTTP ${reply.status}), then dropped the answer`,
      );
      const { headers, payload } = encodeReply(reply);
      record(reply.status, { headers, body: payload }, 'commit-then-drop');
      req.socket.destroy();
      return;
    }
    record(reply.status, send(res, method, reply));
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err) => {
      logger.warn(`sandbox: ${(err as Error).message}`);
      if (!res.headersSent) send(res, req.method ?? 'GET', { status: 500, body: { error: 'internal sandbox error' } });
      else res.destroy();
    });
  };

  const transport = options.transport;
  let server: HttpServer;
  if (transport.kind === 'https') {
    const ca = transport.clientCa === undefined ? undefined : [transport.clientCa].flat();
    if (transport.clientCertificates === 'required' && !ca?.length) {
      throw new Error('sandbox: clientCertificates "required" needs clientCa');
    }
    server = createHttpsServer(
      {
        key: transport.tls.keyPem,
        cert: transport.tls.certPem,
        requestCert: transport.clientCertificates !== 'none',
        rejectUnauthorized: transport.clientCertificates === 'required',
        ...(ca ? { ca: ca as string[] } : {}),
        minVersion: 'TLSv1.2',
      },
      listener,
    );
    // a refused or broken handshake is the client's business
    server.on('tlsClientError', () => {});
  } else {
    server = createHttpServer(listener);
  }

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const flushExchanges = async () => {
    await Promise.all([...recorders.values()].map((r) => r.flush()));
  };

  return {
    url: `${transport.kind}://${urlHost}:${port}`,
    faults: () => faults,
    setFaults(next) {
      faults = sanitizeFaults(next);
    },
    exchangesFile: (family) => recorders.get(family)?.file ?? null,
    flushExchanges,
    async close() {
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      await flushExchanges();
    },
  };
}
