import { child, childElements, parseDom } from './xml-dom.ts';

const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

/** What a SOAP 1.1 request body holds: the operation element (Body's first child), or why it cannot be read. */
export type Soap11Call =
  | { ok: true; call: Element | undefined }
  | { ok: false; kind: 'malformed' | 'version'; message: string };

/**
 * Reads a SOAP 1.1 request as the sandboxes' own services do: a body that does not parse is `malformed` ("XML
 * malformado: …"), an envelope that is not SOAP 1.1's is `version` ("Somente SOAP 1.1 é aceito."); otherwise the first
 * element of the Body (of the envelope itself when there is no Body), if any.
 */
export function readSoap11Call(body: Buffer): Soap11Call {
  let envelope: Element | null;
  try {
    envelope = parseDom(body.toString('utf8')).documentElement;
  } catch (err) {
    return { ok: false, kind: 'malformed', message: `XML malformado: ${(err as Error).message}` };
  }
  if (envelope?.localName !== 'Envelope' || envelope.namespaceURI !== SOAP11_NS)
    return { ok: false, kind: 'version', message: 'Somente SOAP 1.1 é aceito.' };
  return { ok: true, call: childElements(child(envelope, 'Body') ?? envelope)[0] };
}
