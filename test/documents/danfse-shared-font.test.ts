/**
 * The shared DANFSe font lays text out as pdfkit's per-document font does (fontkit shaping of DejaVu): same number
 * of glyphs, same advances and kerning, same string widths; so line breaks, truncation and alignment are unchanged.
 */
import { fileURLToPath } from 'node:url';
import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { type FontkitFont, SharedFont, SharedFontProgram } from '../../src/documents/danfse/shared-font.ts';

const FONTS = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].map((f) =>
  fileURLToPath(new URL(`../../assets/fonts/${f}`, import.meta.url)),
);

interface PdfkitFont {
  font: FontkitFont;
  encode(text: string): [string[], Array<{ xAdvance: number; advanceWidth: number; xOffset: number }>];
  widthOfString(text: string, size: number): number;
}

/** Printable WinAnsi characters, without the soft hyphen (which fontkit drops and the shared font refuses). */
const ALPHABET = [
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  ...Array.from({ length: 0x100 - 0xa0 }, (_, i) => String.fromCharCode(0xa0 + i)).filter((c) => c !== '\u00ad'),
  ...'€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ',
].join('');

function randomStrings(count: number): string[] {
  let seed = 12345;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = 1 + Math.floor(next() * 24);
    let s = '';
    // Mostly letters, spaces and 'f' (ligatures), with the whole alphabet mixed in.
    for (let j = 0; j < length; j++) {
      const r = next();
      s +=
        r < 0.15
          ? ' '
          : r < 0.3
            ? 'f'
            : r < 0.6
              ? 'aeiouçãõéíTVWAYLPfl.,'[Math.floor(next() * 21)]
              : ALPHABET[Math.floor(next() * ALPHABET.length)];
    }
    out.push(s);
  }
  return out;
}

const SAMPLES = [
  'A autenticidade desta NFS-e pode ser verificada pela leitura deste código QR',
  'PRESTAÇÃO DE SERVIÇOS DE INFORMÁTICA — “AVÔ” Ltda. 100% eficiente, affluent office‰ …',
  'Tributação, WAVE, Tô, Yé, LT, P., F., V., fiscal, fluxo, suffix, difficult, baffle',
  ...randomStrings(1500),
];

describe('shared DANFSe font', () => {
  it.each(FONTS)('lays out like pdfkit: %s', (path) => {
    const doc = new PDFDocument({ font: path, autoFirstPage: false });
    const reference = (doc as unknown as { _font: PdfkitFont })._font;
    const program = new SharedFontProgram(reference.font);
    const shared = new SharedFont(program);
    for (const text of SAMPLES) {
      expect(program.covers(text)).toBe(true);
      const [refGlyphs, refPos] = reference.encode(text);
      const [glyphs, pos] = shared.encode(text);
      expect(glyphs.length, text).toBe(refGlyphs.length);
      for (let i = 0; i < pos.length; i++) {
        expect(pos[i].xAdvance, text).toBeCloseTo(refPos[i].xAdvance, 9);
        expect(pos[i].advanceWidth, text).toBeCloseTo(refPos[i].advanceWidth, 9);
        expect(pos[i].xOffset, text).toBe(refPos[i].xOffset);
      }
      expect(shared.widthOfString(text, 7), text).toBeCloseTo(reference.widthOfString(text, 7), 9);
    }
  });

  it('refuses what it cannot draw as pdfkit would: characters outside WinAnsi and the soft hyphen', () => {
    const doc = new PDFDocument({ font: FONTS[0], autoFirstPage: false });
    const program = new SharedFontProgram((doc as unknown as { _font: PdfkitFont })._font.font);
    expect(program.covers('São Paulo – “ok” …')).toBe(true);
    expect(program.covers('Łódź')).toBe(false);
    expect(program.covers('seis\u00adcentos')).toBe(false);
    expect(program.covers('→')).toBe(false);
  });
});
