import { DOMParser } from '@xmldom/xmldom';

/** Minimal read-only helpers over an xmldom tree; elements are matched by local name (namespace-agnostic). */

export type ParsedXml = { ok: true; root: Element } | { ok: false; message: string };

/** Parses XML text; any parser error or warning (truncated document, bad markup) makes it unparsable. */
export function parseXml(text: string): ParsedXml {
  const problems: string[] = [];
  const record = (msg: unknown) => problems.push(String(msg).replace(/\s+/g, ' ').trim());
  let doc: Document | undefined;
  try {
    doc = new DOMParser({ errorHandler: { warning: record, error: record, fatalError: record } }).parseFromString(
      text.replace(/^\uFEFF/, ''),
      'text/xml',
    );
  } catch (error) {
    return { ok: false, message: `XML parse error: ${(error as Error).message}` };
  }
  if (problems.length > 0) return { ok: false, message: `XML parse error: ${problems[0]}` };
  const root = doc?.documentElement;
  if (!root) return { ok: false, message: 'XML parse error: no root element' };
  return { ok: true, root };
}

/**
 * The XML without its XML-DSig `Signature` elements. The DANFSe shows nothing from them, and they are a large share
 * of an NFS-e (the certificate in base64): parsing the rest only halves the parser's time.
 */
export function withoutSignatures(xml: string): string {
  return xml.replace(/<([A-Za-z_][\w.-]*:)?Signature[\s>][\s\S]*?<\/\1?Signature\s*>/g, '');
}

export function childElements(el: Element): Element[] {
  const out: Element[] = [];
  for (let node = el.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1) out.push(node as Element);
  }
  return out;
}

/** The first child element with that local name, following a `a/b/c` path. */
export function child(el: Element | null | undefined, path: string): Element | null {
  let current: Element | null = el ?? null;
  for (const name of path.split('/')) {
    if (!current) return null;
    current = childElements(current).find((c) => c.localName === name) ?? null;
  }
  return current;
}

export function children(el: Element | null | undefined, name: string): Element[] {
  return el ? childElements(el).filter((c) => c.localName === name) : [];
}

/** Trimmed text of the element at `path`, or null when absent or empty. */
export function text(el: Element | null | undefined, path: string): string | null {
  const target = child(el, path);
  const value = target?.textContent?.trim();
  return value ? value : null;
}

/** The first descendant (or the element itself) with that local name, depth-first. */
export function findDescendant(el: Element, name: string): Element | null {
  if (el.localName === name) return el;
  for (const c of childElements(el)) {
    const found = findDescendant(c, name);
    if (found) return found;
  }
  return null;
}
