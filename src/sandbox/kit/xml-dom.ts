import { DOMParser } from '@xmldom/xmldom';

/** Small DOM helpers of the sandbox kit (xmldom), shared by the sandboxes that read and write XML. */

export const XMLDSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';

/** Parses XML; throws on a fatal error (warnings and recoverable errors are ignored). */
export function parseDom(xml: string): Document {
  return new DOMParser({
    errorHandler: {
      warning: () => {},
      error: () => {},
      fatalError: (message: unknown) => {
        throw new Error(String(message));
      },
    },
  }).parseFromString(xml, 'text/xml');
}

export function childElements(el: Element): Element[] {
  const out: Element[] = [];
  for (let node = el.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1) out.push(node as Element);
  }
  return out;
}

/** The first child element with this local name (in any namespace). */
export function child(el: Element | null | undefined, name: string): Element | null {
  if (!el) return null;
  for (const c of childElements(el)) if (c.localName === name) return c;
  return null;
}

/** Walks a `a/b/c` path of child elements. */
export function at(el: Element | null | undefined, path: string): Element | null {
  let current: Element | null = el ?? null;
  for (const part of path.split('/')) {
    current = child(current, part);
    if (!current) return null;
  }
  return current;
}

/** The text of the element at `path`, or undefined when it is absent. */
export function textAt(el: Element | null | undefined, path: string): string | undefined {
  const found = at(el, path);
  return found ? (found.textContent ?? '') : undefined;
}

/** The raw text of the document's root element, from its start tag to its end tag (prolog removed). */
export function rootElementText(xml: string, rootName: string): string {
  const start = xml.search(new RegExp(`<${rootName}[\\s>/]`));
  const endTag = `</${rootName}>`;
  const end = xml.lastIndexOf(endTag);
  if (start < 0 || end < start) throw new Error(`no <${rootName}> element`);
  return xml.slice(start, end + endTag.length);
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
