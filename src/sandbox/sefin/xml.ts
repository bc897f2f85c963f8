import { gunzipSync } from 'node:zlib';
import { XmlDocument } from 'libxml2-wasm';
import { type SchemaName, validateXml } from '../../xml/xsd.ts';
import { childElements, parseDom } from '../kit/xml-dom.ts';
import { type MensagemProcessamento, officialMessage } from './codes.ts';

/** The reception checks of Sefin Nacional's data area (the DOM helpers are the kit's, ../kit/xml-dom.ts). */

export const NFSE_NS = 'http://www.sped.fazenda.gov.br/nfse';

export interface ReceivedDocument {
  /** The XML text as received (UTF-8 decoded, BOM removed). */
  xml: string;
  doc: Document;
  root: Element;
}

export type Reception = { ok: true; value: ReceivedDocument } | { ok: false; error: MensagemProcessamento };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The reception rules (Anexo I RN_RECEPCAO_DPS / Anexo IV) applied to a `…XmlGZipB64` field: base64, gzip,
 * UTF-8, well-formed XML without DTD, no namespace prefixes, the expected document type, then the schema.
 */
export function receiveDocument(
  field: unknown,
  rootName: 'DPS' | 'pedRegEvento' | 'NFSe' | 'evento',
  schema: SchemaName,
): Reception {
  if (typeof field !== 'string' || field.length === 0) {
    return { ok: false, error: officialMessage('E1225', 'Campo com o documento compactado ausente ou vazio.') };
  }
  const compact = field.replace(/\s+/g, '');
  if (!BASE64.test(compact)) {
    return { ok: false, error: officialMessage('E1225', 'Conteúdo não está em base64.') };
  }
  let bytes: Buffer;
  try {
    bytes = gunzipSync(Buffer.from(compact, 'base64'));
  } catch (err) {
    return { ok: false, error: officialMessage('E1225', `Falha ao descompactar (GZip): ${(err as Error).message}`) };
  }
  let xml: string;
  try {
    xml = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, error: officialMessage('E1229') };
  }
  if (xml.charCodeAt(0) === 0xfeff) xml = xml.slice(1);
  const declaration = /^<\?xml[^>]*\?>/.exec(xml);
  const encoding = declaration && /encoding\s*=\s*["']([^"']+)["']/i.exec(declaration[0]);
  if (encoding && encoding[1].toUpperCase() !== 'UTF-8') {
    return { ok: false, error: officialMessage('E1229', `Declaração de codificação: ${encoding[1]}.`) };
  }
  if (/<!DOCTYPE/i.test(xml)) {
    return { ok: false, error: officialMessage('E1226', 'DTD (DOCTYPE) não é permitido.') };
  }
  const wellFormed = checkWellFormed(xml);
  if (wellFormed) return { ok: false, error: officialMessage('E1226', wellFormed) };

  const doc = parseDom(xml);
  const root = doc.documentElement;
  if (!root) return { ok: false, error: officialMessage('E1226') };
  const prefixed = findPrefix(root);
  if (prefixed) return { ok: false, error: officialMessage('E1228', `Prefixo encontrado em: ${prefixed}.`) };
  if (root.localName !== rootName || root.namespaceURI !== NFSE_NS) {
    return {
      ok: false,
      error: officialMessage('E1242', `Elemento raiz recebido: ${root.localName}; esperado: ${rootName} (${NFSE_NS}).`),
    };
  }
  const xsd = validateXml(schema, xml);
  if (!xsd.ok) return { ok: false, error: officialMessage('E1235', xsd.errors.join(' | ')) };
  return { ok: true, value: { xml, doc, root } };
}

/** Null when the text is well-formed XML, else libxml's message. */
function checkWellFormed(xml: string): string | null {
  try {
    XmlDocument.fromString(xml).dispose();
    return null;
  } catch (err) {
    return `XML mal formado: ${(err as Error).message}`;
  }
}

function findPrefix(el: Element): string | null {
  if (el.prefix) return el.tagName;
  for (let i = 0; i < el.attributes.length; i++) {
    const attr = el.attributes[i];
    if (attr.name.startsWith('xmlns:') || (attr.prefix && attr.prefix !== 'xml')) return `${el.tagName}/@${attr.name}`;
  }
  for (const child of childElements(el)) {
    const found = findPrefix(child);
    if (found) return found;
  }
  return null;
}
