import { escapeXmlText } from '../../xml/escape.ts';
import { childElements, findDescendant, outerXml, parseXmlDocument } from '../../xml/read.ts';

/**
 * SOAP 1.1 / 1.2 envelopes and answers for the municipal families. The providers use three idioms
 * (briefs/providers-own.md §5), all expressed as parts of one operation element:
 * - document/literal (.NET ASMX, ABRASF 2.0x): a wrapper element per operation in the service namespace, the
 *   message XML embedded as elements or as an escaped string in named parameters (`nfseCabecMsg`, `nfseDadosMsg`);
 * - rpc/literal string arguments (JAX-RPC, GINFES): `arg0`, `arg1`, … unqualified, each an escaped XML string;
 * - a single string parameter carrying the message in CDATA (SIL `<xml>`, Digifred `<param>`).
 */
export type SoapVersion = '1.1' | '1.2';

export const SOAP_NAMESPACES: Record<SoapVersion, string> = {
  '1.1': 'http://schemas.xmlsoap.org/soap/envelope/',
  '1.2': 'http://www.w3.org/2003/05/soap-envelope',
};

/** How a part's value is written: embedded XML elements, an escaped string, or a CDATA section. */
export type PartEncoding = 'xml' | 'escaped' | 'cdata';

export interface SoapPart {
  name: string;
  value: string;
  encoding: PartEncoding;
  /** whether the part's element is in the operation's namespace (document/literal) or unqualified (rpc/literal) */
  qualified: boolean;
  /** an `xml` value written as the operation's child itself, without a wrapper element (Betha's `DPS`) */
  bare?: boolean;
}

export interface SoapCall {
  version: SoapVersion;
  /** the service namespace of the operation element */
  namespace: string;
  operation: string;
  parts: SoapPart[];
  /** SOAPAction (1.1 header, 1.2 `action` parameter of the content type); empty or absent for some providers */
  soapAction?: string;
}

/** A part value inside CDATA: a `]]>` in the payload is split across two sections, as XML requires. */
function cdata(value: string): string {
  return `<![CDATA[${value.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`;
}

function partXml(part: SoapPart): string {
  const tag = part.qualified ? `ns:${part.name}` : part.name;
  const inner =
    part.encoding === 'xml'
      ? part.value.replace(/^<\?xml[^>]*\?>\s*/, '')
      : part.encoding === 'cdata'
        ? cdata(part.value)
        : escapeXmlText(part.value);
  return part.bare ? inner : `<${tag}>${inner}</${tag}>`;
}

/** The envelope text and the HTTP headers of a SOAP call. */
export function soapEnvelope(call: SoapCall): { body: string; headers: Record<string, string> } {
  const env = SOAP_NAMESPACES[call.version];
  const body =
    `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${env}"><soap:Body>` +
    `<ns:${call.operation} xmlns:ns="${call.namespace}">${call.parts.map(partXml).join('')}</ns:${call.operation}>` +
    '</soap:Body></soap:Envelope>';
  const headers: Record<string, string> =
    call.version === '1.1'
      ? { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${call.soapAction ?? ''}"` }
      : {
          'content-type': `application/soap+xml; charset=utf-8${call.soapAction ? `; action="${call.soapAction}"` : ''}`,
        };
  return { body, headers: { ...headers, accept: 'text/xml, application/soap+xml' } };
}

/** The idioms as part lists: what a family's operations table names. */
export const soapParts = {
  /** document/literal with named parameters (ABRASF 2.0x: `nfseCabecMsg` and `nfseDadosMsg`) */
  documentLiteral(values: Record<string, string>, encoding: PartEncoding = 'escaped'): SoapPart[] {
    return Object.entries(values).map(([name, value]) => ({ name, value, encoding, qualified: false }));
  },
  /** rpc/literal: `arg0`, `arg1`, … as escaped strings (GINFES) */
  rpcArguments(values: string[]): SoapPart[] {
    return values.map((value, i) => ({ name: `arg${i}`, value, encoding: 'escaped', qualified: false }));
  },
  /** one string parameter carrying the message in CDATA (SIL `xml`, Digifred `param`) */
  cdataString(name: string, value: string): SoapPart[] {
    return [{ name, value, encoding: 'cdata', qualified: false }];
  },
};

export type SoapAnswer =
  | { kind: 'fault'; code: string; reason: string }
  /** `result`: the first element inside the operation's response, as XML text (an escaped string is unescaped) */
  | { kind: 'body'; operation: string; result: string | null }
  | { kind: 'unreadable'; reason: string };

/**
 * Reads a SOAP 1.1 or 1.2 answer: a Fault (1.1 `faultcode`/`faultstring`, 1.2 `Code/Value`/`Reason/Text`), or the
 * operation's response element with its first result. A result written as an escaped string (GINFES, São Paulo)
 * and one written as elements (ABRASF 2.0x) come out the same: the XML text of the provider's message.
 */
export function readSoapAnswer(text: string): SoapAnswer {
  let root: Element | null;
  try {
    root = parseXmlDocument(text, () => undefined).documentElement;
  } catch (err) {
    return { kind: 'unreadable', reason: err instanceof Error ? err.message : String(err) };
  }
  if (root?.localName !== 'Envelope') return { kind: 'unreadable', reason: 'not a SOAP envelope' };
  const body = childElements(root).find((e) => e.localName === 'Body');
  if (!body) return { kind: 'unreadable', reason: 'SOAP envelope without a Body' };
  const first = childElements(body)[0];
  if (!first) return { kind: 'unreadable', reason: 'empty SOAP Body' };
  if (first.localName === 'Fault') {
    const byName = (name: string) => findDescendant(first, name);
    const code = byName('faultcode')?.textContent ?? findDescendant(byName('Code') ?? first, 'Value')?.textContent;
    const reason = byName('faultstring')?.textContent ?? findDescendant(byName('Reason') ?? first, 'Text')?.textContent;
    return { kind: 'fault', code: (code ?? 'soap:Server').trim(), reason: (reason ?? '').trim() };
  }
  const result = childElements(first)[0];
  return { kind: 'body', operation: first.localName, result: result ? resultXml(result) : null };
}

/** An escaped string result is its text (unescaped by the parser); an element result is its elements' XML. */
function resultXml(element: Element): string {
  const elements = childElements(element);
  if (elements.length === 0) return (element.textContent ?? '').trim();
  return elements.map(outerXml).join('');
}
