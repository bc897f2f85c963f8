import type { ParsedXml } from './read.ts';

// A fast, strict, read-only XML parser (see `parseXmlLight`). It scans with native `indexOf`, much faster than a
// loop over the characters, and remembers the next '&', CR and ']]>' so that each is searched once per occurrence.

const XML_NS = 'http://www.w3.org/XML/1998/namespace';
// Characters XML 1.0 forbids besides unpaired surrogates (those are found by `isWellFormed`).
const FORBIDDEN = [...Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)), '\uFFFE', '\uFFFF'].filter(
  (c) => c !== '\t' && c !== '\n' && c !== '\r',
);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const isWellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;
const S = '[ \\t\\r\\n]';
const XML_DECLARATION = new RegExp(
  `<\\?xml${S}+version${S}*=${S}*(["'])1\\.[0-9]+\\1(?:${S}+encoding${S}*=${S}*(["'])[A-Za-z][\\w.-]*\\2)?` +
    `(?:${S}+standalone${S}*=${S}*(["'])(?:yes|no)\\3)?${S}*\\?>`,
  'y',
);
const VALUE_SPECIAL = /[&<\t\n\r]/;
const VALUE_WHITESPACE = /\r\n|[\t\n\r]/g;
const NEWLINES = /\r\n?/g;
const NAME = /^[A-Za-z_:][\w.:-]*$/;
// The non-ASCII name characters of XML 1.0 as [first, last] pairs (surrogates: those of U+10000 to U+EFFFF).
const NAME_START_RANGES = [
  0xc0, 0xd6, 0xd8, 0xf6, 0xf8, 0x2ff, 0x370, 0x37d, 0x37f, 0x1fff, 0x200c, 0x200d, 0x2070, 0x218f, 0x2c00, 0x2fef,
  0x3001, 0xdb7f, 0xdc00, 0xdfff, 0xf900, 0xfdcf, 0xfdf0, 0xfffd,
];
const NAME_CHAR_RANGES = [0xb7, 0xb7, 0x300, 0x36f, 0x203f, 0x2040, ...NAME_START_RANGES];
const DECIMAL = /^[0-9]{1,8}$/;
const HEXADECIMAL = /^[0-9a-fA-F]{1,7}$/;
const ENTITIES = new Map(Object.entries({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }));

type LightNode = LightElement | LightText;

/** A text (3) or CDATA (4) node. */
class LightText {
  readonly nodeType: 3 | 4;
  readonly nodeName: string;
  readonly localName = null;
  readonly namespaceURI = null;
  readonly firstChild = null;
  nextSibling: LightNode | null = null;
  readonly parentNode: LightElement;
  readonly textContent: string;
  constructor(parentNode: LightElement, value: string, cdata: boolean) {
    this.nodeType = cdata ? 4 : 3;
    this.nodeName = cdata ? '#cdata-section' : '#text';
    this.parentNode = parentNode;
    this.textContent = value;
  }
}

/** An element: the DOM subset read by the helpers of read.ts, plus names, namespace, parent and attributes. */
class LightElement {
  readonly nodeType = 1;
  readonly nodeName: string;
  readonly tagName: string;
  readonly localName: string;
  readonly namespaceURI: string | null;
  readonly parentNode: LightElement | null;
  firstChild: LightNode | null = null;
  lastChild: LightNode | null = null;
  nextSibling: LightNode | null = null;
  /** [name, value, name, value…] in document order (namespace declarations included, as in the DOM), or null. */
  private readonly attrs: string[] | null;
  private text: string | null = null;
  private nodes: LightNode[] | null = null;
  constructor(parent: LightElement | null, name: string, local: string, ns: string | null, attrs: string[] | null) {
    this.nodeName = this.tagName = name;
    this.localName = local;
    this.namespaceURI = ns;
    this.parentNode = parent;
    this.attrs = attrs;
  }
  get childNodes(): readonly LightNode[] {
    if (this.nodes) return this.nodes;
    const nodes: LightNode[] = [];
    for (let node = this.firstChild; node; node = node.nextSibling) nodes.push(node);
    this.nodes = nodes;
    return nodes;
  }
  /** The text and CDATA of all descendants in document order (computed on first use). */
  get textContent(): string {
    if (this.text !== null) return this.text;
    const first = this.firstChild;
    let out = first && first.nodeType !== 1 && !first.nextSibling ? first.textContent : '';
    if (first && !out) {
      for (let node: LightNode = first; ; node = node.nextSibling!) {
        while (node.nodeType === 1 && node.firstChild) node = node.firstChild;
        if (node.nodeType !== 1) out += node.textContent;
        while (!node.nextSibling && node.parentNode !== this) node = node.parentNode!;
        if (!node.nextSibling) break;
      }
    }
    this.text = out;
    return out;
  }
  /** The decoded value; '' when the attribute is missing, as xmldom 0.8 answers. */
  getAttribute(name: string): string {
    const attrs = this.attrs;
    if (attrs) for (let i = 0; i < attrs.length; i += 2) if (attrs[i] === name) return attrs[i + 1];
    return '';
  }
  hasAttribute(name: string): boolean {
    const attrs = this.attrs;
    if (attrs) for (let i = 0; i < attrs.length; i += 2) if (attrs[i] === name) return true;
    return false;
  }
  getAttributeNames(): string[] {
    return this.attrs ? this.attrs.filter((_, i) => i % 2 === 0) : [];
  }
}

class XmlSyntaxError extends Error {
  readonly at: number;
  constructor(at: number, message: string) {
    super(message);
    this.at = at;
  }
}

/** A namespace declaration in scope (prefix '' for the default namespace; uri '' undeclares it). */
type Binding = { prefix: string; uri: string; next: Binding | null };

const isSpace = (c: number) => c === 32 || c === 10 || c === 9 || c === 13;

function inRanges(c: number, ranges: number[]): boolean {
  for (let i = 0; i < ranges.length; i += 2) if (c >= ranges[i] && c <= ranges[i + 1]) return true;
  return false;
}
const isNameStart = (c: number) =>
  c < 0x80 ? (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 : inRanges(c, NAME_START_RANGES);
const isNameChar = (c: number) =>
  c < 0x80
    ? (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 45 && c <= 58 && c !== 47) || c === 95
    : inRanges(c, NAME_CHAR_RANGES);

/** `raw` (found at `at`) with its entity and character references decoded. */
function decode(raw: string, at: number): string {
  let out = '';
  let last = 0;
  for (let amp = raw.indexOf('&'); amp >= 0; amp = raw.indexOf('&', last)) {
    const semi = raw.indexOf(';', amp + 1);
    const name = semi < 0 ? '' : raw.slice(amp + 1, semi);
    let value = ENTITIES.get(name);
    if (value === undefined) {
      const hex = name.charCodeAt(1) === 120;
      const digits = name.slice(hex ? 2 : 1);
      const cp = (hex ? HEXADECIMAL : DECIMAL).test(digits) ? Number.parseInt(digits, hex ? 16 : 10) : -1;
      const char = cp === 9 || cp === 10 || cp === 13 || (cp >= 0x20 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff));
      if (name.charCodeAt(0) === 35 && char && cp !== 0xfffe && cp !== 0xffff) value = String.fromCodePoint(cp);
      else if (name.charCodeAt(0) === 35) throw new XmlSyntaxError(at + amp, `invalid character reference &${name};`);
      else if (NAME.test(name)) throw new XmlSyntaxError(at + amp, `unknown entity &${name};`);
      else throw new XmlSyntaxError(at + amp, "'&' not starting an entity reference");
    }
    out += raw.slice(last, amp) + value;
    last = semi + 1;
  }
  return last === 0 ? raw : out + raw.slice(last);
}

class Parser {
  private readonly src: string;
  private pos: number;
  // Where the next '&', CR and ']]>' are (src.length when none): each search runs again only once passed.
  private amp = -1;
  private cr = -1;
  private cdataEnd = -1;
  /** Set by `startTag`: the tag ended with '/>'; the namespace bindings in scope inside the element. */
  private selfClosing = false;
  private scope: Binding | null = null;
  constructor(src: string, pos: number) {
    this.src = src;
    this.pos = pos;
  }
  fail(message: string, at = this.pos): never {
    throw new XmlSyntaxError(at, message);
  }
  find(mark: string, from: number): number {
    const at = this.src.indexOf(mark, from);
    return at < 0 ? this.src.length : at;
  }
  skipSpace(p: number): number {
    while (isSpace(this.src.charCodeAt(p))) p++;
    return p;
  }
  /** The end of the (qualified) name at `p`; refuses an empty one, one starting with a digit, '-' or '.'. */
  name(p: number, what: string): number {
    const src = this.src;
    let end = p + 1;
    let colon = isNameStart(src.charCodeAt(p)) ? -1 : p;
    for (let c = src.charCodeAt(end); isNameChar(c); c = src.charCodeAt(++end)) {
      if (c === 58) colon = colon >= 0 || !isNameStart(src.charCodeAt(end + 1)) ? p : end;
    }
    if (colon === p || src.charCodeAt(p) === 58) this.fail(`${what} name expected`, p);
    return end;
  }
  /** Skips whitespace, comments and processing instructions (before and after the root element). */
  misc(): void {
    for (;;) {
      this.pos = this.skipSpace(this.pos);
      if (this.src.startsWith('<!--', this.pos)) this.comment();
      else if (this.src.startsWith('<?', this.pos)) this.instruction();
      else return;
    }
  }
  comment(): void {
    const end = this.src.indexOf('-->', this.pos + 4);
    if (end < 0) this.fail('unterminated comment');
    if (this.src.indexOf('--', this.pos + 4) !== end) this.fail("'--' inside a comment");
    this.pos = end + 3;
  }
  instruction(): void {
    const start = this.pos + 2;
    const targetEnd = this.name(start, 'processing instruction target');
    if (targetEnd - start === 3 && this.src.slice(start, targetEnd).toLowerCase() === 'xml') {
      this.fail('XML declaration not at the start of the document');
    }
    const end = this.src.indexOf('?>', targetEnd);
    if (end < 0) this.fail('unterminated processing instruction');
    if (end !== targetEnd && !isSpace(this.src.charCodeAt(targetEnd))) this.fail('malformed processing instruction');
    this.pos = end + 2;
  }
  document(): LightElement {
    const src = this.src;
    for (const c of FORBIDDEN) if (src.indexOf(c) >= 0) this.fail('character not allowed in XML', src.indexOf(c));
    if (isWellFormed ? !isWellFormed.call(src) : LONE_SURROGATE.test(src))
      this.fail('unpaired surrogate', LONE_SURROGATE.exec(src)?.index);
    if (src.startsWith('<?xml', this.pos) && isSpace(src.charCodeAt(this.pos + 5))) {
      XML_DECLARATION.lastIndex = this.pos;
      if (!XML_DECLARATION.test(src)) this.fail('malformed XML declaration');
      this.pos = XML_DECLARATION.lastIndex;
    }
    this.misc();
    if (src.startsWith('<!DOCTYPE', this.pos)) this.fail('DOCTYPE (DTD) not accepted');
    if (this.pos >= src.length) this.fail('no root element');
    if (src.charCodeAt(this.pos) !== 60) this.fail('text before the root element');
    const scopes: Array<Binding | null> = [];
    let scope: Binding | null = null;
    let parent: LightElement | null = null;
    for (;;) {
      const at = this.pos; // at a '<'
      const c = src.charCodeAt(at + 1);
      if (c === 47 && parent) {
        const name = parent.nodeName;
        const end = at + 2 + name.length;
        if (!src.startsWith(name, at + 2) || isNameChar(src.charCodeAt(end))) this.fail(`expected </${name}>`);
        this.pos = this.skipSpace(end);
        if (src.charCodeAt(this.pos++) !== 62) this.fail(`malformed end tag </${name}>`);
        scope = scopes.pop() ?? null;
        if (!parent.parentNode) return this.end(parent);
        parent = parent.parentNode;
      } else if (c === 33 && parent && src.startsWith('<!--', at)) this.comment();
      else if (c === 33 && parent && src.startsWith('<![CDATA[', at)) {
        const end = src.indexOf(']]>', at + 9);
        if (end < 0) this.fail('unterminated CDATA section');
        append(parent, new LightText(parent, src.slice(at + 9, end).replace(NEWLINES, '\n'), true));
        this.pos = end + 3;
      } else if (c === 63 && parent) this.instruction();
      else if (c === 33 && src.startsWith('<!DOCTYPE', at)) this.fail('DOCTYPE (DTD) not accepted');
      else {
        const el = this.startTag(parent, scope);
        if (parent) append(parent, el);
        if (this.selfClosing && !parent) return this.end(el);
        if (!this.selfClosing) {
          scopes.push(scope);
          scope = this.scope;
          parent = el;
        }
      }
      const lt = src.indexOf('<', this.pos);
      if (lt < 0) this.fail(`unclosed element <${parent!.nodeName}>`, src.length);
      if (lt > this.pos) append(parent!, new LightText(parent!, this.text(this.pos, lt), false));
      this.pos = lt;
    }
  }
  /** Reads the start tag at `pos` (a '<'), then sets `selfClosing` and `scope`. */
  startTag(parent: LightElement | null, outer: Binding | null): LightElement {
    const src = this.src;
    const nameEnd = this.name(this.pos + 1, 'element');
    const name = src.slice(this.pos + 1, nameEnd);
    let attrs: string[] | null = null;
    let scope = outer;
    for (let p = nameEnd; ; ) {
      const q = this.skipSpace(p);
      const c = src.charCodeAt(q);
      if (c === 62 || (c === 47 && src.charCodeAt(q + 1) === 62)) {
        this.selfClosing = c === 47;
        this.pos = q + (c === 47 ? 2 : 1);
        break;
      }
      if (q === src.length) this.fail(`unclosed start tag <${name}>`, q);
      if (q === p) this.fail(`whitespace expected in start tag <${name}>`, q);
      const attrEnd = this.name(q, 'attribute');
      const attr = src.slice(q, attrEnd);
      p = this.skipSpace(attrEnd);
      if (src.charCodeAt(p) !== 61) this.fail(`attribute ${attr} without '='`, p);
      p = this.skipSpace(p + 1);
      const quote = src.charCodeAt(p);
      if (quote !== 34 && quote !== 39) this.fail(`value of attribute ${attr} without quotes`, p);
      const end = src.indexOf(quote === 34 ? '"' : "'", p + 1);
      if (end < 0) this.fail(`unterminated value of attribute ${attr}`, p);
      let value = src.slice(p + 1, end);
      if (VALUE_SPECIAL.test(value)) {
        if (value.indexOf('<') >= 0) this.fail(`'<' in the value of attribute ${attr}`, p + 1 + value.indexOf('<'));
        value = decode(value.replace(VALUE_WHITESPACE, ' '), p + 1);
      }
      if (attrs === null) attrs = [attr, value];
      else {
        for (let i = 0; i < attrs.length; i += 2) if (attrs[i] === attr) this.fail(`duplicate attribute ${attr}`, q);
        attrs.push(attr, value);
      }
      if (attr.startsWith('xmlns') && (attr.length === 5 || attr.charCodeAt(5) === 58)) {
        const prefix = attr.slice(6);
        if (prefix && (!value || prefix === 'xmlns' || (prefix === 'xml') !== (value === XML_NS))) {
          this.fail(`invalid namespace declaration ${attr}="${value}"`, q);
        }
        scope = { prefix, uri: value, next: scope };
      }
      p = end + 1;
    }
    this.scope = scope;
    for (let i = 0; attrs && i < attrs.length; i += 2) {
      const colon = attrs[i].indexOf(':');
      if (colon > 0 && !attrs[i].startsWith('xmlns:')) this.namespace(scope, attrs[i].slice(0, colon));
    }
    const colon = name.indexOf(':');
    if (colon < 0) return new LightElement(parent, name, name, this.namespace(scope, ''), attrs);
    return new LightElement(parent, name, name.slice(colon + 1), this.namespace(scope, name.slice(0, colon)), attrs);
  }
  namespace(scope: Binding | null, prefix: string): string | null {
    for (let b = scope; b; b = b.next) if (b.prefix === prefix) return b.uri || null;
    if (prefix === 'xml') return XML_NS;
    if (prefix) this.fail(`unbound namespace prefix ${prefix}`);
    return null;
  }
  /** The text from `start` to `end`: ']]>' refused, line ends normalised to LF, references decoded. */
  text(start: number, end: number): string {
    if (this.cdataEnd < start) this.cdataEnd = this.find(']]>', start);
    if (this.cdataEnd < end) this.fail("']]>' in text", this.cdataEnd);
    if (this.amp < start) this.amp = this.find('&', start);
    if (this.cr < start) this.cr = this.find('\r', start);
    if (this.amp >= end && this.cr >= end) return this.src.slice(start, end);
    const raw = this.src.slice(start, end);
    return decode(this.cr < end ? raw.replace(NEWLINES, '\n') : raw, start);
  }
  end(root: LightElement): LightElement {
    this.misc();
    if (this.pos < this.src.length) this.fail('content after the root element');
    return root;
  }
}

function append(parent: LightElement, node: LightNode): void {
  if (parent.lastChild) parent.lastChild.nextSibling = node;
  else parent.firstChild = node;
  parent.lastChild = node;
}

/** Where the document starts: after a byte-order mark and any whitespace (which xmldom let through too). */
function leadingSpace(text: string): number {
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (let c = text.charCodeAt(at); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++at));
  return at;
}

/**
 * Parses XML text for reading, with the contract of `parseXml` (a leading BOM and whitespace are ignored; never throws) at a small
 * fraction of xmldom's cost. The root offers the DOM subset the helpers of read.ts use (`firstChild`, `nextSibling`,
 * `nodeType`, `localName`, `textContent`, `getAttribute`) plus `tagName`/`nodeName`, `namespaceURI`, `parentNode`,
 * `childNodes`, `hasAttribute` and `getAttributeNames`. Text and CDATA nodes are kept (whitespace ones too);
 * comments and processing instructions are dropped. Like xmldom 0.8, `getAttribute` answers '' for a missing
 * attribute; `namespaceURI` is null outside any namespace.
 *
 * Refuses (`ok: false`, 'XML parse error: …') whatever is not well-formed XML with namespaces: unclosed or
 * mismatched tags; no root element, or text or elements after it; bad names; attributes without '=', without
 * quotes, repeated, or with '<' in the value; unknown entities, character references to non-characters, a bare '&';
 * ']]>' in text; characters XML forbids; unterminated comments, CDATA sections or processing instructions; an XML
 * declaration anywhere but at the very start; unbound prefixes; and any DOCTYPE (the service never accepts DTDs).
 */
export function parseXmlLight(text: string): ParsedXml {
  try {
    return { ok: true, root: new Parser(text, leadingSpace(text)).document() as unknown as Element };
  } catch (error) {
    if (!(error instanceof XmlSyntaxError)) return { ok: false, message: `XML parse error: ${String(error)}` };
    const before = text.slice(0, error.at);
    const line = before.split('\n').length;
    return {
      ok: false,
      message: `XML parse error: ${error.message} (line ${line}, column ${error.at - before.lastIndexOf('\n')})`,
    };
  }
}
