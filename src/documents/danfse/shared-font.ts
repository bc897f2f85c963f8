import { deflateSync } from 'node:zlib';

/**
 * DejaVu embedded ONCE per process instead of subset per document.
 *
 * pdfkit's own embedded font shapes every new string with fontkit (GSUB/GPOS lookups) and builds, encodes and
 * compresses a fresh TrueType subset for every PDF: together about 80 % of a DANFSe's CPU time. Here each font
 * is prepared once: a fixed subset holding every glyph of the WinAnsi character set (which covers Portuguese),
 * already deflated, with its widths and ToUnicode map; and the layout of a string is computed from a per-glyph
 * advance table plus pair kerning. For these characters DejaVu's OpenType lookups do nothing but pair kerning and
 * the f-ligatures (ff, fi, fl, ffi, ffl: checked over every pair of the set when this was written, and by the tests
 * comparing layouts with pdfkit's and pages as images), so words without an `f` are laid out from the tables and
 * words with one by fontkit itself (cached), and the glyphs and positions equal pdfkit's: the page looks exactly as
 * before. A document whose text holds a character outside the set (or a soft hyphen, which fontkit removes) is
 * rendered with pdfkit's per-document subset instead (`covers`), and so is one where fontkit would ever produce a
 * glyph the shared subset lacks (`UnsharedGlyphError`).
 *
 * `SharedFont` implements the members pdfkit's text code uses (`encode`, `widthOfString`, `lineHeight`,
 * `ascender`…), the duck-typed contract of pdfkit's own font classes: pdf-canvas.ts runs pdfkit's line wrapper on
 * it and writes the font objects (`fontFile`, `toUnicode`, `widths`, `metrics`) once per process.
 */

/** The parts of a fontkit font object used here (pdfkit hands us fontkit fonts; fontkit has no typings). */
export interface FontkitFont {
  postscriptName: string;
  unitsPerEm: number;
  ascent: number;
  descent: number;
  lineGap: number;
  xHeight: number;
  capHeight: number;
  italicAngle: number;
  bbox: { minX: number; minY: number; maxX: number; maxY: number };
  post: { isFixedPitch: boolean };
  head: { macStyle: { italic: boolean } };
  'OS/2'?: { sFamilyClass?: number };
  glyphForCodePoint(cp: number): { id: number; advanceWidth: number };
  hasGlyphForCodePoint(cp: number): boolean;
  layout(text: string): {
    glyphs: Array<{ id: number; advanceWidth: number; codePoints: number[] }>;
    positions: Array<{ xAdvance: number; yAdvance: number; xOffset: number; yOffset: number }>;
  };
  createSubset(): { includeGlyph(id: number): number; encode(): Uint8Array };
}

interface CharGlyph {
  /** Glyph id in the shared subset (the CID written in the content stream, as 4 hex digits). */
  hex: string;
  /** Advance in 1/1000 em. */
  advance: number;
}

interface Position {
  xAdvance: number;
  yAdvance: number;
  xOffset: number;
  yOffset: number;
  advanceWidth: number;
}

interface Run {
  hex: string[];
  positions: Position[];
  advanceWidth: number;
}

const SOFT_HYPHEN = 0xad;
/** Character that starts DejaVu's Latin ligatures; words holding it are shaped by fontkit. */
const LIGATURE_START = 'f';
const LIGATURE_PROBES = ['ff', 'fi', 'fl', 'ffi', 'ffl'];

/** fontkit produced a glyph outside the shared subset: the caller renders this document the per-document way. */
export class UnsharedGlyphError extends Error {}

/** WinAnsi (cp1252) printable characters: ASCII, Latin-1 and the 0x80–0x9F extras. */
function winAnsiCharacters(): number[] {
  const cps: number[] = [];
  for (let c = 0x20; c <= 0x7e; c++) cps.push(c);
  for (let c = 0xa0; c <= 0xff; c++) if (c !== SOFT_HYPHEN) cps.push(c);
  for (const ch of '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ') cps.push(ch.codePointAt(0)!);
  return cps;
}

const toHex = (n: number) => n.toString(16).padStart(4, '0');
/** Bound of each per-process cache, so that unusual input cannot grow them without limit. */
const CACHE_LIMIT = 20_000;

/** Documents begun in this process (`startDocument`, by the fast writer): what `RepeatCache` tells apart. */
let documentNumber = 0;

export function startDocument(): void {
  documentNumber++;
}

/**
 * A per-process cache that keeps a value once a second document asks for its key. Labels and fixed texts repeat in
 * every document; a note's own values (its access key, numbers, names, amounts, dates) never do. Kept at first sight,
 * they filled every cache to its bound with layouts never read again, and their keys, slices of the note's XML, kept
 * each of those notes' XML text alive (3,000 varied notes rendered in one process: +31 MB of heap after a full
 * collection, +80 MB after 8,000; now +4 and +6 MB). A key asked for by one document only is remembered, as a copy,
 * with that document's number, up to the same bound (then those are forgotten at once). Two renders interleaved at
 * an await may pass for one another: that only lets a value in early.
 */
export class RepeatCache<V> {
  private readonly values = new Map<string, V>();
  private readonly firstSeenIn = new Map<string, number>();

  constructor(private readonly limit = CACHE_LIMIT) {}

  get(key: string): V | undefined {
    return this.values.get(key);
  }

  /** The value computed for `key` after a miss: kept if an earlier document asked for it too and there is room. */
  offer(key: string, value: V): void {
    if (this.values.size >= this.limit) return;
    const first = this.firstSeenIn.get(key);
    if (first === undefined) {
      if (this.firstSeenIn.size >= this.limit) this.firstSeenIn.clear();
      this.firstSeenIn.set(ownCopy(key), documentNumber);
    } else if (first !== documentNumber) {
      this.firstSeenIn.delete(key);
      this.values.set(ownCopy(key), value);
    }
  }
}

/**
 * The text as a string of its own. A text read from a note's XML may be a slice of the whole XML (V8 slices strings
 * of 13 characters or more instead of copying them): kept as a cache key, it kept that note's XML alive with it.
 */
function ownCopy(text: string): string {
  return ` ${text}`.slice(1);
}

/** One font prepared for sharing: built once per process, read-only afterwards (the kerning cache aside). */
export class SharedFontProgram {
  readonly scale: number;
  private readonly chars = new Map<number, CharGlyph>();
  /** 1 for each UTF-16 code unit in `chars`: `covers` runs over every string of every document. */
  private readonly coverage = new Uint8Array(0x10000);
  /** fontkit glyph id → CID in the shared subset (as 4 hex digits). */
  private readonly cids = new Map<number, string>();
  private readonly kerning = new Map<number, number>();
  private readonly runCache = new RepeatCache<Run>();
  /** Whole strings (labels and fixed texts repeat in every document): layout, and width in 1/1000 em. */
  readonly encodeCache = new RepeatCache<[string[], Position[]]>();
  readonly widthCache = new RepeatCache<number>();
  readonly fontFile: Buffer;
  readonly toUnicode: Buffer;
  readonly widths: number[];

  /** Font-wide values, read once: fontkit decodes its tables again on every access of some of them. */
  readonly metrics: {
    postscriptName: string;
    ascender: number;
    descender: number;
    lineGap: number;
    xHeight: number;
    capHeight: number;
    flags: number;
    bbox: number[];
    italicAngle: number;
  };

  constructor(readonly font: FontkitFont) {
    this.scale = 1000 / font.unitsPerEm;
    const s = this.scale;
    const familyClass = (font['OS/2']?.sFamilyClass ?? 0) >> 8;
    let flags = 1 << 2;
    if (font.post.isFixedPitch) flags |= 1 << 0;
    if (familyClass >= 1 && familyClass <= 7) flags |= 1 << 1;
    if (familyClass === 10) flags |= 1 << 3;
    if (font.head.macStyle.italic) flags |= 1 << 6;
    this.metrics = {
      postscriptName: font.postscriptName,
      ascender: font.ascent * s,
      descender: font.descent * s,
      lineGap: font.lineGap * s,
      xHeight: font.xHeight * s,
      capHeight: font.capHeight * s,
      flags,
      bbox: [font.bbox.minX * s, font.bbox.minY * s, font.bbox.maxX * s, font.bbox.maxY * s],
      italicAngle: font.italicAngle,
    };
    const subset = font.createSubset();
    const widths: number[] = [font.glyphForCodePoint(0).advanceWidth * this.scale];
    const unicode: number[][] = [[0]];
    for (const cp of winAnsiCharacters()) {
      if (!font.hasGlyphForCodePoint(cp)) continue;
      const glyph = font.glyphForCodePoint(cp);
      const cid = subset.includeGlyph(glyph.id);
      widths[cid] ??= glyph.advanceWidth * this.scale;
      unicode[cid] ??= [cp];
      this.chars.set(cp, { hex: toHex(cid), advance: glyph.advanceWidth * this.scale });
      this.cids.set(glyph.id, toHex(cid));
      this.coverage[cp] = 1;
    }
    for (const probe of LIGATURE_PROBES) {
      for (const glyph of font.layout(probe).glyphs) {
        if (this.cids.has(glyph.id)) continue;
        const cid = subset.includeGlyph(glyph.id);
        widths[cid] ??= glyph.advanceWidth * this.scale;
        unicode[cid] ??= glyph.codePoints;
        this.cids.set(glyph.id, toHex(cid));
      }
    }
    this.widths = widths;
    this.fontFile = deflateSync(Buffer.from(subset.encode()));
    this.toUnicode = deflateSync(Buffer.from(toUnicodeCmap(unicode)));
  }

  /** Whether every character of `text` is drawn by this program exactly as fontkit would. */
  covers(text: string): boolean {
    const table = this.coverage;
    for (let i = 0; i < text.length; i++) if (table[text.charCodeAt(i)] !== 1) return false;
    return true;
  }

  /** Kerning (1/1000 em) between two characters, from fontkit's own layout of the pair, cached. */
  private kern(a: number, b: number): number {
    const key = a * 0x10000 + b;
    let k = this.kerning.get(key);
    if (k === undefined) {
      const run = this.font.layout(String.fromCharCode(a, b));
      const first = run.positions[0];
      k = run.glyphs.length === 2 ? (first.xAdvance - run.glyphs[0].advanceWidth) * this.scale : 0;
      this.kerning.set(key, k);
    }
    return k;
  }

  /** The layout of one word (pdfkit lays out text word by word, each with its trailing space). */
  run(text: string): Run {
    const cached = this.runCache.get(text);
    if (cached) return cached;
    const run = text.includes(LIGATURE_START) ? this.shaped(text) : this.kerned(text);
    this.runCache.offer(text, run);
    return run;
  }

  /** fontkit's own layout (what pdfkit's EmbeddedFont.layoutRun computes), mapped to the shared subset. */
  private shaped(text: string): Run {
    const laid = this.font.layout(text);
    const hex: string[] = [];
    const positions: Position[] = [];
    let advanceWidth = 0;
    for (let i = 0; i < laid.glyphs.length; i++) {
      const glyph = laid.glyphs[i];
      const cid = this.cids.get(glyph.id);
      if (cid === undefined) throw new UnsharedGlyphError(`glyph ${glyph.id} is not in the shared font`);
      const p = laid.positions[i];
      const s = this.scale;
      const position = {
        xAdvance: p.xAdvance * s,
        yAdvance: p.yAdvance * s,
        xOffset: p.xOffset * s,
        yOffset: p.yOffset * s,
        advanceWidth: glyph.advanceWidth * s,
      };
      hex.push(cid);
      positions.push(position);
      advanceWidth += position.xAdvance;
    }
    return { hex, positions, advanceWidth };
  }

  /** Per-glyph advances plus pair kerning: all DejaVu does to Latin text without ligatures. */
  private kerned(text: string): Run {
    const hex: string[] = [];
    const positions: Position[] = [];
    let advanceWidth = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      const g = this.chars.get(code);
      if (!g) throw new UnsharedGlyphError(`character U+${toHex(code)} is not in the shared font`);
      const kern = i + 1 < text.length ? this.kern(code, text.charCodeAt(i + 1)) : 0;
      const xAdvance = g.advance + kern;
      hex.push(g.hex);
      positions.push({ xAdvance, yAdvance: 0, xOffset: 0, yOffset: 0, advanceWidth: g.advance });
      advanceWidth += xAdvance;
    }
    return { hex, positions, advanceWidth };
  }
}

function toUnicodeCmap(unicode: number[][]): string {
  const entries = unicode.map((cps) => `<${(cps ?? [0]).map(toHex).join(' ')}>`);
  const ranges: string[] = [];
  for (let start = 0; start < entries.length; start += 256) {
    const end = Math.min(start + 256, entries.length);
    ranges.push(`<${toHex(start)}> <${toHex(end - 1)}> [${entries.slice(start, end).join(' ')}]`);
  }
  return `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo <<
  /Registry (Adobe)
  /Ordering (UCS)
  /Supplement 0
>> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000><ffff>
endcodespacerange
${ranges.length} beginbfrange
${ranges.join('\n')}
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end`;
}

/** The text face of a shared program: what pdfkit's text code calls on `doc._font`. */
export class SharedFont {
  readonly name: string;
  readonly ascender: number;
  readonly descender: number;
  readonly lineGap: number;
  readonly xHeight: number;
  readonly capHeight: number;

  constructor(private readonly program: SharedFontProgram) {
    const m = program.metrics;
    this.name = m.postscriptName;
    this.ascender = m.ascender;
    this.descender = m.descender;
    this.lineGap = m.lineGap;
    this.xHeight = m.xHeight;
    this.capHeight = m.capHeight;
  }

  /** Same word splitting as pdfkit's EmbeddedFont.layout: runs end after each space or tab. */
  private layout(text: string, onlyWidth: boolean): Run {
    const hex: string[] = [];
    const positions: Position[] = [];
    let advanceWidth = 0;
    let last = 0;
    for (let index = 0; index <= text.length; ) {
      const ch = text.charAt(index);
      if ((index === text.length && last < index) || ch === ' ' || ch === '\t') {
        const run = this.program.run(text.slice(last, ++index));
        if (!onlyWidth) {
          for (const h of run.hex) hex.push(h);
          for (const p of run.positions) positions.push(p);
        }
        advanceWidth += run.advanceWidth;
        last = index;
      } else {
        index++;
      }
    }
    return { hex, positions, advanceWidth };
  }

  // The arrays returned are shared between calls: pdfkit only reads them (it copies before adjusting spacing).
  encode(text: string, features?: unknown): [string[], Position[]] {
    if (features) throw new Error('OpenType features are not supported by the shared DANFSe font');
    const cache = this.program.encodeCache;
    let encoded = cache.get(text);
    if (!encoded) {
      const { hex, positions } = this.layout(text, false);
      encoded = [hex, positions];
      cache.offer(text, encoded);
    }
    return encoded;
  }

  widthOfString(text: string, size: number): number {
    const cache = this.program.widthCache;
    let width = cache.get(text);
    if (width === undefined) {
      width = this.layout(text, true).advanceWidth;
      cache.offer(text, width);
    }
    return (width * size) / 1000;
  }

  lineHeight(size: number, includeGap = false): number {
    const gap = includeGap ? this.lineGap : 0;
    return ((this.ascender + gap - this.descender) / 1000) * size;
  }
}
