import { Agent, type Dispatcher, request } from 'undici';
import type { A1Certificate } from '../../certificates/pkcs12.ts';

/**
 * The HTTP client of every engine. With a certificate the request goes over mutual TLS: one undici dispatcher per
 * certificate (keyed by its fingerprint), built from the key and certificate PEM decoded with node-forge (Node
 * refuses legacy PFX), cached, and dropped when the project's certificate changes. Without one (providers that
 * authenticate with Basic, Bearer, a header token or credentials in the body) a shared dispatcher is used.
 * Every answer is a value: a response, or a failure that says whether the request may have reached the server.
 */
export interface HttpTimeouts {
  connectMs: number;
  responseMs: number;
}

/** A government answer with its status and body (what an operation's parser reads). */
export type HttpResponse = Extract<HttpAnswer, { kind: 'response' }>;

export type HttpAnswer =
  | { kind: 'response'; status: number; headers: Record<string, string | string[] | undefined>; body: string }
  /** nothing reached the server (DNS, refused, TLS handshake, connect timeout) */
  | { kind: 'not-sent'; reason: string }
  /** the request may have reached the server (reset or timeout while waiting for the answer) */
  | { kind: 'lost'; reason: string };

export class GovernmentHttpClient {
  private readonly agents = new Map<string, Agent>();
  private plain: Agent | null = null;

  constructor(
    private readonly timeouts: HttpTimeouts,
    private readonly caPem: string | null,
  ) {}

  private agentFor(certificate: A1Certificate | null): Agent {
    if (!certificate) {
      this.plain ??= new Agent({
        connect: { ...(this.caPem ? { ca: this.caPem } : {}), timeout: this.timeouts.connectMs, minVersion: 'TLSv1.2' },
        connectTimeout: this.timeouts.connectMs,
        headersTimeout: this.timeouts.responseMs,
        bodyTimeout: this.timeouts.responseMs,
        keepAliveTimeout: 10_000,
        connections: 256,
      });
      return this.plain;
    }
    const key = certificate.fingerprintSha256;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new Agent({
        connect: {
          key: certificate.keyPem,
          cert: [certificate.certPem, ...certificate.chainPem].join('\n'),
          ...(this.caPem ? { ca: this.caPem } : {}),
          timeout: this.timeouts.connectMs,
          minVersion: 'TLSv1.2',
        },
        connectTimeout: this.timeouts.connectMs,
        headersTimeout: this.timeouts.responseMs,
        bodyTimeout: this.timeouts.responseMs,
        keepAliveTimeout: 10_000,
        connections: 256,
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** Drops the cached connections of a certificate that was replaced. */
  async forget(fingerprintSha256: string): Promise<void> {
    const agent = this.agents.get(fingerprintSha256);
    if (agent) {
      this.agents.delete(fingerprintSha256);
      await agent.close().catch(() => undefined);
    }
  }

  /** `certificate`: the client certificate of the TLS handshake (mTLS), or null for a plain HTTPS request. */
  async send(
    certificate: A1Certificate | null,
    method: Dispatcher.HttpMethod,
    url: string,
    options: { body?: string; headers?: Record<string, string>; binary?: boolean } = {},
  ): Promise<HttpAnswer> {
    let bodySent = false;
    try {
      const res = await request(url, {
        method,
        dispatcher: this.agentFor(certificate),
        headers: options.headers,
        body: options.body,
        // the request counts as sent from the moment the connection is up and bytes are written
        onInfo: () => {
          bodySent = true;
        },
      } as Parameters<typeof request>[1]);
      bodySent = true;
      // binary answers (a PDF) keep every byte: latin1 maps bytes 1:1 to characters
      const body = options.binary
        ? Buffer.from(await res.body.arrayBuffer()).toString('latin1')
        : await res.body.text();
      return { kind: 'response', status: res.statusCode, headers: res.headers, body };
    } catch (err) {
      const e = err as { code?: string; message?: string };
      const reason = `${e.code ?? 'ERROR'}: ${e.message ?? String(err)}`;
      const beforeSending = [
        'UND_ERR_CONNECT_TIMEOUT',
        'ECONNREFUSED',
        'ENOTFOUND',
        'EAI_AGAIN',
        'EHOSTUNREACH',
        'ENETUNREACH',
        'ERR_TLS_CERT_ALTNAME_INVALID',
        'DEPTH_ZERO_SELF_SIGNED_CERT',
        'SELF_SIGNED_CERT_IN_CHAIN',
        'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        'CERT_HAS_EXPIRED',
      ];
      if (!bodySent && e.code && beforeSending.includes(e.code)) return { kind: 'not-sent', reason };
      return { kind: 'lost', reason };
    }
  }

  async close(): Promise<void> {
    const agents = [...this.agents.values(), ...(this.plain ? [this.plain] : [])];
    this.agents.clear();
    this.plain = null;
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  }
}
