/**
 * Escaping that yields text already in C14N form (https://www.w3.org/TR/xml-c14n#ProcessingModel), so that
 * documents written by our builders are canonical by construction and `signXml` can take its fast path.
 *
 * Characters that XML 1.0 does not allow at all (C0 controls other than tab, line feed and carriage return,
 * U+FFFE, U+FFFF) are removed: they could not be represented and would make the document malformed.
 */

const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const INVALID_XML_CHARS_GLOBAL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const TEXT_SPECIALS = /[&<>\r]/;
const TEXT_SPECIALS_GLOBAL = /[&<>\r]/g;
const ATTR_SPECIALS = /[&<"\t\n\r]/;
const ATTR_SPECIALS_GLOBAL = /[&<"\t\n\r]/g;

const TEXT_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' };
const ATTR_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '"': '&quot;',
  '\t': '&#x9;',
  '\n': '&#xA;',
  '\r': '&#xD;',
};

function removeInvalidXmlChars(value: string): string {
  return INVALID_XML_CHARS.test(value) ? value.replace(INVALID_XML_CHARS_GLOBAL, '') : value;
}

/** Escapes element text the way C14N writes it: `&amp;` `&lt;` `&gt;` and carriage return as `&#xD;`. */
export function escapeXmlText(value: string): string {
  const clean = removeInvalidXmlChars(value);
  return TEXT_SPECIALS.test(clean) ? clean.replace(TEXT_SPECIALS_GLOBAL, (c) => TEXT_ENTITIES[c]) : clean;
}

/** Escapes a (double-quoted) attribute value the way C14N writes it: `&amp;` `&lt;` `&quot;` `&#x9;` `&#xA;` `&#xD;`. */
export function escapeXmlAttr(value: string): string {
  const clean = removeInvalidXmlChars(value);
  return ATTR_SPECIALS.test(clean) ? clean.replace(ATTR_SPECIALS_GLOBAL, (c) => ATTR_ENTITIES[c]) : clean;
}
