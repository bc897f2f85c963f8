import { childElements, parseXml } from '../../xml/read.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { readSoapAnswer } from '../kit/soap.ts';
import type { GovernmentError, Outcome } from '../types.ts';

/**
 * Answers of the SOAP services that carry the provider's message as one string (SIL `<return>`, Digifred and
 * Coplan, briefs/providers-own.md §5): the SOAP layer read by the kit, then the provider's own XML message.
 */

/** The provider's message inside a SOAP answer, or the outcome of an answer that carries none. */
export type StringAnswer = { kind: 'message'; root: Element } | { kind: 'failure'; outcome: Outcome<never> };

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Undoes one level of XML escaping (SIL's consultations are escaped twice). */
function unescapeOnce(text: string): string {
  return text.replace(
    /&(lt|gt|amp|quot|apos|#(\d+)|#x([0-9a-fA-F]+));/g,
    (_m, name: string, dec?: string, hex?: string) =>
      dec ? String.fromCodePoint(Number(dec)) : hex ? String.fromCodePoint(Number.parseInt(hex, 16)) : ENTITIES[name],
  );
}

/**
 * The message of a string-SOAP answer. `write`: the request changed something (emission, cancellation), so an
 * unreadable 2xx answer is `unknown` (it may have been processed); for a read it is `transient`.
 */
export function readStringAnswer(answer: HttpResponse, write: boolean): StringAnswer {
  const unreadable = (reason: string): StringAnswer => ({
    kind: 'failure',
    outcome: write ? { kind: 'unknown', reason } : { kind: 'transient', reason },
  });
  const soap = readSoapAnswer(answer.body);
  // a SOAP 1.1 fault comes with HTTP 500: the client's own fault (soap:Client) is a refusal, not a server failure
  const clientFault = soap.kind === 'fault' && /(^|:)Client(\.|$)/i.test(soap.code);
  if (!clientFault && (answer.status === 429 || answer.status >= 500)) {
    const detail = soap.kind === 'fault' ? ` ${soap.code} ${soap.reason}` : '';
    return {
      kind: 'failure',
      outcome: { kind: 'transient', reason: `HTTP ${answer.status}${detail}`, httpStatus: answer.status },
    };
  }
  if (soap.kind === 'fault') {
    return {
      kind: 'failure',
      outcome: {
        kind: 'rejected',
        errorCode: soap.code,
        errorMessage: soap.reason || 'SOAP Fault',
        errors: [{ Codigo: soap.code, Descricao: soap.reason || 'SOAP Fault' }],
        httpStatus: answer.status,
      },
    };
  }
  if (soap.kind === 'unreadable') return unreadable(`HTTP ${answer.status}: ${soap.reason}`);
  let message = (soap.result ?? '').trim();
  // ACBr strips what some providers put around their message: XML declarations (Digifred sends two) and CDATA
  for (let i = 0; i < 3 && message.startsWith('&lt;'); i++) message = unescapeOnce(message).trim();
  message = message
    .replace(/^<!\[CDATA\[([\s\S]*)\]\]>$/, '$1')
    .replace(/<\?xml[^>]*\?>/g, '')
    .trim();
  if (!message) return unreadable(`HTTP ${answer.status}: an empty ${soap.operation}`);
  const parsed = parseXml(message);
  if (!parsed.ok) return unreadable(`HTTP ${answer.status}: ${parsed.message}`);
  // a string wrapped in one more element (GeneXus `<Outputxml>`): its text is the message
  const inner = (parsed.root.textContent ?? '').trim();
  if (childElements(parsed.root).length === 0 && inner.startsWith('<')) {
    const unwrapped = parseXml(inner.replace(/<\?xml[^>]*\?>/g, '').trim());
    if (!unwrapped.ok) return unreadable(`HTTP ${answer.status}: ${unwrapped.message}`);
    return { kind: 'message', root: unwrapped.root };
  }
  return { kind: 'message', root: parsed.root };
}

/** Every `{codigo|Codigo, descricao|Descricao|mensagem|Mensagem, correcao|Correcao}` group below `root`. */
export function messagesOf(root: Element): GovernmentError[] {
  const out: GovernmentError[] = [];
  const visit = (el: Element) => {
    const fields = childElements(el);
    const value = (...names: string[]) => fields.find((f) => names.includes(f.localName))?.textContent?.trim() || null;
    const code = value('codigo', 'Codigo');
    if (code && fields.every((f) => childElements(f).length === 0)) {
      out.push({
        Codigo: code,
        Descricao: value('descricao', 'Descricao', 'mensagem', 'Mensagem') ?? 'Erro não detalhado pelo provedor',
        Complemento: value('correcao', 'Correcao', 'complemento', 'Complemento'),
      });
      return;
    }
    for (const f of fields) visit(f);
  };
  visit(root);
  return out;
}

/** A refusal outcome from the provider's messages (the first one's code), or `fallback` when there are none. */
export function refusal(errors: GovernmentError[], fallback: GovernmentError): Outcome<never> {
  const list = errors.length > 0 ? errors : [fallback];
  return { kind: 'rejected', errorCode: list[0].Codigo, errorMessage: list[0].Descricao, errors: list };
}
