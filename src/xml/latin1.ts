/**
 * Text for the layouts' Latin-1 string types (national `TSString`, `TSMotivo`, the lines of `TSDesc…`: characters
 * U+0020–U+00FF, no leading or trailing space, no line break). The one cleaner of the service: every builder that
 * writes such a field goes through `toLatin1Line`.
 */

/** Characters outside Latin-1 with a conventional replacement (typographic punctuation, letters NFKD cannot split). */
const REPLACEMENTS: Readonly<Record<string, string>> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201A': "'",
  '\u201B': "'",
  '\u201C': '"',
  '\u201D': '"',
  '\u201E': '"',
  '\u2013': '-',
  '\u2014': '-',
  '\u2212': '-',
  '\u2022': '-',
  '\u2026': '...',
  '\u20AC': 'EUR',
  '\u0141': 'L',
  '\u0142': 'l',
  '\u0152': 'OE',
  '\u0153': 'oe',
  '\u0110': 'D',
  '\u0111': 'd',
  '\u0131': 'i',
};

/** Printable Latin-1: U+0020–U+007E and U+00A0–U+00FF (no C0/C1 controls, no DEL). */
function isPrintableLatin1(code: number): boolean {
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff);
}

/**
 * One line of Latin-1 text: whitespace runs (line breaks included) become one space, typographic quotes and
 * dashes become ASCII, other characters outside Latin-1 lose their accents and compatibility forms (NFKD: `ź` → `z`,
 * `ﬁ` → `fi`) or are dropped (emoji, other scripts, control characters); trimmed and cut at `max` characters.
 */
export function toLatin1Line(value: string, max = Number.POSITIVE_INFINITY): string {
  let out = '';
  for (const ch of value.normalize('NFC').replace(/\s+/g, ' ')) {
    if (isPrintableLatin1(ch.codePointAt(0)!)) out += ch;
    else if (REPLACEMENTS[ch] !== undefined) out += REPLACEMENTS[ch];
    else {
      const base = ch.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
      // a spacing accent (`˘`, `˜`) decomposes to a space and its mark: dropped, not turned into a word break
      if (base.trim() !== '' && [...base].every((c) => isPrintableLatin1(c.codePointAt(0)!))) out += base;
    }
  }
  // dropped characters may leave double spaces behind
  return [...out.replace(/ {2,}/g, ' ').trim()].slice(0, max).join('').trim();
}
