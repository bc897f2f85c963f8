import { UnknownEndpointError } from '../kit/family.ts';
import type { FamilyDefinition, Operation, OperationRequest, SendContext } from '../kit/family.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { nationalFamily } from '../national/family.ts';
import type { Outcome } from '../types.ts';

/**
 * The municipal clones of Sefin Nacional's REST API (briefs/providers-own.md §4, ACBr `…APIPropria` providers that
 * descend from PadraoNacional unchanged on the wire): SimplISS, RLZ and Infisc. They take the national DPS 1.01
 * signed on infDPS, gzip+base64 in JSON over mutual TLS, at the same paths as Sefin below each city's own base URL
 * (the registry's `Recepcionar`):
 *
 *   POST /nfse {"dpsXmlGZipB64"} · POST /nfse/{chave}/eventos {"pedidoRegistroEventoXmlGZipB64"}
 *   GET /dps/{id} · GET /nfse/{chave} · GET /nfse/{chave}/eventos/101101/1
 *
 * and answer in Sefin's JSON (`nfseXmlGZipB64`, `erros[]`, E0014, E0840). So a definition here is the national
 * family's declaration, cancellation message and operations, reused as they are, with the provider's name and two
 * guards:
 *
 * - the URL guard: some cities of these providers still carry their ABRASF SOAP service as `Recepcionar` in the
 *   registry (SimplISS `ws<city>.simplissweb.com.br/nfseservice.svc`); a Sefin-clone request is never sent to a SOAP
 *   service: ENGINE_ENDPOINT_UNKNOWN (permanent, nothing sent);
 * - the answer quirks: SimplISS sometimes answers a body that is not JSON (ACBr wraps it as E9999, an error). A
 *   4xx that is not JSON says nothing about whether the DPS was processed, so it is read as `unknown` (the job
 *   reconciles with GET /dps/{id} before anything else; E0014 keeps a resend from issuing twice), never as a
 *   rejection. An ASP.NET-style `{"Message": …}` 4xx (Tiplan's framework errors) is a refusal before processing:
 *   rejected E9999 with the message, as ACBr reads it. 429/5xx stay transient.
 *
 * Conservative readings of the brief's unknowns (§4.1), which the sandbox (src/sandbox/sefin-clone/) accepts only:
 * - mTLS is enforced (unknown 4): the sandbox refuses a request without a client certificate whose CNPJ root is the
 *   DPS emitter's, as Sefin does;
 * - the signature is the one our national signer makes (RSA-SHA1/SHA-256 as configured, inclusive C14N, after
 *   infDPS): the sandbox verifies it exactly like Sefin's;
 * - queries and events: ACBr's .ini lists ConsultarNFSeRps, ConsultarNFSePorChave and ConsultarEvento of SimplISS
 *   and RLZ in `ServicosPadraoNacional` (sent to the national environment, which holds the notes these systems
 *   share with the ADN). The engine kit has one base URL per engine, so the queries go to the provider's clone at
 *   the Sefin paths (the brief's table lists GET /dps/{id} for SimplISS); when a clone does not serve them, a query
 *   answers "none" and E0014 stops a resend from issuing twice. Infisc serves them itself (only ConsultarParam is
 *   national there).
 * - DANFSe: rendered locally from the returned NFS-e, as for the national environment (Infisc also serves
 *   GET /nfse/pdf/{chave}, not used).
 * - Tiplan (brief: REST endpoints `/api/adn/dps/recepcao|evento|chave-acesso`) is not built here: it has no
 *   documented way to read a cancellation back (ConsultarEvento is national in its .ini), which the engine needs
 *   before it believes an "already cancelled" refusal.
 */

export type SefinCloneProvider = 'SimplISS' | 'RLZ' | 'Infisc';

const national = nationalFamily.operations;

/** SOAP services (ABRASF `.svc`/`.asmx`, WSDL addresses) left in the registry as a city's `Recepcionar`. */
const SOAP_SERVICE = /\.(svc|asmx)(\/|$|\?)|\?wsdl$|\/nfseservice\b/i;

function guardEndpoint(provider: SefinCloneProvider, context: SendContext): void {
  const url = context.endpoints.url('emit', context.ambiente, context.municipality);
  if (SOAP_SERVICE.test(url)) {
    throw new UnknownEndpointError(
      `${provider}: ${url} is a SOAP web service, not the provider's Sefin-clone REST API (municipality ${context.municipality})`,
    );
  }
}

function jsonOf(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * The provider's answer quirks on a write (emit, cancel), before the national reader: null when the answer is
 * Sefin's JSON (or a transient 429/5xx, which the national reader classifies).
 */
export function readCloneQuirks(provider: string, answer: HttpResponse): Outcome<never> | null {
  if (answer.status === 429 || answer.status >= 500) return null;
  const parsed = jsonOf(answer.body);
  if (!parsed.ok || parsed.value === null || typeof parsed.value !== 'object') {
    if (answer.status >= 200 && answer.status < 300) return null; // the national reader: success without an NFS-e
    const snippet = answer.body.replace(/\s+/g, ' ').trim().slice(0, 200);
    return {
      kind: 'unknown',
      reason: `${provider} answered HTTP ${answer.status} with a body that is not JSON (ACBr: E9999)${snippet ? `: ${snippet}` : ''}`,
    };
  }
  const body = parsed.value as Record<string, unknown>;
  const keys = Object.keys(body).map((k) => k.toLowerCase());
  if (answer.status >= 400 && 'Message' in body && !keys.includes('erros') && !keys.includes('erro')) {
    const message = String(body.Message);
    return {
      kind: 'rejected',
      errorCode: 'E9999',
      errorMessage: message,
      errors: [{ Codigo: 'E9999', Descricao: message }],
      httpStatus: answer.status,
    };
  }
  return null;
}

/** An operation of the national family, behind the URL guard and (for writes) the answer quirks. */
function guarded<In, Out>(
  provider: SefinCloneProvider,
  operation: Operation<In, Out>,
  write: boolean,
): Operation<In, Out> {
  if ('exchange' in operation) {
    return {
      exchange(input, context, send) {
        guardEndpoint(provider, context);
        return operation.exchange(input, context, send);
      },
    };
  }
  return {
    request(input: In, context: SendContext): OperationRequest {
      guardEndpoint(provider, context);
      return operation.request(input, context);
    },
    parse(answer, input, context) {
      return (write ? readCloneQuirks(provider, answer) : null) ?? operation.parse(answer, input, context);
    },
  };
}

/** The definition of one Sefin-clone provider (engine key `dps-provider:<provider in lower case>`). */
export function sefinCloneDefinition(provider: SefinCloneProvider): FamilyDefinition {
  const cancel = national.cancel;
  const queryCancellation = national.queryCancellation;
  if (!cancel || !queryCancellation) throw new Error('the national family lost its cancellation');
  return {
    ...nationalFamily,
    id: 'dps-provider',
    provider,
    layout: `DPS 1.01 (${provider}, Sefin-clone REST/JSON)`,
    transport: 'rest-json',
    auth: 'mtls',
    operations: {
      emit: guarded(provider, national.emit, true),
      query: guarded(provider, national.query, false),
      cancel: { message: cancel.message, operation: guarded(provider, cancel.operation, true) },
      queryCancellation: guarded(provider, queryCancellation, false),
    },
  };
}

export const simplissDefinition = sefinCloneDefinition('SimplISS');
export const rlzDefinition = sefinCloneDefinition('RLZ');
export const infiscDefinition = sefinCloneDefinition('Infisc');
