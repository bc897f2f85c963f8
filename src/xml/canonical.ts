/**
 * Inclusive C14N 1.0 (https://www.w3.org/TR/2001/REC-xml-c14n-20010315) of one element, computed directly on the
 * string for documents that are already in canonical form, the form our builders write.
 *
 * The scanner reads the whole document once. Inside the element to sign it accepts only markup that C14N would
 * reproduce byte for byte: `<a>` start tags with namespace declarations first (sorted, none redundant) followed by
 * unprefixed attributes in sorted order, each written ` name="value"` with the C14N escapes, explicit end tags, text
 * escaped with `&amp;` `&lt;` `&gt;` `&#xD;` only. The apex element itself is re-rendered: it receives the namespace
 * declarations in scope from its ancestors (e.g. the default namespace of `<DPS xmlns="…">`) and its attributes are
 * sorted. Anything else (comments, CDATA, processing instructions, a DOCTYPE, self-closing tags inside the element,
 * other entity references, `xml:*` attributes on ancestors, …) is reported as unsupported and the caller falls back to
 * a generic canonicalizer.
 */

/** Namespaces in scope: prefix (`''` for the default namespace) → namespace URI. */
export type NamespaceScope = ReadonlyMap<string, string>;

export interface CanonicalElement {
  /** The inclusive canonical form of the element (the octets to digest, as a string). */
  canonical: string;
  /** Qualified name of the element as written. */
  qualifiedName: string;
  /** Value of its `Id` attribute (or `ID`, `id`), null when it has none. */
  id: string | null;
  /** True when the element is the document element. */
  isRoot: boolean;
  /** Index just after the element's end tag, and the namespaces in scope there (its parent's). */
  afterElementIndex: number;
  afterElementScope: NamespaceScope;
  /** Index of the document element's end tag, and the namespaces in scope inside the document element. */
  rootEndIndex: number;
  rootScope: NamespaceScope;
}

export type CanonicalScan =
  | { kind: 'found'; element: CanonicalElement }
  | { kind: 'not-found' }
  | { kind: 'unsupported'; reason: string };

const LT = 60;
const GT = 62;
const SLASH = 47;
const AMP = 38;
const QUOT = 34;
const APOS = 39;
const EQ = 61;
const SPACE = 32;
const COLON = 58;
const BANG = 33;
const QUESTION = 63;

const EMPTY_SCOPE: NamespaceScope = new Map();
const XML_DECLARATION =
  /^<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(?:"1\.[0-9]+"|'1\.[0-9]+')(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(?:"[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(?:"(?:yes|no)"|'(?:yes|no)'))?[ \t\r\n]*\?>/;
const ID_ATTRIBUTES = ['Id', 'ID', 'id'];

function isWhitespace(c: number): boolean {
  return c === SPACE || c === 10 || c === 9 || c === 13;
}

function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45 || c === 46;
}

/** End of an ASCII NCName starting at i (i itself when there is none). */
function scanNcName(xml: string, i: number): number {
  if (!isNameStart(xml.charCodeAt(i))) return i;
  i++;
  while (isNameChar(xml.charCodeAt(i))) i++;
  return i;
}

/** End of an ASCII QName (`local` or `prefix:local`) starting at i; i when there is none, -1 when malformed. */
function scanQName(xml: string, i: number): number {
  const end = scanNcName(xml, i);
  if (end === i || xml.charCodeAt(end) !== COLON) return end;
  const localEnd = scanNcName(xml, end + 1);
  return localEnd === end + 1 ? -1 : localEnd;
}

function localNameOf(qualifiedName: string): string {
  const colon = qualifiedName.indexOf(':');
  return colon < 0 ? qualifiedName : qualifiedName.slice(colon + 1);
}

/** A surrogate pair starting at i, or a non-character: returns the chars to skip (0 = invalid). */
function astralLength(xml: string, i: number, end: number): number {
  const c = xml.charCodeAt(i);
  if (c <= 0xdbff) {
    const next = i + 1 < end ? xml.charCodeAt(i + 1) : 0;
    return next >= 0xdc00 && next <= 0xdfff ? 2 : 0;
  }
  if (c <= 0xdfff || c >= 0xfffe) return 0;
  return 1;
}

/** Whether xml[start, end) is element text exactly as C14N writes it. */
export function isCanonicalText(xml: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = xml.charCodeAt(i);
    if (c < 0x20) {
      if (c !== 10 && c !== 9) return false;
    } else if (c === AMP) {
      if (xml.startsWith('amp;', i + 1) || xml.startsWith('#xD;', i + 1)) i += 4;
      else if (xml.startsWith('lt;', i + 1) || xml.startsWith('gt;', i + 1)) i += 3;
      else return false;
    } else if (c === GT) {
      return false;
    } else if (c >= 0xd800) {
      const n = astralLength(xml, i, end);
      if (n === 0) return false;
      i += n - 1;
    }
  }
  return true;
}

/** Whether xml[start, end) is a (double-quoted) attribute value exactly as C14N writes it. */
export function isCanonicalAttrValue(xml: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = xml.charCodeAt(i);
    if (c < 0x20 || c === LT) return false;
    if (c === AMP) {
      if (xml.startsWith('amp;', i + 1)) i += 4;
      else if (xml.startsWith('quot;', i + 1)) i += 5;
      else if (xml.startsWith('lt;', i + 1)) i += 3;
      else if (xml.startsWith('#x9;', i + 1) || xml.startsWith('#xA;', i + 1) || xml.startsWith('#xD;', i + 1)) i += 4;
      else return false;
    } else if (c >= 0xd800) {
      const n = astralLength(xml, i, end);
      if (n === 0) return false;
      i += n - 1;
    }
  }
  return true;
}

/** A namespace URI that can be written as is inside `"…"` in canonical form. */
function isPlainNamespaceUri(value: string): boolean {
  return !/[&<"\t\n\r]/.test(value);
}

/**
 * The namespace declarations C14N writes on an apex element whose in-scope namespaces are `scope`: the default
 * namespace first (omitted when empty), then the prefixes in lexicographic order. Returns null when the prefix order
 * is ambiguous between code-point order and xml-crypto's localeCompare order (mixed-case prefixes), so that callers
 * fall back instead of producing a signature that one of the two verifiers would reject.
 */
export function renderNamespaceDeclarations(scope: NamespaceScope): string | null {
  const prefixes: string[] = [];
  for (const [prefix, uri] of scope) {
    if (prefix === 'xml' || (prefix === '' && uri === '')) continue;
    prefixes.push(prefix);
  }
  if (prefixes.length === 0) return '';
  prefixes.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let out = '';
  for (let i = 0; i < prefixes.length; i++) {
    const prefix = prefixes[i];
    if (i > 0 && prefixes[i - 1].localeCompare(prefix) >= 0) return null;
    const uri = scope.get(prefix)!;
    out += prefix === '' ? ` xmlns="${uri}"` : ` xmlns:${prefix}="${uri}"`;
  }
  return out;
}

interface StartTag {
  /** Index just after `>`. */
  end: number;
  selfClosing: boolean;
  scope: NamespaceScope;
  /** Attributes other than namespace declarations, as [name, raw value]; only collected for the apex. */
  attributes: [string, string][] | null;
}

/**
 * A start tag inside the signed element: must already be canonical. Returns the tag or the reason it is not.
 * `p` is the index just after the element name.
 */
function parseCanonicalStartTag(xml: string, p: number, parentScope: NamespaceScope): StartTag | string {
  let scope = parentScope;
  let ownScope: Map<string, string> | null = null;
  let lastPrefix: string | null = null;
  let lastAttribute: string | null = null;
  for (;;) {
    const c = xml.charCodeAt(p);
    if (c === GT) return { end: p + 1, selfClosing: false, scope, attributes: null };
    if (c !== SPACE) return c === SLASH ? 'self-closing tag' : 'start tag layout';
    const nameStart = p + 1;
    const nameEnd = scanQName(xml, nameStart);
    if (nameEnd <= nameStart) return 'start tag layout';
    if (xml.charCodeAt(nameEnd) !== EQ || xml.charCodeAt(nameEnd + 1) !== QUOT) return 'attribute layout';
    const valueStart = nameEnd + 2;
    const valueEnd = xml.indexOf('"', valueStart);
    if (valueEnd < 0) return 'unterminated attribute';
    if (!isCanonicalAttrValue(xml, valueStart, valueEnd)) return 'attribute value escaping';
    const name = xml.slice(nameStart, nameEnd);
    if (name === 'xmlns' || name.startsWith('xmlns:')) {
      if (lastAttribute !== null) return 'namespace declaration after attribute';
      const prefix = name === 'xmlns' ? '' : name.slice(6);
      if (prefix === 'xml' || prefix === 'xmlns') return 'reserved prefix';
      if (lastPrefix !== null && !(lastPrefix < prefix && lastPrefix.localeCompare(prefix) < 0)) {
        return 'namespace declaration order';
      }
      lastPrefix = prefix;
      const uri = xml.slice(valueStart, valueEnd);
      if (prefix !== '' && uri === '') return 'prefix undeclaration';
      if (uri.includes('&')) return 'namespace URI escaping';
      if ((scope.get(prefix) ?? '') === uri) return 'redundant namespace declaration';
      if (ownScope === null) {
        ownScope = new Map(parentScope);
        scope = ownScope;
      }
      ownScope.set(prefix, uri);
    } else {
      if (name.includes(':')) return 'prefixed attribute';
      if (lastAttribute !== null && !(lastAttribute < name)) return 'attribute order';
      lastAttribute = name;
    }
    p = valueEnd + 1;
  }
}

/**
 * A start tag outside the signed element, or the apex itself: any whitespace and quoting. Collects namespace
 * declarations (and, for the apex, the attributes, which must then be double-quoted and canonically escaped).
 */
function parseStartTag(
  xml: string,
  p: number,
  parentScope: NamespaceScope,
  isApex: boolean,
  mayBeAncestor: boolean,
): StartTag | string {
  let scope = parentScope;
  let ownScope: Map<string, string> | null = null;
  const attributes: [string, string][] | null = isApex ? [] : null;
  for (;;) {
    const wsStart = p;
    while (isWhitespace(xml.charCodeAt(p))) p++;
    const c = xml.charCodeAt(p);
    if (c === GT) return { end: p + 1, selfClosing: false, scope, attributes };
    if (c === SLASH) {
      if (xml.charCodeAt(p + 1) !== GT) return 'start tag layout';
      return { end: p + 2, selfClosing: true, scope, attributes };
    }
    if (p === wsStart) return 'start tag layout';
    const nameStart = p;
    const nameEnd = scanQName(xml, nameStart);
    if (nameEnd <= nameStart) return 'attribute name';
    p = nameEnd;
    while (isWhitespace(xml.charCodeAt(p))) p++;
    if (xml.charCodeAt(p) !== EQ) return 'attribute layout';
    p++;
    while (isWhitespace(xml.charCodeAt(p))) p++;
    const quote = xml.charCodeAt(p);
    if (quote !== QUOT && quote !== APOS) return 'attribute layout';
    const valueStart = p + 1;
    const valueEnd = xml.indexOf(quote === QUOT ? '"' : "'", valueStart);
    if (valueEnd < 0) return 'unterminated attribute';
    const lt = xml.indexOf('<', valueStart);
    if (lt >= 0 && lt < valueEnd) return 'attribute value';
    const name = xml.slice(nameStart, nameEnd);
    if (name === 'xmlns' || name.startsWith('xmlns:')) {
      const prefix = name === 'xmlns' ? '' : name.slice(6);
      if (prefix === 'xml' || prefix === 'xmlns') return 'reserved prefix';
      const uri = xml.slice(valueStart, valueEnd);
      if (!isPlainNamespaceUri(uri) || uri.includes("'")) return 'namespace URI escaping';
      if (prefix !== '' && uri === '') return 'prefix undeclaration';
      if (ownScope === null) {
        ownScope = new Map(parentScope);
        scope = ownScope;
      }
      ownScope.set(prefix, uri);
    } else if (isApex) {
      if (name.includes(':')) return 'prefixed attribute';
      if (quote !== QUOT || !isCanonicalAttrValue(xml, valueStart, valueEnd)) return 'attribute value escaping';
      attributes!.push([name, xml.slice(valueStart, valueEnd)]);
    } else if (mayBeAncestor && name.startsWith('xml:')) {
      // C14N 1.0 copies xml:* attributes of ancestors onto the apex of a document subset.
      return 'xml:* attribute on an ancestor';
    }
    p = valueEnd + 1;
  }
}

function renderApex(qualifiedName: string, scope: NamespaceScope, attributes: [string, string][]): string | null {
  const namespaces = renderNamespaceDeclarations(scope);
  if (namespaces === null) return null;
  let out = '<' + qualifiedName + namespaces;
  if (attributes.length > 1) {
    attributes.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (let i = 1; i < attributes.length; i++) if (attributes[i - 1][0] === attributes[i][0]) return null;
  }
  for (const [name, value] of attributes) out += ' ' + name + '="' + value + '"';
  return out + '>';
}

function unsupported(reason: string): CanonicalScan {
  return { kind: 'unsupported', reason };
}

/**
 * Finds the first element whose local name is `elementName` (the document element when omitted) and computes its
 * inclusive canonical form, when the document is in the form described at the top of this file.
 */
export function scanCanonicalElement(xml: string, elementName?: string): CanonicalScan {
  const length = xml.length;
  let pos = 0;
  if (xml.startsWith('<?xml') && isWhitespace(xml.charCodeAt(5))) {
    const declaration = XML_DECLARATION.exec(xml);
    if (!declaration) return unsupported('xml declaration');
    pos = declaration[0].length;
  }
  while (pos < length && isWhitespace(xml.charCodeAt(pos))) pos++;
  if (xml.charCodeAt(pos) !== LT) return unsupported('prolog');

  const names: string[] = [];
  const scopes: NamespaceScope[] = [];
  let inside = false;
  let apexDepth = -1;
  let apexRendered = '';
  let apexContentStart = -1;
  let apexEnd = -1;
  let apexName = '';
  let apexId: string | null = null;
  let apexParentScope: NamespaceScope = EMPTY_SCOPE;
  let rootEndIndex = -1;
  let rootScope: NamespaceScope = EMPTY_SCOPE;

  for (;;) {
    const next = xml.charCodeAt(pos + 1);
    if (next === SLASH) {
      const nameEnd = scanQName(xml, pos + 2);
      if (nameEnd <= pos + 2) return unsupported('end tag');
      let p = nameEnd;
      if (!inside) while (isWhitespace(xml.charCodeAt(p))) p++;
      if (xml.charCodeAt(p) !== GT) return unsupported('end tag layout');
      const depth = names.length;
      const open = depth > 0 ? names[depth - 1] : '';
      if (open.length !== nameEnd - pos - 2 || !xml.startsWith(open, pos + 2)) return unsupported('mismatched end tag');
      names.pop();
      const scope = scopes.pop()!;
      if (inside && depth === apexDepth) {
        inside = false;
        apexEnd = p + 1;
      }
      if (depth === 1) {
        rootEndIndex = pos;
        rootScope = scope;
        pos = p + 1;
        break;
      }
      pos = p + 1;
    } else if (next === BANG) {
      if (xml.startsWith('<!--', pos)) return unsupported('comment');
      return unsupported(xml.startsWith('<![CDATA[', pos) ? 'CDATA section' : 'DOCTYPE');
    } else if (next === QUESTION) {
      return unsupported('processing instruction');
    } else {
      const nameEnd = scanQName(xml, pos + 1);
      if (nameEnd <= pos + 1) return unsupported('start tag');
      const qualifiedName = xml.slice(pos + 1, nameEnd);
      const parentScope = scopes.length > 0 ? scopes[scopes.length - 1] : EMPTY_SCOPE;
      const isApex =
        apexDepth < 0 && (elementName === undefined ? names.length === 0 : localNameOf(qualifiedName) === elementName);
      const tag = inside
        ? parseCanonicalStartTag(xml, nameEnd, parentScope)
        : parseStartTag(xml, nameEnd, parentScope, isApex, apexDepth < 0);
      if (typeof tag === 'string') return unsupported(tag);
      const colon = qualifiedName.indexOf(':');
      if (colon > 0 && !tag.scope.has(qualifiedName.slice(0, colon))) return unsupported('unbound prefix');
      if (isApex) {
        if (tag.selfClosing) return unsupported('self-closing signed element');
        const attributes = tag.attributes!;
        let idValue: string | null = null;
        for (const idName of ID_ATTRIBUTES) {
          const found = attributes.find((a) => a[0] === idName);
          if (found) {
            idValue = found[1];
            break;
          }
        }
        if (idValue?.includes('&')) return unsupported('escaped Id');
        const rendered = renderApex(qualifiedName, tag.scope, attributes);
        if (rendered === null) return unsupported('apex attributes');
        apexRendered = rendered;
        apexId = idValue;
        apexName = qualifiedName;
        apexParentScope = parentScope;
        apexContentStart = tag.end;
        apexDepth = names.length + 1;
        inside = true;
      }
      if (tag.selfClosing) {
        if (names.length === 0) return unsupported('empty document element');
      } else {
        names.push(qualifiedName);
        scopes.push(tag.scope);
      }
      pos = tag.end;
    }
    const textEnd = xml.indexOf('<', pos);
    if (textEnd < 0) return unsupported('unterminated document');
    if (inside && textEnd > pos && !isCanonicalText(xml, pos, textEnd)) return unsupported('text escaping');
    pos = textEnd;
  }

  while (pos < length && isWhitespace(xml.charCodeAt(pos))) pos++;
  if (pos < length) return unsupported('content after the document element');
  if (apexDepth < 0) return { kind: 'not-found' };
  return {
    kind: 'found',
    element: {
      canonical: apexRendered + xml.slice(apexContentStart, apexEnd),
      qualifiedName: apexName,
      id: apexId,
      isRoot: apexDepth === 1,
      afterElementIndex: apexEnd,
      afterElementScope: apexParentScope,
      rootEndIndex,
      rootScope,
    },
  };
}
