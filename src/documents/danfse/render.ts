import { fileURLToPath } from 'node:url';
import PDFDocument from 'pdfkit';
import {
  asCancelled,
  buildDanfseModel,
  type DanfseModel,
  type DanfseParty,
  describeCancellation,
  EMPTY_TEXTS,
} from './model.ts';
import { type DanfseCanvas, FastCanvas, type PreparedLogo, prepareLogo } from './pdf-canvas.ts';
import { decodableImage } from './pdf-objects.ts';
import { qrModules } from './qr.ts';
import { type FontkitFont, SharedFontProgram, UnsharedGlyphError } from './shared-font.ts';

export type DanfseTemplate = 'padrao' | 'retrato_logo' | 'paisagem_logo';

export interface RenderDanfseInput {
  nfseXml: string;
  /** Project `danfeTemplate`; `padrao` when absent. The logo is drawn only by the `*_logo` templates. */
  template?: DanfseTemplate;
  /** Project logo. PNG and JPEG are drawn; any other format (e.g. WebP) is left out and the layout kept. */
  logo?: { data: Buffer; mimeType: string } | null;
  /** Set when a cancellation event exists: the page gets the diagonal CANCELADA watermark. */
  cancelled?: { at: Date } | null;
}

export type RenderDanfseResult =
  | { ok: true; pdf: Buffer }
  | { ok: false; code: 'DANFSE_INVALID_XML' | 'DANFSE_MISSING_DATA'; message: string };

const FONT_REGULAR = fileURLToPath(new URL('../../../assets/fonts/DejaVuSans.ttf', import.meta.url));
const FONT_BOLD = fileURLToPath(new URL('../../../assets/fonts/DejaVuSans-Bold.ttf', import.meta.url));

const REGULAR = 'DejaVuSans';
const BOLD = 'DejaVuSans-Bold';

type FontSource = string | object;
let parsedFonts: { regular: FontSource; bold: FontSource } | null = null;

/**
 * Parsing the TrueType tables is most of the cost of a PDF (about 25 ms per font), so the parsed fonts are kept
 * for the life of the process. pdfkit 0.20 accepts an already parsed font object wherever it accepts a path; we
 * obtain them from a throw-away document. Should that internal shape ever change, the paths are used instead.
 */
function fonts(): { regular: FontSource; bold: FontSource } {
  if (parsedFonts) return parsedFonts;
  const fontOf = (doc: PDFKit.PDFDocument): unknown => (doc as unknown as { _font?: { font?: unknown } })._font?.font;
  const seed = new PDFDocument({ font: FONT_REGULAR, autoFirstPage: false });
  const regular = fontOf(seed);
  seed.font(FONT_BOLD);
  const bold = fontOf(seed);
  const usable = (f: unknown): f is object => typeof (f as { layout?: unknown } | undefined)?.layout === 'function';
  parsedFonts = usable(regular) && usable(bold) ? { regular, bold } : { regular: FONT_REGULAR, bold: FONT_BOLD };
  return parsedFonts;
}

let sharedPrograms: { regular: SharedFontProgram; bold: SharedFontProgram } | null | undefined;

/** The fonts embedded once per process (see shared-font.ts); null when pdfkit did not hand us parsed fonts. */
function sharedFonts(): { regular: SharedFontProgram; bold: SharedFontProgram } | null {
  if (sharedPrograms !== undefined) return sharedPrograms;
  const { regular, bold } = fonts();
  sharedPrograms =
    typeof regular === 'string' || typeof bold === 'string'
      ? null
      : {
          regular: new SharedFontProgram(regular as FontkitFont),
          bold: new SharedFontProgram(bold as FontkitFont),
        };
  return sharedPrograms;
}

/** Prepares the shared fonts (a few milliseconds) so the first DANFSe does not pay for it. */
export function warmUpDanfse(): void {
  sharedFonts();
}

function* stringsOf(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (value && typeof value === 'object') for (const v of Object.values(value)) yield* stringsOf(v);
}

/** Whether every text the page will draw is covered by the shared fonts (fixed texts are plain Latin-1). */
function sharedFontsCover(
  programs: { regular: SharedFontProgram; bold: SharedFontProgram },
  model: DanfseModel,
  cancelled: { at: Date } | null,
): boolean {
  const covers = (s: string) => programs.regular.covers(s) && programs.bold.covers(s);
  for (const s of stringsOf(model)) if (!covers(s)) return false;
  return !cancelled || covers(describeCancellation(cancelled.at));
}

const QR_CAPTION =
  'A autenticidade desta NFS-e pode ser verificada pela leitura deste código QR ou pela consulta da chave de ' +
  'acesso no portal nacional da NFS-e';

// Typography and geometry, in points.
const MARGIN = 14;
const PAD = 4;
const TITLE_SIZE = 7;
const TITLE_H = 11;
const LABEL_SIZE = 5.5;
const VALUE_SIZE = 7;
const VALUE_LINE = 8.4;
const ROW_H = 19;
const NOTE_H = 13;
const LINE_THIN = 0.5;
const LINE_THICK = 1;
const SHADE = '#f2f2f2';
const RED = '#d0021b';
const WATERMARK_GREY = '#a6a6a6';

type Doc = DanfseCanvas;
/** The box the logo is fitted into, at the left of the header. */
const LOGO_FIT: [number, number] = [130, 42];
/** pdfkit's A4, in points. */
const A4: [number, number] = [595.28, 841.89];

interface Field {
  label: string;
  value: string;
  /** Width in grid columns of the portrait grid (4 columns). */
  span: number;
  /** Width in the landscape grid (8 columns); `span` when absent. */
  wide?: number;
  /** Maximum number of value lines (wrapped, ellipsis on overflow). */
  lines?: number;
  bold?: boolean;
  shaded?: boolean;
}

interface Layout {
  landscape: boolean;
  pageW: number;
  pageH: number;
  x: number;
  w: number;
  cols: number;
}

interface Block {
  height: number;
  draw(doc: Doc, y: number, height: number): void;
}

/** Renders the DANFSe v2.0 PDF (one A4 page) of an NFS-e XML. Never throws for bad input: errors are values. */
export async function renderDanfse(input: RenderDanfseInput): Promise<RenderDanfseResult> {
  const built = buildDanfseModel(input.nfseXml);
  if (!built.ok) return built;
  // a cancelled note says so in its situation field too, not only under the CANCELADA watermark
  const model = input.cancelled ? asCancelled(built.model) : built.model;
  const cancelled = input.cancelled ?? null;
  const programs = sharedFonts();
  if (programs && sharedFontsCover(programs, model, cancelled)) {
    try {
      return { ok: true, pdf: await renderPdf(input, model, cancelled, programs) };
    } catch (e) {
      if (!(e instanceof UnsharedGlyphError)) throw e;
      // A glyph the shared subset lacks (not expected for WinAnsi text): this document gets its own subset.
    }
  }
  return { ok: true, pdf: await renderPdf(input, model, cancelled, null) };
}

/**
 * The same page drawn by pdfkit with a per-document font subset: what `renderDanfse` falls back to for text outside
 * WinAnsi. The image test and the benchmark use it as the reference for the fast writer's output.
 */
export async function renderDanfseWithPdfkit(input: RenderDanfseInput): Promise<RenderDanfseResult> {
  const built = buildDanfseModel(input.nfseXml);
  if (!built.ok) return built;
  const model = input.cancelled ? asCancelled(built.model) : built.model;
  return { ok: true, pdf: await renderPdf(input, model, input.cancelled ?? null, null) };
}

async function renderPdf(
  input: RenderDanfseInput,
  model: DanfseModel,
  cancelled: { at: Date } | null,
  shared: { regular: SharedFontProgram; bold: SharedFontProgram } | null,
): Promise<Buffer> {
  const template = input.template ?? 'padrao';
  const landscape = template === 'paisagem_logo';
  const logo = template === 'padrao' ? null : usableLogo(input.logo);
  const info = {
    Title: `DANFSe - NFS-e ${model.numero}`,
    Subject: `Documento Auxiliar da NFS-e, chave de acesso ${model.chaveAcesso}`,
    Author: model.prestador.nome,
    Creator: 'nfse-service',
    Producer: 'PDFKit',
    CreationDate: model.processadaEm,
  };
  const [pageW, pageH] = landscape ? [A4[1], A4[0]] : A4;
  const layout: Layout = { landscape, pageW, pageH, x: MARGIN, w: pageW - 2 * MARGIN, cols: landscape ? 8 : 4 };

  if (shared) {
    // The fast path: the page written by our own small PDF writer, fonts and logo serialised once per process.
    const logos = new Map<Buffer, PreparedLogo | null>();
    if (logo) logos.set(logo, await prepareLogo(logo, LOGO_FIT));
    const canvas = new FastCanvas(pageW, pageH, shared, { regular: REGULAR, bold: BOLD }, logos);
    drawPage(canvas, layout, model, logo, cancelled);
    return canvas.end(info);
  }

  // Text outside WinAnsi (rare): pdfkit shapes and subsets DejaVu for this document, as it always did.
  const { regular, bold } = fonts();
  const pdfkitLogo = logo && decodableImage(logo) ? logo : null;
  const doc = new PDFDocument({
    size: 'A4',
    layout: landscape ? 'landscape' : 'portrait',
    margin: 0,
    font: regular as string,
    compress: true,
    info,
  });
  doc.registerFont(REGULAR, regular as string);
  doc.registerFont(BOLD, bold as string);

  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  drawPage(doc as unknown as DanfseCanvas, layout, model, pdfkitLogo, cancelled);
  doc.end();
  return finished;
}

function usableLogo(logo: RenderDanfseInput['logo']): Buffer | null {
  if (!logo || logo.data.length < 4) return null;
  const mime = logo.mimeType.toLowerCase();
  if (mime !== 'image/png' && mime !== 'image/jpeg' && mime !== 'image/jpg') return null;
  const b = logo.data;
  const isPng = b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47;
  const isJpeg = b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
  return isPng || isJpeg ? b : null;
}

interface PagePlan {
  before: Block[];
  description: FlexBlock;
  after: Block[];
  info: FlexBlock;
  fixedHeight: number;
}

interface FlexBlock {
  minHeight: number;
  wanted: number;
  draw: Block['draw'];
}

function planPage(doc: Doc, l: Layout, m: DanfseModel, logo: Buffer | null, cancelled: { at: Date } | null): PagePlan {
  const service = serviceBlocks(doc, l, m);
  const before: Block[] = [
    headerBlock(l, m, logo, cancelled),
    identificationBlock(doc, l, m),
    partyBlock(doc, l, 'PRESTADOR / FORNECEDOR', m.prestador, true),
    m.tomador ? partyBlock(doc, l, 'TOMADOR / ADQUIRENTE', m.tomador, false) : noteBlock(l, EMPTY_TEXTS.tomador),
    m.destinatario.kind === 'party'
      ? partyBlock(doc, l, 'DESTINATÁRIO DA OPERAÇÃO', m.destinatario.party, false, false)
      : m.destinatario.kind === 'tomador'
        ? noteBlock(l, EMPTY_TEXTS.destinatarioTomador, 'DESTINATÁRIO DA OPERAÇÃO')
        : noteBlock(l, EMPTY_TEXTS.destinatario),
    m.intermediario
      ? partyBlock(doc, l, 'INTERMEDIÁRIO DA OPERAÇÃO', m.intermediario, false)
      : noteBlock(l, EMPTY_TEXTS.intermediario),
    service.head,
  ];
  const after: Block[] = [
    m.issqn ? gridBlock(doc, l, 'TRIBUTAÇÃO MUNICIPAL (ISSQN)', issqnFields(m)) : noteBlock(l, EMPTY_TEXTS.issqn),
    gridBlock(doc, l, 'TRIBUTAÇÃO FEDERAL (EXCETO CBS)', federalFields(m)),
    m.ibsCbs ? gridBlock(doc, l, 'TRIBUTAÇÃO IBS / CBS', ibsCbsFields(m)) : noteBlock(l, EMPTY_TEXTS.ibsCbs),
    gridBlock(doc, l, 'VALOR TOTAL DA NFS-E', totalFields(m)),
  ];
  const fixedHeight = [...before, ...after].reduce((sum, b) => sum + b.height, 0);
  return { before, description: service.description, after, info: complementaryBlock(doc, l, m), fixedHeight };
}

function drawPage(doc: Doc, l: Layout, m: DanfseModel, logo: Buffer | null, cancelled: { at: Date } | null): void {
  const available = l.pageH - 2 * MARGIN;
  // A page too full for its content (long names, every party present, landscape) is drawn slightly smaller
  // instead of spilling onto a second page: everything is laid out on a larger virtual page, then scaled down.
  let scale = 1;
  let layout = l;
  let plan = planPage(doc, layout, m, logo, cancelled);
  for (let i = 0; i < 4; i++) {
    const needed = plan.fixedHeight + plan.description.minHeight + plan.info.minHeight;
    if (needed <= available / scale + 0.01) break;
    scale *= available / scale / needed;
    layout = { ...l, x: l.x / scale, w: l.w / scale, pageW: l.pageW / scale, pageH: l.pageH / scale };
    plan = planPage(doc, layout, m, logo, cancelled);
  }
  const top = MARGIN / scale;
  const bottom = (l.pageH - MARGIN) / scale;

  doc.save();
  if (scale !== 1) doc.scale(scale);
  // The service description and the complementary information share the height left on the page.
  let spare = bottom - top - plan.fixedHeight;
  const descHeight = Math.max(
    plan.description.minHeight,
    Math.min(plan.description.wanted, spare - Math.max(plan.info.minHeight, plan.info.wanted)),
  );
  spare -= descHeight;

  let y = top;
  for (const block of plan.before) {
    block.draw(doc, y, block.height);
    y += block.height;
  }
  plan.description.draw(doc, y, descHeight);
  y += descHeight;
  for (const block of plan.after) {
    block.draw(doc, y, block.height);
    y += block.height;
  }
  plan.info.draw(doc, y, Math.max(plan.info.minHeight, bottom - y));

  // Outer frame.
  doc
    .lineWidth(LINE_THICK)
    .strokeColor('black')
    .rect(layout.x, top, layout.w, bottom - top)
    .stroke();
  doc.restore();

  if (cancelled) drawWatermark(doc, l, 'CANCELADA');
}

// ---------------------------------------------------------------------------------------------------------
// Text helpers

/** Truncates to one line that fits the width, with an ellipsis. The current font and size are used. */
function fitLine(doc: Doc, value: string, width: number): string {
  const text = value.replace(/\s+/g, ' ');
  if (doc.widthOfString(text) <= width) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (doc.widthOfString(`${text.slice(0, mid).trimEnd()}…`) <= width) lo = mid;
    else hi = mid - 1;
  }
  return `${text.slice(0, lo).trimEnd()}…`;
}

function textLine(
  doc: Doc,
  value: string,
  x: number,
  y: number,
  width: number,
  align: 'left' | 'center' | 'right' = 'left',
) {
  const line = fitLine(doc, value, width);
  // Placed here rather than through pdfkit's line wrapper (same offsets as its alignment, a fraction of the work).
  let dx = 0;
  if (align === 'right') dx = width - doc.widthOfString(line.replace(/\s+$/, ''));
  else if (align === 'center') dx = width / 2 - doc.widthOfString(line) / 2;
  doc.text(line, x + dx, y, { lineBreak: false });
}

/** Wrapped text limited to `maxLines` lines (ellipsis on overflow). */
function textBox(doc: Doc, value: string, x: number, y: number, width: number, maxLines: number, lineHeight: number) {
  const fontLine = doc.currentLineHeight(true);
  const gap = Math.max(0, lineHeight - fontLine);
  doc.text(value, x, y, {
    width,
    height: lineHeight * maxLines - gap / 2,
    ellipsis: true,
    lineGap: gap,
  });
}

function labelFont(doc: Doc) {
  doc.font(BOLD).fontSize(LABEL_SIZE).fillColor('#333333');
}

/** A field label: shrunk a little when it does not fit, truncated only as a last resort. */
function labelLine(doc: Doc, label: string, x: number, y: number, width: number) {
  fixed(doc, `L|${label}|${x}|${y}|${width}`, () => {
    labelFont(doc);
    let size = LABEL_SIZE;
    while (size > 4.5 && doc.widthOfString(label) > width) {
      size -= 0.25;
      doc.fontSize(size);
    }
    textLine(doc, label, x, y + (LABEL_SIZE - size) * 0.8, width);
  });
}

/** A fixed part of the page: drawn once per position by the fast writer, then replayed (see `memo`). */
function fixed(doc: Doc, key: string, draw: () => void): void {
  if (doc.memo) doc.memo(key, draw);
  else draw();
}

function valueFont(doc: Doc, bold = false) {
  doc
    .font(bold ? BOLD : REGULAR)
    .fontSize(VALUE_SIZE)
    .fillColor('black');
}

function hline(doc: Doc, l: Layout, y: number, width = LINE_THIN) {
  doc
    .lineWidth(width)
    .strokeColor('black')
    .moveTo(l.x, y)
    .lineTo(l.x + l.w, y)
    .stroke();
}

function titleBar(doc: Doc, l: Layout, y: number, title: string) {
  fixed(doc, `T|${title}|${l.x}|${l.w}|${y}`, () => {
    doc.rect(l.x, y, l.w, TITLE_H).fill(SHADE);
    hline(doc, l, y);
    doc.font(BOLD).fontSize(TITLE_SIZE).fillColor('black');
    textLine(doc, title, l.x + PAD, y + 2.2, l.w - 2 * PAD);
  });
}

// ---------------------------------------------------------------------------------------------------------
// Grid

interface PlacedRow {
  fields: Array<Field & { x: number; w: number }>;
  height: number;
}

/** Value lines a field really needs, at most `max`. */
function neededLines(doc: Doc, value: string, width: number, max: number, bold?: boolean): number {
  if (max <= 1) return 1;
  valueFont(doc, bold);
  if (doc.widthOfString(value) <= width) return 1;
  const h = doc.heightOfString(value, { width, lineGap: VALUE_LINE - doc.currentLineHeight(true) });
  return Math.min(max, Math.max(1, Math.round(h / VALUE_LINE)));
}

function rowHeight(lines: number): number {
  return ROW_H + (lines - 1) * VALUE_LINE;
}

/** Packs fields left to right into rows of `cols` columns; the last field of a row takes the leftover width. */
function packRows(doc: Doc, fields: Field[], x: number, width: number, cols: number, landscape: boolean): PlacedRow[] {
  const colW = width / cols;
  const rows: Field[][] = [];
  let current: Field[] = [];
  let used = 0;
  for (const f of fields) {
    const span = Math.min(landscape ? (f.wide ?? f.span) : f.span, cols);
    if (used + span > cols && current.length) {
      rows.push(current);
      current = [];
      used = 0;
    }
    current.push({ ...f, span });
    used += span;
  }
  if (current.length) rows.push(current);
  return rows.map((row) => {
    let cx = x;
    const placed = row.map((f, i) => {
      const w = i === row.length - 1 ? x + width - cx : f.span * colW;
      const p = { ...f, x: cx, w };
      cx += w;
      return p;
    });
    for (const f of placed) f.lines = neededLines(doc, f.value, f.w - 2 * PAD, f.lines ?? 1, f.bold);
    const height = Math.max(...placed.map((f) => rowHeight(f.lines ?? 1)));
    return { fields: placed, height };
  });
}

function drawRows(doc: Doc, rows: PlacedRow[], y: number) {
  for (const row of rows) {
    for (const f of row.fields) {
      if (f.shaded) doc.rect(f.x, y, f.w, row.height).fill(SHADE);
      labelLine(doc, f.label, f.x + PAD, y + 2.5, f.w - 2 * PAD);
      valueFont(doc, f.bold);
      const lines = f.lines ?? 1;
      if (lines === 1) textLine(doc, f.value, f.x + PAD, y + 9.5, f.w - 2 * PAD);
      else textBox(doc, f.value, f.x + PAD, y + 9.5, f.w - 2 * PAD, lines, VALUE_LINE);
    }
    y += row.height;
  }
}

function gridBlock(doc: Doc, l: Layout, title: string, fields: Field[]): Block {
  const rows = packRows(doc, fields, l.x, l.w, l.cols, l.landscape);
  const height = TITLE_H + rows.reduce((s, r) => s + r.height, 0) + 1;
  return {
    height,
    draw(doc, y) {
      titleBar(doc, l, y, title);
      drawRows(doc, rows, y + TITLE_H);
    },
  };
}

/** A block replaced by its fixed one-line sentence (Notes 2–4 of the layout). */
function noteBlock(l: Layout, sentence: string, title?: string): Block {
  const height = NOTE_H;
  return {
    height,
    draw(doc, y) {
      const text = title ? `${title}: ${sentence}` : sentence;
      fixed(doc, `N|${text}|${l.x}|${l.w}|${y}`, () => {
        doc.rect(l.x, y, l.w, height).fill(SHADE);
        hline(doc, l, y);
        doc.font(BOLD).fontSize(TITLE_SIZE).fillColor('black');
        textLine(doc, text, l.x + PAD, y + 3.2, l.w - 2 * PAD);
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Blocks

function headerBlock(l: Layout, m: DanfseModel, logo: Buffer | null, cancelled: { at: Date } | null): Block {
  const height = 52;
  return {
    height,
    draw(doc, y) {
      const logoW = LOGO_FIT[0];
      let logoDrawn = false;
      if (logo) {
        try {
          doc.image(logo, l.x + PAD, y + 5, { fit: LOGO_FIT, align: 'center', valign: 'center' });
          logoDrawn = true;
        } catch {
          logoDrawn = false; // Corrupt image: keep the layout without it.
        }
      }
      if (!logoDrawn) {
        doc.font(BOLD).fontSize(22).fillColor('#1b3a6b');
        doc.text('NFS-e', l.x + PAD + 6, y + 9, { lineBreak: false });
        doc.font(REGULAR).fontSize(6).fillColor('#1b3a6b');
        doc.text('Nota Fiscal de Serviço eletrônica', l.x + PAD + 6, y + 37, { lineBreak: false });
      }

      const centerX = l.x + logoW + 2 * PAD;
      const rightW = l.landscape ? 260 : 170;
      const centerW = l.w - logoW - rightW - 4 * PAD;
      doc.font(BOLD).fontSize(10).fillColor('black');
      textLine(doc, 'DANFSe v2.0', centerX, y + 6, centerW, 'center');
      doc.font(REGULAR).fontSize(8);
      textLine(doc, 'Documento Auxiliar da NFS-e', centerX, y + 18, centerW, 'center');
      let warnY = y + 29;
      if (m.tpAmb === '2') {
        doc.font(BOLD).fontSize(9).fillColor(RED);
        textLine(doc, 'NFS-e SEM VALIDADE JURÍDICA', centerX, warnY, centerW, 'center');
        warnY += 11;
      }
      if (cancelled) {
        doc.font(BOLD).fontSize(7).fillColor(RED);
        textLine(doc, describeCancellation(cancelled.at), centerX, warnY, centerW, 'center');
      }

      const rightX = l.x + l.w - rightW - PAD;
      doc.font(BOLD).fontSize(8).fillColor('black');
      textLine(doc, m.municipioEmissor, rightX, y + 8, rightW, 'right');
      doc.font(REGULAR).fontSize(6).fillColor('#333333');
      textLine(doc, `Ambiente gerador: ${m.ambienteGerador}`, rightX, y + 21, rightW, 'right');
      textLine(doc, `Tipo de ambiente: ${m.tipoAmbiente}`, rightX, y + 29, rightW, 'right');
    },
  };
}

function identificationBlock(doc: Doc, l: Layout, m: DanfseModel): Block {
  const qrSize = 60;
  const qrColW = l.landscape ? 230 : 128;
  const leftW = l.w - qrColW;
  const cols = l.landscape ? 6 : 3;
  const fields: Field[] = [
    { label: 'CHAVE DE ACESSO DA NFS-e', value: m.chaveAcesso, span: 3, bold: true },
    { label: 'NÚMERO DA NFS-e', value: m.numero, span: 1, bold: true },
    { label: 'COMPETÊNCIA DA NFS-e', value: m.competencia, span: 1 },
    { label: 'DATA/HORA EMISSÃO NFS-e', value: m.dataHoraEmissao, span: 1 },
    { label: 'NÚMERO DA DPS', value: m.dpsNumero, span: 1 },
    { label: 'SÉRIE DA DPS', value: m.dpsSerie, span: 1 },
    { label: 'DATA/HORA EMISSÃO DPS', value: m.dpsDataHora, span: 1 },
    { label: 'EMITENTE DA NFS-e', value: m.emitente, span: 1 },
    { label: 'SITUAÇÃO DA NFS-e', value: m.situacao, span: 1 },
    { label: 'FINALIDADE', value: m.finalidade, span: 1 },
  ];
  const rows = packRows(doc, fields, l.x, leftW, cols, false);
  const qrBlockH = l.landscape ? qrSize + 2 * PAD : qrSize + 2 * PAD + 30;
  const rowsH = rows.reduce((s, r) => s + r.height, 0);
  const height = Math.max(rowsH, qrBlockH);
  // Spread the rows over the block height.
  const extra = (height - rowsH) / rows.length;
  for (const r of rows) r.height += extra;
  return {
    height,
    draw(doc, y) {
      hline(doc, l, y, LINE_THICK);
      drawRows(doc, rows, y);
      const qrX0 = l.x + leftW;
      doc
        .lineWidth(LINE_THIN)
        .strokeColor('black')
        .moveTo(qrX0, y)
        .lineTo(qrX0, y + height)
        .stroke();
      doc.font(REGULAR).fontSize(5.5).fillColor('black');
      if (l.landscape) {
        const qrX = l.x + l.w - qrSize - PAD;
        drawQr(doc, m.qrCodeUrl, qrX, y + (height - qrSize) / 2, qrSize);
        const capW = qrColW - qrSize - 3 * PAD;
        doc.text(QR_CAPTION, qrX0 + PAD, y + (height - 30) / 2, { width: capW, height: 40, align: 'left' });
      } else {
        const qrX = qrX0 + (qrColW - qrSize) / 2;
        drawQr(doc, m.qrCodeUrl, qrX, y + PAD, qrSize);
        doc.text(QR_CAPTION, qrX0 + PAD, y + PAD + qrSize + 3, {
          width: qrColW - 2 * PAD,
          height: 30,
          align: 'center',
        });
      }
    },
  };
}

/** The QR code as vector squares, one rectangle per horizontal run of dark modules. */
function drawQr(doc: Doc, content: string, x: number, y: number, size: number) {
  const { size: n, data } = qrModules(content);
  const cell = size / n;
  // Drawn in module units (small integers: short operators, cheap to format), scaled onto the page; each run is
  // 0.12 pt taller than a module, a hair of overlap that avoids anti-aliasing seams between rows.
  const height = 1 + 0.12 / cell;
  doc.save();
  doc.transform(cell, 0, 0, cell, x, y);
  for (let r = 0; r < n; r++) {
    let c = 0;
    while (c < n) {
      if (!data[r * n + c]) {
        c++;
        continue;
      }
      const start = c;
      while (c < n && data[r * n + c]) c++;
      doc.rect(start, r, c - start, height);
    }
  }
  doc.fill('black');
  doc.restore();
}

function partyBlock(doc: Doc, l: Layout, title: string, p: DanfseParty, isProvider: boolean, withIm = true): Block {
  const fields: Field[] = [
    { label: 'NOME / NOME EMPRESARIAL', value: p.nome, span: 2, wide: 3, bold: true, lines: 2 },
    { label: p.documentoLabel, value: p.documento, span: 1 },
  ];
  if (withIm) fields.push({ label: 'INSCRIÇÃO MUNICIPAL', value: p.inscricaoMunicipal, span: 1 });
  if (l.landscape) {
    fields.push(
      { label: 'TELEFONE', value: p.telefone, span: 1 },
      { label: 'E-MAIL', value: p.email, span: 1, wide: withIm ? 2 : 3 },
    );
  }
  fields.push(
    { label: 'ENDEREÇO', value: p.endereco, span: 2, wide: 3, lines: 2 },
    { label: 'MUNICÍPIO', value: p.municipio, span: 1 },
    { label: 'CEP', value: p.cep, span: 1 },
  );
  if (!l.landscape) {
    fields.push(
      { label: 'TELEFONE', value: p.telefone, span: 1 },
      { label: 'E-MAIL', value: p.email, span: isProvider ? 1 : 3 },
    );
  }
  if (isProvider && 'simplesNacional' in p) {
    const prest = p as DanfseModel['prestador'];
    fields.push(
      { label: 'SIMPLES NACIONAL', value: prest.simplesNacional, span: 1 },
      { label: 'REGIME DE APURAÇÃO (SN)', value: prest.regimeApuracaoSn, span: 1, wide: 2, lines: l.landscape ? 1 : 2 },
    );
  }
  return gridBlock(doc, l, title, fields);
}

function serviceBlocks(doc: Doc, l: Layout, m: DanfseModel): { head: Block; description: FlexBlock } {
  const s = m.servico;
  const head = gridBlock(doc, l, 'SERVIÇO PRESTADO', [
    { label: 'CÓDIGO DE TRIBUTAÇÃO NACIONAL', value: s.codigoTributacaoNacional, span: 2, wide: 3 },
    { label: 'CÓDIGO DE TRIBUTAÇÃO MUNICIPAL', value: s.codigoTributacaoMunicipal, span: 1, wide: 3 },
    { label: 'LOCAL DA PRESTAÇÃO', value: s.localPrestacao, span: 1, wide: 2 },
    { label: 'CÓDIGO NBS', value: s.codigoNbs, span: 4, wide: 8 },
  ]);
  const width = l.w - 2 * PAD;
  valueFont(doc);
  const textH = doc.heightOfString(s.descricao, { width, lineGap: VALUE_LINE - doc.currentLineHeight(true) });
  const neededLines = Math.max(1, Math.ceil(textH / VALUE_LINE - 0.01));
  const labelH = 9.5;
  const maxLines = l.landscape ? 8 : 20;
  const minLines = l.landscape ? 2 : 4;
  return {
    head,
    description: {
      minHeight: labelH + PAD + VALUE_LINE * Math.min(neededLines, minLines),
      wanted: labelH + PAD + VALUE_LINE * Math.min(neededLines, maxLines),
      draw(d, y, height) {
        labelLine(d, 'DESCRIÇÃO DO SERVIÇO', l.x + PAD, y + 2.5, width);
        valueFont(d);
        const lines = Math.max(1, Math.floor((height - labelH - PAD / 2) / VALUE_LINE));
        textBox(d, s.descricao, l.x + PAD, y + labelH, width, lines, VALUE_LINE);
      },
    },
  };
}

function issqnFields(m: DanfseModel): Field[] {
  const t = m.issqn!;
  return [
    { label: 'TRIBUTAÇÃO DO ISSQN', value: t.tributacao, span: 1 },
    { label: 'MUNICÍPIO DE INCIDÊNCIA', value: t.municipioIncidencia, span: 1 },
    { label: 'PAÍS DO RESULTADO', value: t.paisResultado, span: 1 },
    { label: 'REGIME ESPECIAL', value: t.regimeEspecial, span: 1 },
    { label: 'TIPO DE IMUNIDADE', value: t.imunidade, span: 1 },
    { label: 'SUSPENSÃO DO ISSQN', value: t.suspensao, span: 1 },
    { label: 'PROCESSO DE SUSPENSÃO', value: t.processoSuspensao, span: 1 },
    { label: 'BENEFÍCIO MUNICIPAL', value: t.beneficioMunicipal, span: 1 },
    { label: 'CÁLCULO DO BM', value: t.calculoBeneficio, span: 1 },
    { label: 'DEDUÇÕES / REDUÇÕES', value: t.deducoes, span: 1 },
    { label: 'DESCONTO INCONDICIONADO', value: t.descontoIncondicionado, span: 1 },
    { label: 'BC DO ISSQN', value: t.baseCalculo, span: 1 },
    { label: 'ALÍQUOTA APLICADA', value: t.aliquota, span: 1 },
    { label: 'RETENÇÃO DO ISSQN', value: t.retencao, span: 1 },
    { label: 'ISSQN APURADO', value: t.issqnApurado, span: 2, bold: true },
  ];
}

function federalFields(m: DanfseModel): Field[] {
  const f = m.federal;
  return [
    { label: 'IRRF', value: f.irrf, span: 1 },
    { label: 'CONTRIBUIÇÃO PREVIDENCIÁRIA RETIDA', value: f.contribuicaoPrevidenciaria, span: 1, wide: 2 },
    { label: 'CSLL RETIDA', value: f.csll, span: 1 },
    { label: 'PIS - APURAÇÃO PRÓPRIA', value: f.pis, span: 1 },
    { label: 'COFINS - APURAÇÃO PRÓPRIA', value: f.cofins, span: 1 },
    { label: 'RETENÇÃO DE PIS / COFINS / CSLL', value: f.retencaoPisCofins, span: 3, wide: 2 },
  ];
}

function ibsCbsFields(m: DanfseModel): Field[] {
  const t = m.ibsCbs!;
  return [
    { label: 'CST / CLASSIF. TRIBUTÁRIA', value: t.cstClassTrib, span: 1 },
    { label: 'INDICADOR DA OPERAÇÃO', value: t.indicadorOperacao, span: 1 },
    { label: 'LOCALIDADE DE INCIDÊNCIA', value: t.localidadeIncidencia, span: 1, wide: 2 },
    { label: 'USO OU CONSUMO PESSOAL', value: t.usoConsumoPessoal, span: 1 },
    { label: 'EXCLUSÕES / REDUÇÕES DA BC', value: t.exclusoesReducoes, span: 1 },
    { label: 'BC DO IBS / CBS', value: t.baseCalculo, span: 1 },
    { label: 'RED. ALÍQUOTA UF / MUN / CBS', value: t.reducoesAliquota, span: 2, wide: 1 },
    { label: 'ALÍQUOTA IBS ESTADUAL', value: t.aliquotaIbsUf, span: 1 },
    { label: 'ALÍQ. EFETIVA IBS ESTADUAL', value: t.aliquotaEfetivaIbsUf, span: 1 },
    { label: 'VALOR IBS ESTADUAL', value: t.valorIbsUf, span: 2, wide: 1 },
    { label: 'ALÍQUOTA IBS MUNICIPAL', value: t.aliquotaIbsMun, span: 1 },
    { label: 'ALÍQ. EFETIVA IBS MUNICIPAL', value: t.aliquotaEfetivaIbsMun, span: 1 },
    { label: 'VALOR IBS MUNICIPAL', value: t.valorIbsMun, span: 1 },
    { label: 'VALOR TOTAL DO IBS', value: t.valorIbs, span: 1, wide: 2, bold: true },
    { label: 'ALÍQUOTA CBS', value: t.aliquotaCbs, span: 1 },
    { label: 'ALÍQUOTA EFETIVA CBS', value: t.aliquotaEfetivaCbs, span: 1 },
    { label: 'VALOR TOTAL DA CBS', value: t.valorCbs, span: 2, wide: 3, bold: true },
  ];
}

function totalFields(m: DanfseModel): Field[] {
  const t = m.totais;
  return [
    { label: 'VALOR DO SERVIÇO', value: t.valorServico, span: 1 },
    { label: 'DESCONTO INCONDICIONADO', value: t.descontoIncondicionado, span: 1 },
    { label: 'DESCONTO CONDICIONADO', value: t.descontoCondicionado, span: 1 },
    { label: 'TOTAL DAS RETENÇÕES', value: t.totalRetencoes, span: 1 },
    { label: 'VALOR LÍQUIDO DA NFS-e', value: t.valorLiquido, span: 1, bold: true },
    { label: 'TOTAL IBS / CBS', value: t.totalIbsCbs, span: 1 },
    { label: 'VALOR LÍQUIDO + IBS / CBS', value: t.valorLiquidoMaisIbsCbs, span: 2, bold: true, shaded: true },
  ];
}

function complementaryBlock(doc: Doc, l: Layout, m: DanfseModel): FlexBlock {
  const width = l.w - 2 * PAD;
  const fixed = m.tributosAproximados;
  const body = m.informacoesComplementares;
  const fixedLines = fixed ? neededLines(doc, fixed, width, 2) : 0;
  const bodyWanted = body ? neededLines(doc, body, width, 40) : 0;
  const chrome = TITLE_H + 3 + PAD;
  return {
    // The fixed Lei 12.741/2012 line is never cut; the free text keeps at least one line.
    minHeight: chrome + VALUE_LINE * Math.max(1, fixedLines + (body ? 1 : 0)),
    wanted: chrome + VALUE_LINE * Math.max(1, fixedLines + bodyWanted),
    draw(d, y, height) {
      titleBar(d, l, y, 'INFORMAÇÕES COMPLEMENTARES');
      const lines = Math.max(1, Math.floor((height - chrome) / VALUE_LINE + 0.01));
      const textY = y + TITLE_H + 3;
      const bodyLines = body ? Math.min(Math.max(1, lines - fixedLines), bodyWanted) : 0;
      valueFont(d);
      if (bodyLines > 0) textBox(d, body, l.x + PAD, textY, width, bodyLines, VALUE_LINE);
      if (fixed) textBox(d, fixed, l.x + PAD, textY + bodyLines * VALUE_LINE, width, fixedLines, VALUE_LINE);
      if (!fixed && !body) textLine(d, '-', l.x + PAD, textY, width);
    },
  };
}

function drawWatermark(doc: Doc, l: Layout, word: string) {
  const angle = (-Math.atan2(l.pageH, l.pageW) * 180) / Math.PI;
  const cx = l.pageW / 2;
  const cy = l.pageH / 2;
  const size = l.landscape ? 110 : 100;
  doc.save();
  doc.font(BOLD).fontSize(size).fillColor(WATERMARK_GREY).fillOpacity(0.45);
  const w = doc.widthOfString(word);
  doc.rotate(angle, { origin: [cx, cy] });
  doc.text(word, cx - w / 2, cy - size * 0.6, { lineBreak: false });
  doc.restore();
}
