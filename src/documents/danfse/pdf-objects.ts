import { createHash } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import PDFDocument from 'pdfkit';
import type { SharedFontProgram } from './shared-font.ts';

/**
 * The objects of the DANFSe PDF file written by pdf-canvas.ts: logos embedded once per distinct image, the fonts
 * serialised once per process, and the file assembly (objects, cross-reference table, trailer).
 */

/** pdfkit's number format (at most 6 decimals). */
export const num = (n: number): string => String(Math.round(n * 1e6) / 1e6);

interface Fonts {
  regular: SharedFontProgram;
  bold: SharedFontProgram;
}

/** What `assemble` needs of the page. */
export interface PageContent {
  width: number;
  height: number;
  fonts: Fonts;
  /** The deflated content stream. */
  content: Buffer;
  /** Fill opacity of the watermark (one ExtGState `/Gs1`), when used. */
  opacity: number | null;
  logo: PreparedLogo | null;
}

// ---------------------------------------------------------------------------------------------------------
// Logos: embedded once per distinct image by pdfkit itself, kept as serialised objects.

export interface PreparedLogo {
  /** Operators drawing the image at the origin, in pdfkit's top-down page space. */
  ops: string;
  /** The image objects; `@N` stands for the number of the object at index N, `@@` for the first one. */
  objects: Array<{ dict: string; stream: Buffer | null }>;
}

interface PdfkitRef {
  id: number;
  data: Record<string, unknown>;
  buffer: Uint8Array[];
  compress: boolean;
  finalize(): void;
}

const logoCache = new Map<string, PreparedLogo | null>();
const LOGO_CACHE_LIMIT = 64;

/** The prepared logo for `fit`, or null when pdfkit cannot draw it (corrupt image). */
export async function prepareLogo(data: Buffer, fit: [number, number]): Promise<PreparedLogo | null> {
  const key = `${fit.join('x')}:${createHash('sha1').update(data).digest('hex')}`;
  if (logoCache.has(key)) return logoCache.get(key) ?? null;
  const prepared = decodableImage(data) ? await embedWithPdfkit(data, fit) : null;
  if (logoCache.size >= LOGO_CACHE_LIMIT) logoCache.delete(logoCache.keys().next().value as string);
  logoCache.set(key, prepared);
  return prepared;
}

/**
 * Whether pdfkit can decode this image without crashing the process: png-js inflates the pixels of a PNG with an
 * alpha channel in a zlib callback and rethrows a data error there (an uncaught exception), so the compressed data
 * of a PNG is checked here first. Other images are left to pdfkit, which throws synchronously on what it cannot read.
 */
export function decodableImage(data: Buffer): boolean {
  if (data[0] !== 0x89 || data[1] !== 0x50) return true;
  const idat: Buffer[] = [];
  for (let at = 8; at + 8 <= data.length; ) {
    const length = data.readUInt32BE(at);
    const type = data.toString('latin1', at + 4, at + 8);
    if (at + 12 + length > data.length) return false;
    if (type === 'IDAT') idat.push(data.subarray(at + 8, at + 8 + length));
    if (type === 'IEND') break;
    at += 12 + length;
  }
  try {
    return idat.length > 0 && inflateSync(Buffer.concat(idat)).length > 0;
  } catch {
    return false;
  }
}

async function embedWithPdfkit(data: Buffer, fit: [number, number]): Promise<PreparedLogo | null> {
  const doc = new PDFDocument({ size: [1000, 1000], margin: 0, compress: true, font: '' as never });
  const internals = doc as unknown as {
    ref(data?: object): PdfkitRef;
    addContent(op: string): unknown;
    page: { xobjects: Record<string, PdfkitRef> };
  };
  const snapshots = new Map<PdfkitRef, { data: Record<string, unknown>; raw: Buffer; compress: boolean }>();
  const originalRef = internals.ref.bind(doc);
  internals.ref = (d?: object) => {
    const r = originalRef(d);
    const finalize = r.finalize.bind(r);
    r.finalize = () => {
      snapshots.set(r, { data: { ...r.data }, raw: Buffer.concat(r.buffer), compress: r.compress });
      finalize();
    };
    return r;
  };
  const ops: string[] = [];
  const addContent = internals.addContent.bind(doc);
  internals.addContent = (op: string) => {
    ops.push(op);
    return doc;
  };
  try {
    doc.image(data, 0, 0, { fit, align: 'center', valign: 'center' });
  } catch {
    return null;
  }
  internals.addContent = addContent;
  const done = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  doc.on('data', () => {});
  doc.end();
  await done;
  const labels = Object.keys(internals.page.xobjects);
  if (labels.length !== 1) return null;
  // The image and every object it refers to, in order; references are rewritten to indexes.
  const order: PdfkitRef[] = [];
  const visit = (r: PdfkitRef) => {
    if (order.includes(r)) return;
    order.push(r);
    const walk = (v: unknown) => {
      if (v && typeof v === 'object') {
        if (snapshots.has(v as PdfkitRef)) visit(v as PdfkitRef);
        else for (const x of Object.values(v)) walk(x);
      }
    };
    walk(snapshots.get(r)?.data);
  };
  visit(internals.page.xobjects[labels[0]]);
  const objects = order.map((r) => {
    const snap = snapshots.get(r);
    if (!snap) throw new Error('logo object was not written');
    // pdfkit writes a reference without data as a plain object, and deflates the others unless already filtered.
    const stream = snap.raw.length === 0 ? null : snap.compress ? deflateSync(snap.raw) : snap.raw;
    const dict: Record<string, unknown> = { ...snap.data };
    delete dict.Length;
    if (stream && snap.compress) dict.Filter = 'FlateDecode';
    const index = (v: object) => (order.includes(v as PdfkitRef) ? `@${order.indexOf(v as PdfkitRef)}` : null);
    return { dict: serialise(dict, index), stream };
  });
  const drawing = ops.join('\n').replaceAll(`/${labels[0]} Do`, '/Logo Do');
  return { ops: drawing, objects };
}

/** pdfkit's object notation: JS strings are names, String objects literal strings. */
function serialise(v: unknown, ref: (r: object) => string | null): string {
  if (typeof v === 'string') return `/${v}`;
  if (typeof v === 'number') return num(v);
  if (typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  if (v instanceof String) return literal(v.valueOf());
  if (v instanceof Date) return literal(pdfDate(v));
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return `<${Buffer.from(v).toString('hex')}>`;
  if (Array.isArray(v)) return `[${v.map((x) => serialise(x, ref)).join(' ')}]`;
  if (typeof v === 'object') {
    const r = ref(v);
    if (r !== null) return `${r} 0 R`;
    return `<<\n${Object.entries(v)
      .map(([k, x]) => `/${k} ${serialise(x, ref)}`)
      .join('\n')}\n>>`;
  }
  throw new Error(`cannot write ${typeof v} in a PDF object`);
}

const ESCAPES: Record<string, string> = {
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
  '\\': '\\\\',
  '(': '\\(',
  ')': '\\)',
};

/** A literal string as pdfkit writes it: ASCII as is, anything else as UTF-16BE with a byte-order mark. */
function literal(s: string): string {
  let text = s;
  if (/[^\x00-\x7f]/.test(s)) {
    const utf16 = Buffer.from(`\ufeff${s}`, 'utf16le');
    utf16.swap16();
    text = utf16.toString('latin1');
  }
  return `(${text.replace(/[\n\r\t\b\f()\\]/g, (c) => ESCAPES[c])})`;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
function pdfDate(d: Date): string {
  return (
    `D:${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1, 2)}${pad(d.getUTCDate(), 2)}` +
    `${pad(d.getUTCHours(), 2)}${pad(d.getUTCMinutes(), 2)}${pad(d.getUTCSeconds(), 2)}Z`
  );
}

// ---------------------------------------------------------------------------------------------------------
// The file

/** The five objects of one embedded font (Type0, CIDFont, descriptor, font file, ToUnicode) from `first` on. */
function fontObjects(program: SharedFontProgram, first: number, tag: string): Buffer[] {
  const m = program.metrics;
  const name = `${tag}+${m.postscriptName.replaceAll(' ', '_')}`;
  const widths = `[${Array.from(program.widths, (w) => (w == null ? 'null' : num(w))).join(' ')}]`;
  const obj = (n: number, body: string, stream?: Buffer) =>
    stream
      ? Buffer.concat([
          Buffer.from(`${n} 0 obj\n${body}\nstream\n`, 'latin1'),
          stream,
          Buffer.from('\nendstream\nendobj\n', 'latin1'),
        ])
      : Buffer.from(`${n} 0 obj\n${body}\nendobj\n`, 'latin1');
  return [
    obj(
      first,
      `<<\n/Type /Font\n/Subtype /Type0\n/BaseFont /${name}\n/Encoding /Identity-H\n` +
        `/DescendantFonts [${first + 1} 0 R]\n/ToUnicode ${first + 4} 0 R\n>>`,
    ),
    obj(
      first + 1,
      `<<\n/Type /Font\n/Subtype /CIDFontType2\n/BaseFont /${name}\n` +
        `/CIDSystemInfo <<\n/Registry (Adobe)\n/Ordering (Identity)\n/Supplement 0\n>>\n` +
        `/FontDescriptor ${first + 2} 0 R\n/W [0 ${widths}]\n/CIDToGIDMap /Identity\n>>`,
    ),
    obj(
      first + 2,
      `<<\n/Type /FontDescriptor\n/FontName /${name}\n/Flags ${m.flags}\n/FontBBox [${m.bbox.map(num).join(' ')}]\n` +
        `/ItalicAngle ${num(m.italicAngle)}\n/Ascent ${num(m.ascender)}\n/Descent ${num(m.descender)}\n` +
        `/CapHeight ${num(m.capHeight || m.ascender)}\n/XHeight ${num(m.xHeight || 0)}\n/StemV 0\n` +
        `/FontFile2 ${first + 3} 0 R\n>>`,
    ),
    obj(first + 3, `<<\n/Filter /FlateDecode\n/Length ${program.fontFile.length}\n>>`, program.fontFile),
    obj(first + 4, `<<\n/Filter /FlateDecode\n/Length ${program.toUnicode.length}\n>>`, program.toUnicode),
  ];
}

// Object numbers: 1 catalog, 2 pages, 3 page, 4 contents, 5 info, 6–10 regular font, 11–15 bold font, then the
// opacity state and the logo objects when present.
const FONT_REGULAR_OBJ = 6;
const FONT_BOLD_OBJ = 11;
const FIRST_FREE_OBJ = 16;

let fontBytes: { programs: Fonts; chunks: Buffer[] } | null = null;

/** The font objects, serialised once per process (they do not change between documents). */
function fontChunks(programs: Fonts): Buffer[] {
  if (fontBytes?.programs.regular !== programs.regular || fontBytes.programs.bold !== programs.bold) {
    fontBytes = {
      programs,
      chunks: [
        ...fontObjects(programs.regular, FONT_REGULAR_OBJ, 'DJSANS'),
        ...fontObjects(programs.bold, FONT_BOLD_OBJ, 'DJBOLD'),
      ],
    };
  }
  return fontBytes.chunks;
}

const HEADER = Buffer.from('%PDF-1.3\n%\xff\xff\xff\xff\n', 'latin1');

/** The complete PDF file of one page. */
export function assemble(page: PageContent, info: Record<string, string | Date>): Buffer {
  const { content, opacity, logo } = page;
  const chunks: Buffer[] = [HEADER];
  const offsets: number[] = [];
  let length = HEADER.length;
  const push = (n: number, chunk: Buffer) => {
    offsets[n] = length;
    chunks.push(chunk);
    length += chunk.length;
  };
  const obj = (n: number, body: string) => push(n, Buffer.from(`${n} 0 obj\n${body}\nendobj\n`, 'latin1'));

  let next = FIRST_FREE_OBJ;
  const gsObj = opacity === null ? 0 : next++;
  const logoFirst = next;
  if (logo) next += logo.objects.length;

  obj(1, '<<\n/Type /Catalog\n/Pages 2 0 R\n>>');
  obj(2, '<<\n/Type /Pages\n/Count 1\n/Kids [3 0 R]\n>>');
  const resources =
    `<<\n/ProcSet [/PDF /Text /ImageB /ImageC /ImageI]\n/Font <<\n/DJ1 ${FONT_REGULAR_OBJ} 0 R\n/DJ2 ${FONT_BOLD_OBJ} 0 R\n>>` +
    (gsObj ? `\n/ExtGState <<\n/Gs1 ${gsObj} 0 R\n>>` : '') +
    (logo ? `\n/XObject <<\n/Logo ${logoFirst} 0 R\n>>` : '') +
    '\n>>';
  obj(
    3,
    `<<\n/Type /Page\n/Parent 2 0 R\n/MediaBox [0 0 ${num(page.width)} ${num(page.height)}]\n` +
      `/Contents 4 0 R\n/Resources ${resources}\n>>`,
  );
  push(
    4,
    Buffer.concat([
      Buffer.from(`4 0 obj\n<<\n/Length ${content.length}\n/Filter /FlateDecode\n>>\nstream\n`, 'latin1'),
      content,
      Buffer.from('\nendstream\nendobj\n', 'latin1'),
    ]),
  );
  const infoBody = `<<\n${Object.entries(info)
    .map(([k, v]) => `/${k} ${literal(v instanceof Date ? pdfDate(v) : v)}`)
    .join('\n')}\n>>`;
  obj(5, infoBody);
  const fonts = fontChunks(page.fonts);
  for (let i = 0; i < fonts.length; i++) push(FONT_REGULAR_OBJ + i, fonts[i]);
  if (gsObj) obj(gsObj, `<<\n/Type /ExtGState\n/ca ${num(opacity!)}\n>>`);
  if (logo) {
    for (const [i, o] of logo.objects.entries()) {
      const dict = o.dict.replace(/@(\d+) 0 R/g, (_, k: string) => `${logoFirst + Number(k)} 0 R`);
      const n = logoFirst + i;
      if (!o.stream) {
        obj(n, dict);
        continue;
      }
      push(
        n,
        Buffer.concat([
          Buffer.from(`${n} 0 obj\n${dict.replace(/\n>>$/, `\n/Length ${o.stream.length}\n>>`)}\nstream\n`, 'latin1'),
          o.stream,
          Buffer.from('\nendstream\nendobj\n', 'latin1'),
        ]),
      );
    }
  }
  const size = next;
  const xref = [`xref\n0 ${size}\n0000000000 65535 f \n`];
  for (let n = 1; n < size; n++) xref.push(`${String(offsets[n]).padStart(10, '0')} 00000 n \n`);
  const id = createHash('md5').update(infoBody).digest('hex');
  xref.push(
    `trailer\n<<\n/Size ${size}\n/Root 1 0 R\n/Info 5 0 R\n/ID [<${id}> <${id}>]\n>>\nstartxref\n${length}\n%%EOF\n`,
  );
  chunks.push(Buffer.from(xref.join(''), 'latin1'));
  return Buffer.concat(chunks);
}
