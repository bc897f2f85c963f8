import { DOMParser, XMLSerializer } from '@xmldom/xmldom';

/**
 * The XML reader of the service (the sandbox keeps parsers of its own, on purpose): one DOM parser
 * (`parseXmlDocument`) and read-only helpers over its tree that match elements by local name (namespace-agnostic).
 * The helpers also read the trees of `light-read.ts` (the hot readers' faster parser).
 */

/** A message of the parser: `warning`, `error` or `fatalError` (the document could not be read). */
export type XmlProblemLevel = 'warning' | 'error' | 'fatalError';

/**
 * Parses XML text into a DOM document, passing every message of the parser to `onProblem` (which may throw to stop
 * the parse). What counts as unreadable is the caller's choice: see `parseXml` (any message) and `xml/sign.ts`
 * (errors only).
 */
export function parseXmlDocument(text: string, onProblem: (level: XmlProblemLevel, message: string) => void): Document {
  return new DOMParser({
    errorHandler: {
      warning: (message: string) => onProblem('warning', message),
      error: (message: string) => onProblem('error', message),
      fatalError: (message: string) => onProblem('fatalError', message),
    },
  }).parseFromString(text, 'text/xml');
}

export type ParsedXml = { ok: true; root: Element } | { ok: false; message: string };

/** Parses XML text; any parser error or warning (truncated document, bad markup) makes it unparsable. */
export function parseXml(text: string): ParsedXml {
  const problems: string[] = [];
  const record = (_level: XmlProblemLevel, msg: unknown) => problems.push(String(msg).replace(/\s+/g, ' ').trim());
  let doc: Document | undefined;
  try {
    doc = parseXmlDocument(text.replace(/^\uFEFF/, ''), record);
  } catch (error) {
    return { ok: false, message: `XML parse error: ${(error as Error).message}` };
  }
  if (problems.length > 0) return { ok: false, message: `XML parse error: ${problems[0]}` };
  const root = doc?.documentElement;
  if (!root) return { ok: false, message: 'XML parse error: no root element' };
  return { ok: true, root };
}

/**
 * The XML without its XML-DSig `Signature` elements. Readers that need nothing from them parse the rest only: they
 * are a large share of a signed document (the certificate in base64).
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

/** The first descendant (or the element itself) with that local name, depth-first (document order). */
export function findDescendant(el: Element, name: string): Element | null {
  if (el.localName === name) return el;
  for (const c of childElements(el)) {
    const found = findDescendant(c, name);
    if (found) return found;
  }
  return null;
}

/** Trimmed text of the first descendant (or the element itself) with that local name, or null when absent or empty. */
export function descendantText(el: Element | null | undefined, name: string): string | null {
  const value = el ? findDescendant(el, name)?.textContent?.trim() : undefined;
  return value ? value : null;
}

/** The XML text of a node as parsed (an element with its attributes, namespace declarations and content). */
export function outerXml(node: Node): string {
  return new XMLSerializer().serializeToString(node);
}
