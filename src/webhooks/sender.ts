import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  checkWebhookUrlSyntax,
  type HostResolver,
  type ResolvedAddress,
  resolveWebhookTarget,
  systemResolver,
} from './address-guard.ts';

/** Spec 6 rule 2 and section 8: no answer within 10 seconds is a failed attempt. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of the receiver's answer an attempt keeps. */
export const RESPONSE_SNIPPET_BYTES = 1024;

export interface AttemptRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  allowInsecure: boolean;
  timeoutMs?: number;
  /** DNS; tests may stand in for it */
  resolve?: HostResolver;
}

/** What one attempt did; a failure is a value (`ok: false` with `error`), never an exception. */
export interface AttemptOutcome {
  /** a 2xx answer */
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseSnippet: string | null;
}

/** A lookup that hands the already checked addresses to the socket: the name is not resolved twice. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all)
      callback(
        null,
        addresses.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  }) as unknown as LookupFunction;
}

const clean = (text: string, max: number) => text.replace(/\u0000/g, '\uFFFD').slice(0, max);

/**
 * One POST of a webhook body: the SSRF guard on the resolved addresses, a connection pinned to them, no
 * redirect followed, a 10-second deadline for the answer, the first 1 KB of the response kept.
 */
export async function sendWebhookAttempt(request: AttemptRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (error: string, statusCode: number | null = null, snippet: string | null = null): AttemptOutcome => ({
    ok: false,
    statusCode,
    durationMs: elapsed(),
    error: clean(error, 500),
    responseSnippet: snippet,
  });

  const syntax = checkWebhookUrlSyntax(request.url, request.allowInsecure);
  if (!syntax.ok) return fail(`refused: the URL ${syntax.error}`);
  const target = await resolveWebhookTarget(syntax.value, request.allowInsecure, request.resolve ?? systemResolver);
  if (!target.ok) return fail(`refused: the URL ${target.error}`);

  const { url, host } = syntax.value;
  const timeoutMs = request.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const transport = url.protocol === 'https:' ? https : http;
  const body = Buffer.from(request.body, 'utf8');

  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(outcome);
    };
    const req = transport.request({
      method: 'POST',
      protocol: url.protocol,
      hostname: host,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      headers: { ...request.headers, 'content-length': String(body.length), connection: 'close' },
      agent: false,
      lookup: pinnedLookup(target.value),
    });
    let statusCode: number | null = null;
    let location: string | undefined;
    const chunks: Buffer[] = [];
    let kept = 0;
    const snippet = () =>
      kept > 0
        ? clean(Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES).toString('utf8'), RESPONSE_SNIPPET_BYTES)
        : null;
    const answered = () => {
      const code = statusCode!;
      if (code >= 200 && code < 300) {
        finish({ ok: true, statusCode: code, durationMs: elapsed(), error: null, responseSnippet: snippet() });
      } else if (code >= 300 && code < 400) {
        finish(fail(`redirect (${code}) not followed${location ? ` to ${location}` : ''}`, code, snippet()));
      } else {
        finish(fail(`HTTP ${code}`, code, snippet()));
      }
    };
    const deadline = setTimeout(() => {
      if (statusCode !== null) {
        // the answer came in time; only its body is slow
        answered();
        req.destroy();
        return;
      }
      finish(fail(`timeout: no answer within ${timeoutMs / 1000} s`));
      req.destroy();
    }, timeoutMs);

    req.on('response', (res) => {
      statusCode = res.statusCode ?? 0;
      location = typeof res.headers.location === 'string' ? res.headers.location : undefined;
      res.on('data', (chunk: Buffer) => {
        if (kept < RESPONSE_SNIPPET_BYTES) {
          chunks.push(chunk);
          kept += chunk.length;
        }
        if (kept >= RESPONSE_SNIPPET_BYTES) {
          answered();
          res.destroy();
        }
      });
      res.on('end', answered);
      res.on('error', () => answered());
      res.on('close', () => answered());
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (statusCode !== null) return answered();
      finish(fail(err.code ? `${err.code}: ${err.message}` : err.message));
    });
    req.end(body);
  });
}
