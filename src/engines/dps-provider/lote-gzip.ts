import { descendantText, findDescendant, parseXml } from '../../xml/read.ts';
import { gunzipBase64, gzipBase64 } from '../../xml/transport-encoding.ts';
import { transportFailure } from '../kit/engine.ts';
import type { OperationRequest, SendContext } from '../kit/family.ts';
import type { HttpAnswer, HttpResponse } from '../kit/http-client.ts';
import { classifyFailure, issuedFromNfseXml, parseGovernmentErrors } from '../national/responses.ts';
import type { CancellationRecord, GovernmentError, IssuedDocument, Outcome } from '../types.ts';

/**
 * The `LoteXmlGZipB64` REST idiom (Pronim, Citta; briefs/providers-own.md §4): the shape of the ADN municipal
 * reception API (`POST /adn/DFe`, RecepcaoRequest `{LoteXmlGZipB64: [...]}` → RecepcaoResponseLote `{Lote: [...],
 * DataHoraProcessamento}`), with each provider's key casing. We always send one document per request.
 *
 * What both providers share, read conservatively:
 * - request `{"<key>": ["<base64(gzip(xml))>"]}`, the key spelled exactly as the provider spells it;
 * - answer `{dataHoraProcessamento, lote: [{id, chaveAcesso, xmlGZipB64, erros, alertas}]}` in any casing; an item
 *   with `erros` is a rejection whatever the HTTP status; a 2xx item without `erros` and without a readable document
 *   is `unknown` (it may have been processed);
 * - error objects `{Codigo|codigo, Descricao|descricao, Complemento}` (top level or per item);
 * - a non-2xx answer without a lote follows the national classification (4xx rejected, 429/5xx transient).
 */

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
export const ACCEPT_JSON = { accept: 'application/json' };

const withXmlDeclaration = (xml: string) => `<?xml version="1.0" encoding="UTF-8"?>${xml}`;

/** The provider's base URL (from the registry, or the local sandbox). */
export const loteBase = (context: SendContext): string =>
  context.endpoints.url('emit', context.ambiente, context.municipality).replace(/\/+$/, '');

/** `POST <url> {"<key>": ["<b64(gzip(xml))>"]}`: one signed document in a lote of one. */
export function loteRequest(url: string, key: string, xml: string): OperationRequest {
  return {
    method: 'POST',
    url,
    headers: JSON_HEADERS,
    body: JSON.stringify({ [key]: [gzipBase64(withXmlDeclaration(xml))] }),
  };
}

/** Case-insensitive property access (the providers differ: `lote`/`Lote`, `chaveAcesso`/`ChaveAcesso`). */
export function pick(obj: unknown, ...names: string[]): unknown {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  for (const name of names) {
    const lower = name.toLowerCase();
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) if (k.toLowerCase() === lower) return v;
  }
  return undefined;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Gunzips a `…GZipB64` field; null when absent or undecodable. */
export function gunzipField(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0) return null;
  try {
    return gunzipBase64(value);
  } catch {
    return null;
  }
}

/** The rejection of the errors an item (or the body) carries. */
function rejection(errors: GovernmentError[], httpStatus: number): Outcome<never> {
  const first = errors[0]!;
  return { kind: 'rejected', errorCode: first.Codigo, errorMessage: first.Descricao, errors, httpStatus };
}

/**
 * Reads a lote answer down to its one item: a rejection when the item (or the body) carries errors, the national
 * classification for a non-2xx answer without them, `unknown` for a 2xx answer that cannot be read.
 */
export function readLoteItem(answer: HttpResponse): { kind: 'item'; item: unknown } | Outcome<never> {
  const body = parseJson(answer.body);
  const items = asList(pick(body, 'lote'));
  const item = items[0];
  const itemErrors = item ? parseGovernmentErrors(item) : [];
  if (itemErrors.length > 0) return rejection(itemErrors, answer.status);
  if (answer.status < 200 || answer.status > 299) return classifyFailure(answer);
  const bodyErrors = parseGovernmentErrors(body);
  if (bodyErrors.length > 0) return rejection(bodyErrors, answer.status);
  if (!item) return { kind: 'unknown', reason: `HTTP ${answer.status} without a lote item` };
  return { kind: 'item', item };
}

/** The NFS-e of an emission answer (`lote[0].xmlGZipB64`). */
export function parseLoteIssue(answer: HttpResponse, ambiente: 1 | 2): Outcome<IssuedDocument> {
  const read = readLoteItem(answer);
  if (read.kind !== 'item') return read;
  const xml = gunzipField(pick(read.item, 'xmlGZipB64'));
  if (!xml) return { kind: 'unknown', reason: 'lote answer without a readable xmlGZipB64' };
  const chave = String(pick(read.item, 'chaveAcesso') ?? '') || null;
  const issued = issuedFromNfseXml(xml, chave, ambiente);
  return issued ? { kind: 'ok', value: issued } : { kind: 'unknown', reason: 'NFS-e without key or number' };
}

/** The `evento` of an XML text with its processing time; null when it is not one. */
export function cancellationFromEventXml(xml: string | null): CancellationRecord | null {
  if (!xml) return null;
  const parsed = parseXml(xml);
  const evento = parsed.ok ? findDescendant(parsed.root, 'evento') : null;
  if (!evento || !findDescendant(evento, 'e101101')) return null;
  const dhProc = descendantText(evento, 'dhProc');
  const at = dhProc ? new Date(dhProc) : new Date();
  return { xml, cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at };
}

/** The event of a cancellation answer (`lote[0].xmlGZipB64` holding the registered `evento`). */
export function parseLoteCancellation(answer: HttpResponse): Outcome<CancellationRecord> {
  const read = readLoteItem(answer);
  if (read.kind !== 'item') return read;
  const record = cancellationFromEventXml(gunzipField(pick(read.item, 'xmlGZipB64')));
  return record ? { kind: 'ok', value: record } : { kind: 'unknown', reason: 'cancellation answer without an event' };
}

/**
 * The events answer of a note (the ADN Município shape `GET /NFSe/{chave}/Eventos`: `{loteDFe: [{tipoEvento,
 * arquivoXml}]}` in any casing, `arquivoXml` gzip+base64): the cancellation (e101101), `ok(null)` when there is
 * none (404 or an empty list).
 */
export function parseEventsAnswer(answer: HttpAnswer): Outcome<CancellationRecord | null> {
  if (answer.kind !== 'response') return transportFailure(answer);
  if (answer.status === 404) return { kind: 'ok', value: null };
  if (answer.status !== 200) return classifyFailure(answer);
  const body = parseJson(answer.body);
  if (!body) return { kind: 'transient', reason: 'events answer is not JSON' };
  for (const entry of asList(pick(body, 'loteDFe'))) {
    const record = cancellationFromEventXml(gunzipField(pick(entry, 'arquivoXml')));
    if (record) return { kind: 'ok', value: record };
  }
  return { kind: 'ok', value: null };
}

/** The NFS-e XML of a consultation item (`xmlGZipB64`), read into an issued note; null when unreadable. */
export function issuedFromQueryItem(item: unknown, ambiente: 1 | 2): IssuedDocument | null {
  const xml = gunzipField(pick(item, 'xmlGZipB64'));
  if (!xml) return null;
  const chave = String(pick(item, 'chave', 'chaveAcesso') ?? '') || null;
  return issuedFromNfseXml(xml, chave, ambiente);
}

/** A 50-digit national access key, or an error (a note of these providers is always known by its key). */
export function requireKey(chave: string | null): string {
  if (!chave || !/^\d{50}$/.test(chave)) throw new Error('a note of this provider without its access key');
  return chave;
}
