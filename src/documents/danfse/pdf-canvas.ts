import { deflateSync } from 'node:zlib';
import PDFDocument from 'pdfkit';
import { assemble, num, type PreparedLogo } from './pdf-objects.ts';
import { RepeatCache, SharedFont, type SharedFontProgram, startDocument } from './shared-font.ts';

export { type PreparedLogo, prepareLogo } from './pdf-objects.ts';

/**
 * A small PDF writer for the DANFSe: the drawing calls of pdfkit that `render.ts` makes, written straight into one
 * content stream and assembled with objects serialised once per process.
 *
 * pdfkit builds every PDF object, colour and operator through generic machinery (about 70 % of a DANFSe's time even
 * with shared fonts). Here the fonts (DejaVu, the WinAnsi subset prepared by shared-font.ts) are serialised bytes
 * made on first use and copied into every document; the glyph string of a text (`[<…> kern <…>] TJ`) is kept per
 * font and text, so labels, titles and fixed sentences are encoded once per process; a logo is embedded once per
 * distinct image (by a throw-away pdfkit document, then kept as bytes); and the page is written as operators with
 * the same geometry as pdfkit's (same text matrices, same line wrapping: pdfkit's own LineWrapper runs on this
 * canvas), so the page rasterises to the same pixels (test/documents/danfse-image.test.ts).
 *
 * Only the members render.ts uses exist; `DanfseCanvas` is what both this class and pdfkit's document provide.
 */

export interface TextOptions {
  lineBreak?: boolean;
  width?: number;
  height?: number;
  ellipsis?: boolean;
  lineGap?: number;
  align?: 'left' | 'center' | 'right';
}

/** The pdfkit drawing API as used by the DANFSe layout (pdfkit's document satisfies it). */
export interface DanfseCanvas {
  readonly page: { width: number; height: number };
  font(name: string): this;
  fontSize(size: number): this;
  fillColor(color: string): this;
  strokeColor(color: string): this;
  fillOpacity(opacity: number): this;
  lineWidth(width: number): this;
  rect(x: number, y: number, w: number, h: number): this;
  moveTo(x: number, y: number): this;
  lineTo(x: number, y: number): this;
  fill(color?: string): this;
  stroke(): this;
  save(): this;
  restore(): this;
  scale(factor: number): this;
  transform(a: number, b: number, c: number, d: number, e: number, f: number): this;
  rotate(angle: number, options: { origin: [number, number] }): this;
  text(text: string, x: number, y: number, options?: TextOptions): this;
  widthOfString(text: string): number;
  heightOfString(text: string, options: { width: number; lineGap: number }): number;
  currentLineHeight(includeGap?: boolean): number;
  image(src: Buffer, x: number, y: number, options: { fit: [number, number]; align: 'center'; valign: 'center' }): this;
  /**
   * Draws a fixed part of the page (a label, a title bar, a fixed sentence) identified by `key`, which must hold
   * everything `draw` depends on besides the drawing state. The writer keeps the operators of each such part and
   * replays them; pdfkit's document has no such member and simply draws.
   */
  memo?(key: string, draw: () => void): void;
}

const NAMED: Record<string, string> = { black: '0 0 0', white: '1 1 1' };
const colourCache = new Map<string, string>();

/** pdfkit's colour values (`#rrggbb` → components / 255) as the operands of `rg` / `RG`. */
function colour(c: string): string {
  let s = colourCache.get(c);
  if (s === undefined) {
    const named = NAMED[c.toLowerCase()];
    if (named) s = named;
    else if (/^#[0-9a-f]{6}$/i.test(c)) {
      const hex = Number.parseInt(c.slice(1), 16);
      s = [hex >> 16, (hex >> 8) & 0xff, hex & 0xff].map((p) => String(p / 255)).join(' ');
    } else throw new Error(`unsupported colour ${c}`);
    colourCache.set(c, s);
  }
  return s;
}

interface Fonts {
  regular: SharedFontProgram;
  bold: SharedFontProgram;
}

/** pdfkit's text methods run on this canvas (line wrapping, heightOfString); taken from its prototype. */
type TextMixin = {
  _text(text: string, x: number, y: number, options: object, line: LineCallback): unknown;
  _initOptions(x?: unknown, y?: number, options?: object): object;
  heightOfString(text: string, options: object): number;
};
type LineCallback = (text: string, options: FragmentOptions, wrapper?: unknown) => void;
interface FragmentOptions extends TextOptions {
  lineWidth?: number;
  textWidth?: number;
}
const pdfkitText = PDFDocument.prototype as unknown as TextMixin;

interface GraphicState {
  fill: string;
  stroke: string;
  lineWidth: string;
}

export class FastCanvas implements DanfseCanvas {
  readonly page: { width: number; height: number; maxY(): number; margins: Record<string, number> };
  // pdfkit's text code reads and moves these.
  x = 0;
  y = 0;
  _lineGap = 0;
  _textOptions: object | null = null;
  _wrapper: unknown = null;
  readonly _initOptions = pdfkitText._initOptions;
  readonly _text = pdfkitText._text;

  private readonly parts: string[] = [];
  private current: SharedFont;
  private currentId: string;
  private size = 12;
  private state: GraphicState = { fill: '0 0 0', stroke: '0 0 0', lineWidth: '1' };
  private readonly stack: GraphicState[] = [];
  private readonly faces: Record<string, { font: SharedFont; id: string }>;
  private opacity: number | null = null;
  private logo: PreparedLogo | null = null;
  private readonly flip: string;

  constructor(
    width: number,
    height: number,
    private readonly fonts: Fonts,
    names: { regular: string; bold: string },
    private readonly logos: Map<Buffer, PreparedLogo | null>,
  ) {
    this.page = { width, height, maxY: () => height, margins: { top: 0, bottom: 0, left: 0, right: 0 } };
    startDocument(); // the per-process caches keep what a second document asks for again
    const regular = sharedFace(fonts.regular);
    this.faces = {
      [names.regular]: { font: regular, id: 'DJ1' },
      [names.bold]: { font: sharedFace(fonts.bold), id: 'DJ2' },
    };
    this.current = regular;
    this.currentId = 'DJ1';
    // pdfkit's page starts by flipping the y axis: the layout works top-down.
    this.flip = `1 0 0 -1 0 ${num(height)} cm`;
    this.parts.push(this.flip);
  }

  font(name: string): this {
    const face = this.faces[name];
    if (!face) throw new Error(`unknown DANFSe font ${name}`);
    this.current = face.font;
    this.currentId = face.id;
    return this;
  }

  fontSize(size: number): this {
    this.size = size;
    return this;
  }

  fillColor(c: string): this {
    const v = colour(c);
    if (v !== this.state.fill) {
      this.state.fill = v;
      this.parts.push(`${v} rg`);
    }
    return this;
  }

  strokeColor(c: string): this {
    const v = colour(c);
    if (v !== this.state.stroke) {
      this.state.stroke = v;
      this.parts.push(`${v} RG`);
    }
    return this;
  }

  fillOpacity(opacity: number): this {
    this.opacity = Math.max(0, Math.min(1, opacity));
    this.parts.push('/Gs1 gs');
    return this;
  }

  lineWidth(width: number): this {
    const v = num(width);
    if (v !== this.state.lineWidth) {
      this.state.lineWidth = v;
      this.parts.push(`${v} w`);
    }
    return this;
  }

  rect(x: number, y: number, w: number, h: number): this {
    this.parts.push(`${num(x)} ${num(y)} ${num(w)} ${num(h)} re`);
    return this;
  }

  moveTo(x: number, y: number): this {
    this.parts.push(`${num(x)} ${num(y)} m`);
    return this;
  }

  lineTo(x: number, y: number): this {
    this.parts.push(`${num(x)} ${num(y)} l`);
    return this;
  }

  fill(c?: string): this {
    if (c) this.fillColor(c);
    this.parts.push('f');
    return this;
  }

  stroke(): this {
    this.parts.push('S');
    return this;
  }

  save(): this {
    this.stack.push({ ...this.state });
    this.parts.push('q');
    return this;
  }

  restore(): this {
    this.state = this.stack.pop() ?? { fill: '0 0 0', stroke: '0 0 0', lineWidth: '1' };
    this.parts.push('Q');
    return this;
  }

  transform(a: number, b: number, c: number, d: number, e: number, f: number): this {
    if (a === 1 && b === 0 && c === 0 && d === 1 && e === 0 && f === 0) return this;
    this.parts.push(`${num(a)} ${num(b)} ${num(c)} ${num(d)} ${num(e)} ${num(f)} cm`);
    return this;
  }

  scale(factor: number): this {
    return this.transform(factor, 0, 0, factor, 0, 0);
  }

  /** pdfkit's rotation about an origin. */
  rotate(angle: number, options: { origin: [number, number] }): this {
    const rad = (angle * Math.PI) / 180;
    const cos = Math.cos(rad);
    const sin = Math.sin(rad);
    let [x, y] = options.origin;
    const x1 = x * cos - y * sin;
    const y1 = x * sin + y * cos;
    x -= x1;
    y -= y1;
    return this.transform(cos, sin, -sin, cos, x, y);
  }

  widthOfString(text: string): number {
    // pdfkit's formula, to the last bit (LineWrapper compares these widths with the space left).
    return ((this.current.widthOfString(text, this.size) + 0 * (text.length - 1)) * 100) / 100;
  }

  currentLineHeight(includeGap = false): number {
    return this.current.lineHeight(this.size, includeGap);
  }

  heightOfString(text: string, options: { width: number; lineGap: number }): number {
    return pdfkitText.heightOfString.call(this, text, options);
  }

  text(text: string, x: number, y: number, options: TextOptions = {}): this {
    if (options.width === undefined && options.lineBreak === false && !text.includes('\n')) {
      this.fragment(text, x, y, options);
      this.x = x + this.widthOfString(text);
      this.y = y;
      return this;
    }
    pdfkitText._text.call(this, text, x, y, options, (line, opts, wrapper) => {
      this.fragment(line, this.x, this.y, opts);
      if (wrapper) this.y += this.currentLineHeight(true) + (opts.lineGap || this._lineGap || 0);
      else this.x += this.widthOfString(line);
    });
    return this;
  }

  /** pdfkit's `_fragment` for what the DANFSe uses (left, right and centred lines; no spacing options). */
  private fragment(raw: string, x: number, y: number, options: FragmentOptions): void {
    const text = raw.includes('\n') ? raw.replace(/\n/g, '') : raw;
    if (text.length === 0) return;
    if (options.width) {
      if (options.align === 'right') x += options.lineWidth! - this.widthOfString(text.replace(/\s+$/, ''));
      else if (options.align === 'center') x += options.lineWidth! / 2 - options.textWidth! / 2;
    }
    // As pdfkit: back to PDF's upward y axis for the text (text extraction sees upright glyphs, as before).
    const h = this.page.height;
    const baseline = h - y - (this.current.ascender / 1000) * this.size;
    this.parts.push(
      `q\n${this.flip}\nBT\n1 0 0 1 ${num(x)} ${num(baseline)} Tm\n/${this.currentId} ${num(this.size)} Tf`,
    );
    this.parts.push(glyphRun(this.current, this.currentId, text, x, baseline, this.size));
    this.parts.push('ET\nQ');
  }

  memo(key: string, draw: () => void): void {
    const s = this.state;
    const full = `${key}\u0000${s.fill}|${s.stroke}|${s.lineWidth}|${this.currentId}|${this.size}`;
    const hit = memoCache.get(full);
    if (hit) {
      if (hit.ops) this.parts.push(hit.ops);
      this.state = { ...hit.state };
      this.current = hit.font;
      this.currentId = hit.fontId;
      this.size = hit.size;
      this.x = hit.x;
      this.y = hit.y;
      return;
    }
    const start = this.parts.length;
    const depth = this.stack.length;
    const { opacity, logo } = this;
    draw();
    // Only self-contained drawing is kept: balanced save/restore, no page resources.
    if (this.stack.length !== depth || this.opacity !== opacity || this.logo !== logo) return;
    memoCache.offer(full, {
      ops: this.parts.slice(start).join('\n'),
      state: { ...this.state },
      font: this.current,
      fontId: this.currentId,
      size: this.size,
      x: this.x,
      y: this.y,
    });
  }

  image(src: Buffer, x: number, y: number): this {
    const logo = this.logos.get(src);
    if (!logo) throw new Error('logo not prepared or not drawable');
    this.logo = logo;
    this.parts.push(`q\n1 0 0 1 ${num(x)} ${num(y)} cm\n${logo.ops}\nQ`);
    return this;
  }

  /** The complete PDF file. */
  end(info: Record<string, string | Date>): Buffer {
    const content = deflateSync(Buffer.from(`${this.parts.join('\n')}\n`, 'latin1'), { level: 1 });
    const { width, height } = this.page;
    return assemble({ width, height, fonts: this.fonts, content, opacity: this.opacity, logo: this.logo }, info);
  }
}

const faces = new WeakMap<SharedFontProgram, SharedFont>();
function sharedFace(program: SharedFontProgram): SharedFont {
  let face = faces.get(program);
  if (!face) {
    // The face only lays text out here (no pdfkit document behind it): its objects are written by `fontObjects`.
    face = new SharedFont(program);
    faces.set(program, face);
  }
  return face;
}

interface Memo {
  ops: string;
  state: GraphicState;
  font: SharedFont;
  fontId: string;
  size: number;
  x: number;
  y: number;
}
/** The fixed parts of pages, by key and entry state: built once per layout position, then replayed. */
const memoCache = new RepeatCache<Memo>();

/** `TJ` runs by font and text (kept once a second document draws the text: a note's own values are not). */
const runCache = new RepeatCache<string>();

/** The `TJ` operator for a text, as pdfkit writes it (a segment ends after every kerned glyph). */
function glyphRun(font: SharedFont, id: string, text: string, x: number, y: number, size: number): string {
  const key = `${id}\u0000${text}`;
  const cached = runCache.get(key);
  if (cached !== undefined) return cached;
  const [encoded, positions] = font.encode(text);
  const scale = size / 1000;
  const out: string[] = [];
  const commands: string[] = [];
  let last = 0;
  let offsets = false;
  const segment = (cur: number) => {
    if (last < cur) {
      const advance = positions[cur - 1].xAdvance - positions[cur - 1].advanceWidth;
      commands.push(`<${encoded.slice(last, cur).join('')}> ${num(-advance)}`);
    }
    last = cur;
  };
  const flush = (i: number) => {
    segment(i);
    if (commands.length > 0) {
      out.push(`[${commands.join(' ')}] TJ`);
      commands.length = 0;
    }
  };
  let hadOffset = false;
  let i = 0;
  for (; i < positions.length; i++) {
    const pos = positions[i];
    if (pos.xOffset || pos.yOffset) {
      flush(i);
      out.push(`1 0 0 1 ${num(x + pos.xOffset * scale)} ${num(y + pos.yOffset * scale)} Tm`);
      flush(i + 1);
      hadOffset = true;
      offsets = true;
    } else {
      if (hadOffset) {
        out.push(`1 0 0 1 ${num(x)} ${num(y)} Tm`);
        hadOffset = false;
      }
      if (pos.xAdvance - pos.advanceWidth !== 0) segment(i + 1);
    }
    x += pos.xAdvance * scale;
  }
  flush(i);
  const run = out.join('\n');
  // Runs with glyph offsets depend on the position: not kept (none occur with DejaVu and WinAnsi text).
  if (!offsets) runCache.offer(key, run);
  return run;
}
