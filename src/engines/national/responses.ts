import { parseXmlLight } from '../../xml/light-read.ts';
import { findDescendant, text, withoutSignatures } from '../../xml/read.ts';
import { gunzipBase64 } from '../../xml/transport-encoding.ts';
import { transportFailure } from '../kit/engine.ts';
import type { HttpAnswer } from '../kit/http-client.ts';
import type { GovernmentError, IssuedDocument, Outcome } from '../types.ts';

/** Case-insensitive property access: Sefin answers both `codigo` and `Codigo`, `erros` and `Erros`. */
function pick(obj: unknown, name: string): unknown {
  if (!obj || typeof obj !== 'object') return undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

function str(value: unknown): string | null {
  return value === undefined || value === null ? null : String(value);
}

/** Reads the `erros[]` / `erro{}` of an error body into the status `errors[]` shape. */
export function parseGovernmentErrors(body: unknown): GovernmentError[] {
  const list = pick(body, 'erros') ?? pick(body, 'erro');
  const items = Array.isArray(list) ? list : list ? [list] : [];
  return items.map((item) => ({
    Codigo: str(pick(item, 'codigo')) ?? 'E0000',
    Descricao: str(pick(item, 'descricao')) ?? str(pick(item, 'mensagem')) ?? 'Erro não detalhado pela Sefin',
    Complemento: str(pick(item, 'complemento')),
  }));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A non-2xx answer: the error kind follows the status (4xx business/permanent, 429/5xx transient). */
export function classifyFailure(res: Extract<HttpAnswer, { kind: 'response' }>): Outcome<never> {
  const body = parseJson(res.body);
  const errors = parseGovernmentErrors(body);
  if (res.status === 429 || res.status >= 500) {
    const retryAfter = Number(res.headers['retry-after']);
    return {
      kind: 'transient',
      reason: `HTTP ${res.status}${errors[0] ? ` ${errors[0].Codigo} ${errors[0].Descricao}` : ''}`,
      httpStatus: res.status,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  }
  const first = errors[0] ?? {
    Codigo: `HTTP${res.status}`,
    Descricao: res.body.slice(0, 500) || `HTTP ${res.status}`,
  };
  return {
    kind: 'rejected',
    errorCode: first.Codigo,
    errorMessage: first.Descricao,
    errors: errors.length > 0 ? errors : [first],
    httpStatus: res.status,
  };
}

/** The NFS-e as returned in `nfseXmlGZipB64`, with its key, number and processing time. */
export function issuedFromNfseXml(xml: string, fallbackKey: string | null, ambiente: 1 | 2): IssuedDocument | null {
  // the signatures (two, each with its certificate) are most of the text and nothing is read from them: the parse
  // without them takes a third of the time
  const parsed = parseXmlLight(withoutSignatures(xml));
  const inf = parsed.ok ? findDescendant(parsed.root, 'infNFSe') : null;
  const idAttr = /^NFS(\d{50})$/.exec(inf?.getAttribute('Id') ?? '')?.[1] ?? null;
  const chave = idAttr ?? fallbackKey;
  const numero = text(inf, 'nNFSe');
  const dhProc = text(inf, 'dhProc');
  if (!chave || !numero) return null;
  return { chave, numero, emittedAt: dhProc ? new Date(dhProc) : new Date(), xml, ambiente };
}

export function parseIssueResponse(res: HttpAnswer, ambiente: 1 | 2): Outcome<IssuedDocument> {
  if (res.kind !== 'response') return transportFailure(res);
  if (res.status !== 201 && res.status !== 200) return classifyFailure(res);
  const body = parseJson(res.body);
  const b64 = str(pick(body, 'nfseXmlGZipB64'));
  if (!b64) return { kind: 'unknown', reason: 'success answer without nfseXmlGZipB64' };
  let xml: string;
  try {
    xml = gunzipBase64(b64);
  } catch {
    return { kind: 'unknown', reason: 'success answer with an undecodable NFS-e' };
  }
  const issued = issuedFromNfseXml(xml, str(pick(body, 'chaveAcesso')), ambiente);
  return issued ? { kind: 'ok', value: issued } : { kind: 'unknown', reason: 'NFS-e without key or number' };
}
