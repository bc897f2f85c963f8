import { gunzipBase64 } from '../../xml/transport-encoding.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { nationalFamily } from '../national/family.ts';
import { issuedFromNfseXml } from '../national/responses.ts';
import type { GovernmentError, IssuedDocument, Outcome } from '../types.ts';
import { nationalQuery } from './raw-xml.ts';

/**
 * Modernização Pública (7 municipalities in RJ; registry `ModernizacaoPublica`; briefs/providers-own.md §4): the
 * national DPS 1.01 signed on infDPS (national builder and signer), POSTed raw to each city's
 * `…/ReceberDPS.rule?sys=NFE` with HTTP Basic (WSUser:WSSenha = the project's basicAuthUsuario / basicAuthSenha) AND
 * the A1 certificate in the TLS handshake. Synchronous; the answer is JSON, `{"sucesso":"false","mensagem":…}` on
 * error.
 *
 * What the brief documents is that one operation. So:
 * - no cancellation (capabilities.cancel false: POST /cancelar is refused CANCEL_NOT_SUPPORTED): the brief documents
 *   no cancellation service for this provider, and ACBr's `ServicosPadraoNacional` does not send it to Sefin either;
 * - reconciliation through Sefin Nacional, as ACBr's .ini says for these cities (`ServicosPadraoNacional:
 *   ConsultarNFSeRps, ConsultarNFSePorChave`): the national GET /dps/{id} then GET /nfse/{chave}, with the
 *   certificate only (never the Basic credentials) — `nationalOperations: ['query']`.
 *
 * Conservative readings (the sandbox, src/sandbox/raw-xml/, accepts and answers only these):
 * - the body is the signed DPS with an XML declaration, `content-type: application/xml`; `?sys=NFE` is kept; the
 *   registry's URL is used as it is when it already names ReceberDPS.rule, else `/ReceberDPS.rule?sys=NFE` is
 *   appended (sandbox mode);
 * - success is written down as: HTTP 2xx, JSON, `sucesso` true or "true", AND a national NFS-e with key and number
 *   in `nfseXmlGZipB64` (gzip+base64, Sefin's name) or in any string field holding the XML itself. `sucesso` true
 *   without a readable NFS-e, a 2xx that is not JSON, or JSON without `sucesso`, is `unknown` (reconciled via
 *   Sefin before anything is resent);
 * - `sucesso` false/"false" is a refusal; its code is the national code leading `mensagem` (`E0014 - …`), else
 *   `ERRO`; E0014 ("DPS already processed") becomes `unknown` and is reconciled;
 * - 401/403 refuse (bad credentials or certificate: nothing was processed); another 4xx that is not JSON says
 *   nothing about processing: `unknown`; 429/5xx are transient.
 */

const XML_HEADERS = { 'content-type': 'application/xml; charset=utf-8', accept: 'application/json' };
const withXmlDeclaration = (xml: string) => `<?xml version="1.0" encoding="UTF-8"?>${xml}`;

/** The reception URL: the registry's (it names ReceberDPS.rule), or the sandbox base + the documented path. */
export function receberDpsUrl(context: SendContext): string {
  const base = context.endpoints.url('emit', context.ambiente, context.municipality);
  return /ReceberDPS\.rule/i.test(base) ? base : `${base}/ReceberDPS.rule?sys=NFE`;
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isTrue = (value: unknown) => value === true || String(value).toLowerCase() === 'true';
const isFalse = (value: unknown) => value === false || String(value).toLowerCase() === 'false';

function pick(body: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(body).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : body[key];
}

/** The NFS-e of a success answer: `nfseXmlGZipB64`, or a string field holding the XML. */
function nfseOf(body: Record<string, unknown>, ambiente: 1 | 2): IssuedDocument | null {
  const packed = pick(body, 'nfseXmlGZipB64');
  const candidates: string[] = [];
  if (typeof packed === 'string' && packed) {
    try {
      candidates.push(gunzipBase64(packed));
    } catch {
      // not readable: other fields may still carry it
    }
  }
  for (const value of Object.values(body)) {
    if (typeof value === 'string' && value.trimStart().startsWith('<') && value.includes('infNFSe')) {
      candidates.push(value.trim());
    }
  }
  for (const xml of candidates) {
    const issued = issuedFromNfseXml(xml.replace(/^<\?xml[^>]*\?>/, ''), null, ambiente);
    if (issued) return issued;
  }
  return null;
}

function refusalOf(body: Record<string, unknown>, status: number): Outcome<never> {
  const mensagem = String(pick(body, 'mensagem') ?? '').trim() || 'Erro não detalhado pelo provedor';
  const code = /^([A-Z]\d{3,4})\b/.exec(mensagem)?.[1] ?? 'ERRO';
  const error: GovernmentError = { Codigo: code, Descricao: mensagem };
  return { kind: 'rejected', errorCode: code, errorMessage: mensagem, errors: [error], httpStatus: status };
}

function parseReception(answer: HttpResponse, ambiente: 1 | 2): Outcome<IssuedDocument> {
  if (answer.status === 429 || answer.status >= 500) {
    return { kind: 'transient', reason: `HTTP ${answer.status}`, httpStatus: answer.status };
  }
  const body = parseJson(answer.body);
  if (!body) {
    if (answer.status === 401 || answer.status === 403) {
      const error = { Codigo: `HTTP${answer.status}`, Descricao: answer.body.slice(0, 500) || 'acesso negado' };
      return { kind: 'rejected', errorCode: error.Codigo, errorMessage: error.Descricao, errors: [error] };
    }
    return { kind: 'unknown', reason: `HTTP ${answer.status}: the answer is not JSON` };
  }
  const sucesso = pick(body, 'sucesso');
  if (isFalse(sucesso) || answer.status === 401 || answer.status === 403) return refusalOf(body, answer.status);
  if (answer.status >= 300) return { kind: 'unknown', reason: `HTTP ${answer.status} without "sucesso": false` };
  if (!isTrue(sucesso)) return { kind: 'unknown', reason: 'answer without "sucesso"' };
  const issued = nfseOf(body, ambiente);
  return issued
    ? { kind: 'ok', value: issued }
    : { kind: 'unknown', reason: 'success answer without a readable NFS-e' };
}

export const modernizacaoPublicaDefinition = defineFamily({
  id: 'dps-provider',
  provider: 'ModernizacaoPublica',
  layout: 'DPS 1.01 (Modernização Pública ReceberDPS.rule, raw XML + Basic)',
  transport: 'rest-json',
  auth: 'basic',
  presentsCertificate: true,
  nationalOperations: ['query'],
  capabilities: {
    cancel: false,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  check: nationalFamily.check,
  declaration: nationalFamily.declaration,
  operations: {
    emit: {
      request: (document, context): OperationRequest => ({
        method: 'POST',
        url: receberDpsUrl(context),
        headers: XML_HEADERS,
        body: withXmlDeclaration(document.xml),
      }),
      parse: (answer, _document, context) => parseReception(answer, context.ambiente),
    },
    query: nationalQuery,
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: [],
});
