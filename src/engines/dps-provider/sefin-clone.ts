import { municipalityRegistry } from '../routing/municipality-registry.ts';
import { UnknownEndpointError } from '../kit/family.ts';
import { transportFailure } from '../kit/engine.ts';
import type { Endpoints, FamilyDefinition, Operation, OperationRequest, SendContext } from '../kit/family.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { nationalFamily } from '../national/family.ts';
import { classifyFailure, parseIssueResponse } from '../national/responses.ts';
import type { IssuedDocument, Outcome } from '../types.ts';

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
 *
 * Tiplan (`tiplanDefinition` below) is the same API at its own paths, as ACBr's TiplanAPIPropria sends it (over
 * the PadraoNacional provider; the registry's Macaé and Americana entries):
 *
 *   POST <Recepcionar> {"dpsXmlGZipB64"}                       (…/api/adn/dps/recepcao, no path appended)
 *   POST <EnviarEvento> {"pedidoRegistroEventoXmlGZipB64"}      (…/api/adn/dps/evento, no key in the path)
 *   GET  <ConsultarNFSeRps>/{nDPS}                             (…/api/adn/dps/chave-acesso/{nDPS}: the key)
 *
 * and its .ini sends ConsultarNFSePorChave and ConsultarEvento to Sefin Nacional (`ServicosPadraoNacional`):
 * `nationalOperations` query (its second step, GET /nfse/{chave}) and queryCancellation. Tiplan answers Sefin's
 * JSON; its framework errors are `{"Message": …}` (ACBr rewrites any such body as an `erros` E9999).
 * Conservative readings (the sandbox accepts only these):
 * - the three URLs share one base: the registry's `Recepcionar` without its final `/recepcao` (both cities that have
 *   REST addresses list exactly `<base>/recepcao|evento|chave-acesso`); a `Recepcionar` that is a SOAP service
 *   (Itaguaí, Mangaratiba, Piraí: ABRASF `WSNacional/nfse.asmx`) is refused with ENGINE_ENDPOINT_UNKNOWN;
 * - the key lookup is by the DPS number alone (as ACBr sends it): the engine believes the key only when the NFS-e
 *   it names (read at Sefin Nacional) carries our DPS Id; another DPS's note is an unknown outcome, never ours;
 *   a 404 is "none";
 * - a `{"Message": …}` 4xx on a write is a refusal before processing (rejected E9999, as ACBr reads it); a
 *   `{"Message": …}` 5xx stays transient, and a non-JSON 4xx is unknown (as for SimplISS).
 */

export type SefinCloneProvider = 'SimplISS' | 'RLZ' | 'Infisc';

const national = nationalFamily.operations;

/** SOAP services (ABRASF `.svc`/`.asmx`, WSDL addresses) left in the registry as a city's `Recepcionar`. */
const SOAP_SERVICE = /\.(svc|asmx)(\/|$|\?)|\?wsdl$|\/nfseservice\b/i;

/**
 * The cities whose registered addresses are the provider's SOAP web service, not its Sefin-clone REST API: not served
 * by this engine (routing reports them as not implemented; `guardEndpoint` also refuses to send there).
 */
function servesRestApi(municipality: string): boolean {
  const endpoints = municipalityRegistry().find(municipality)?.parameters?.endpoints;
  const urls = [...Object.values(endpoints?.production ?? {}), ...Object.values(endpoints?.homologation ?? {})];
  return !urls.some((url) => SOAP_SERVICE.test(url));
}

function guardEndpoint(provider: string, context: SendContext): void {
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
    serves: servesRestApi,
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

/** Tiplan's base (…/api/adn/dps): the city's `Recepcionar` without `/recepcao`; a SOAP service is refused. */
function tiplanBase(context: SendContext): string {
  guardEndpoint('Tiplan', context);
  return context.endpoints.url('emit', context.ambiente, context.municipality).replace(/\/recepcao\/?$/i, '');
}

/** The context of an operation Tiplan's cities send to Sefin Nacional (`nationalOperations`: live, Sefin's URL). */
function tiplanNationalContext(context: SendContext, operation: 'query' | 'queryCancellation'): SendContext {
  const endpoints: Endpoints = {
    url: (_op, ambiente, municipality) => context.endpoints.url(operation, ambiente, municipality),
  };
  return { ...context, endpoints };
}

const ACCEPT_JSON = { accept: 'application/json' };

function chaveOf(text: string): string | null {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const chave = String(body.chaveAcesso ?? body.ChaveAcesso ?? '');
    return /^\d{50}$/.test(chave) ? chave : null;
  } catch {
    return null;
  }
}

/** Tiplan (engine key `dps-provider:tiplan`): the national operations at Tiplan's own paths (see the top). */
function buildTiplanDefinition(): FamilyDefinition {
  const cancel = national.cancel;
  const queryCancellation = national.queryCancellation;
  const emit = national.emit;
  if (!cancel || !queryCancellation || !('request' in emit) || !('request' in cancel.operation)) {
    throw new Error('the national family changed its operations');
  }
  const cancelOperation = cancel.operation;
  return {
    ...nationalFamily,
    id: 'dps-provider',
    provider: 'Tiplan',
    serves: servesRestApi,
    layout: 'DPS 1.01 (Tiplan, Sefin-clone REST/JSON at /api/adn/dps)',
    transport: 'rest-json',
    auth: 'mtls',
    nationalOperations: ['query', 'queryCancellation'],
    operations: {
      emit: {
        request: (document, context) => ({
          ...emit.request(document, context),
          url: `${tiplanBase(context)}/recepcao`,
        }),
        parse: (answer, document, context) =>
          readCloneQuirks('Tiplan', answer) ?? emit.parse(answer, document, context),
      },
      query: {
        async exchange(document, context, send): Promise<Outcome<IssuedDocument | null>> {
          const nDPS = /<nDPS>0*(\d+)<\/nDPS>/.exec(document.xml)?.[1];
          if (!nDPS) throw new Error('a DPS without nDPS');
          const url = `${tiplanBase(context)}/chave-acesso/${nDPS}`;
          const found = await send({ method: 'GET', url, headers: ACCEPT_JSON });
          if (found.kind !== 'response') return transportFailure(found);
          if (found.status === 404) return { kind: 'ok', value: null };
          if (found.status !== 200) return classifyFailure(found);
          const chave = chaveOf(found.body);
          if (!chave) return { kind: 'transient', reason: 'Tiplan chave-acesso answered without a key' };
          const sefin = tiplanNationalContext(context, 'query');
          const base = sefin.endpoints.url('query', context.ambiente, context.municipality);
          const nfse = await send({ method: 'GET', url: `${base}/nfse/${chave}`, headers: ACCEPT_JSON });
          const outcome = parseIssueResponse(nfse, context.ambiente);
          if (outcome.kind === 'rejected') return { kind: 'transient', reason: `GET /nfse: ${outcome.errorCode}` };
          if (outcome.kind !== 'ok') return outcome;
          if (!outcome.value.xml.includes(`Id="${document.id}"`)) {
            return {
              kind: 'unknown',
              reason: `Tiplan's key for DPS number ${nDPS} (${chave}) is the note of another DPS than ${document.id}`,
            };
          }
          return outcome;
        },
      },
      cancel: {
        message: cancel.message,
        operation: {
          request: (input, context) => ({
            ...cancelOperation.request(input, context),
            url: `${tiplanBase(context)}/evento`,
          }),
          parse: (answer, input, context) =>
            readCloneQuirks('Tiplan', answer) ?? cancelOperation.parse(answer, input, context),
        },
      },
      queryCancellation: {
        async exchange(issued, context, send) {
          const sefin = tiplanNationalContext(context, 'queryCancellation');
          if ('exchange' in queryCancellation) return queryCancellation.exchange(issued, sefin, send);
          const answer = await send(queryCancellation.request(issued, sefin));
          if (answer.kind !== 'response') return transportFailure(answer);
          return queryCancellation.parse(answer, issued, sefin);
        },
      },
    },
  };
}

export const tiplanDefinition = buildTiplanDefinition();
