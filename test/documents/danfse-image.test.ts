/**
 * The fast DANFSe renderer (fonts embedded once per process, pair-kerning layout, no line wrapper for single
 * lines) must draw the same page as the previous one (pdfkit subsetting DejaVu per document, kept unchanged in
 * test/support/legacy-danfse-render.ts). Every note of a corpus is rendered by both, rasterised by poppler at
 * 72 dpi in grey, and the pages compared pixel by pixel.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { type RenderDanfseInput, renderDanfse } from '../../src/documents/danfse/render.ts';
import { renderDanfseLegacy } from '../support/legacy-danfse-render.ts';
import { hasTool } from '../support/tools.ts';

const SAMPLE = new URL('../fixtures/national/ExemploPisZeradoCofinsSobreFaturamentoPreenchido.xml', import.meta.url)
  .pathname;

const sample = () => readFileSync(SAMPLE, 'utf8').replace('MXM & JETTAX', 'MXM &amp; JETTAX');
const production = (xml: string) => xml.replace('<tpAmb>2</tpAmb>', '<tpAmb>1</tpAmb>');

function longDescription(xml: string): string {
  const text =
    'Prestação de serviços de consultoria em tecnologia da informação, incluindo análise, especificação, ' +
    'desenvolvimento, testes e implantação de módulos; ação, coração, pôr, müller, AVÔ "quoted" – 100%… ';
  const info = 'Informação complementar extensa para testar a quebra de linhas e o corte com reticências. ';
  return xml
    .replace(/<xDescServ>[^<]*<\/xDescServ>/, `<xDescServ>${text.repeat(20).slice(0, 2000)}</xDescServ>`)
    .replace('</cServ>', `</cServ><infoCompl><xInfComp>${info.repeat(30).slice(0, 2000)}</xInfComp></infoCompl>`);
}

function foreignTaker(xml: string): string {
  return xml.replace(
    /<toma>[\s\S]*?<\/toma>/,
    '<toma><NIF>PT501234567</NIF><xNome>SOCIEDADE PORTUGUESA DE SERVIÇOS, LDA.</xNome><end><endExt><cPais>PT</cPais>' +
      '<cEndPost>1000-001</cEndPost><xCidade>Lisboa</xCidade><xEstProvReg>Lisboa</xEstProvReg></endExt>' +
      '<xLgr>Rua Augusta</xLgr><nro>100</nro><xBairro>Baixa</xBairro></end><email>contato@example.pt</email></toma>',
  );
}

/** A name outside WinAnsi: this note takes the per-document font path in both renderers. */
const nonLatin1Taker = (xml: string) => xml.replace(/(<toma>[\s\S]*?<xNome>)[^<]*/, '$1ŁÓDŹ Ωmega → Serviços');

/** A solid-colour RGB PNG, written by hand so the test needs no image library. */
function makePng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let i = 0; i < raw.length; i++) raw[i] = i % (width * 3 + 1) === 0 ? 0 : (i * 7) % 255;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const logo = { data: makePng(120, 40), mimeType: 'image/png' };
const cancelled = { at: new Date('2025-10-02T15:04:05-03:00') };

const corpus: Array<[string, RenderDanfseInput]> = [
  ['portrait, homologation warning', { nfseXml: sample() }],
  ['portrait, production', { nfseXml: production(sample()) }],
  ['portrait with logo, cancelled', { nfseXml: sample(), template: 'retrato_logo', logo, cancelled }],
  ['landscape with logo', { nfseXml: production(sample()), template: 'paisagem_logo', logo }],
  ['landscape, cancelled, no logo', { nfseXml: sample(), template: 'paisagem_logo', cancelled }],
  ['portrait, foreign taker', { nfseXml: foreignTaker(sample()) }],
  ['landscape, foreign taker', { nfseXml: foreignTaker(sample()), template: 'paisagem_logo', logo }],
  ['portrait, long description (scaled page)', { nfseXml: longDescription(sample()) }],
  ['landscape, long description', { nfseXml: longDescription(sample()), template: 'paisagem_logo', cancelled }],
  ['portrait, text outside WinAnsi', { nfseXml: nonLatin1Taker(sample()) }],
];

const workDir = mkdtempSync(join(tmpdir(), 'danfse-image-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
let counter = 0;

interface Page {
  width: number;
  height: number;
  pixels: Buffer;
}

/** Rasterises every page with `pdftoppm -r 72 -gray` and parses the binary PGM files (P5) it writes. */
function rasterise(pdf: Buffer): Page[] {
  const base = join(workDir, `p${++counter}`);
  writeFileSync(`${base}.pdf`, pdf);
  const r = spawnSync('pdftoppm', ['-r', '72', '-gray', `${base}.pdf`, base], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pdftoppm failed: ${r.stderr}`);
  const pages: Page[] = [];
  for (let n = 1; ; n++) {
    let pgm: Buffer;
    try {
      pgm = readFileSync(`${base}-${n}.pgm`);
    } catch {
      break;
    }
    const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.subarray(0, 40).toString('latin1'));
    if (header?.[3] !== '255') throw new Error('unexpected PGM header');
    const width = Number(header[1]);
    const height = Number(header[2]);
    pages.push({ width, height, pixels: pgm.subarray(header[0].length, header[0].length + width * height) });
  }
  return pages;
}

function compare(a: Page, b: Page): { meanAbsDiff: number; differingShare: number } {
  let sum = 0;
  let differing = 0;
  for (let i = 0; i < a.pixels.length; i++) {
    const d = Math.abs(a.pixels[i] - b.pixels[i]);
    sum += d;
    if (d > 16) differing++;
  }
  return { meanAbsDiff: sum / a.pixels.length, differingShare: differing / a.pixels.length };
}

/**
 * Thresholds. A page at 72 dpi is 595×842 = 501,000 pixels. The new renderer writes the same glyphs at the same
 * positions, so the pages come out identical today (0 differing pixels); the margin left is for a rounding
 * difference in the last digit of a coordinate, which moves an anti-aliased edge by a grey level or two on a
 * handful of pixels. A single changed letter already differs on about 25 pixels (5e-5 of the page) and raises the
 * mean difference above 0.002 (the last test shows the comparison sees it): the thresholds sit below that.
 */
const MAX_MEAN_ABS_DIFF = 0.001;
const MAX_DIFFERING_SHARE = 0.00001;

describe.skipIf(!hasTool('pdftoppm'))('DANFSe: fast renderer against the previous one, as images', () => {
  it.each(corpus)('%s: same pages', async (_name, input) => {
    const [now, before] = await Promise.all([renderDanfse(input), renderDanfseLegacy(input)]);
    if (!now.ok || !before.ok) throw new Error('render failed');
    const pagesNow = rasterise(now.pdf);
    const pagesBefore = rasterise(before.pdf);
    expect(pagesNow.length).toBe(1);
    expect(pagesNow.length).toBe(pagesBefore.length);
    for (let i = 0; i < pagesNow.length; i++) {
      expect([pagesNow[i].width, pagesNow[i].height]).toEqual([pagesBefore[i].width, pagesBefore[i].height]);
      const diff = compare(pagesBefore[i], pagesNow[i]);
      // The comparison must be able to see a page: an all-white raster would compare equal to anything.
      expect(pagesNow[i].pixels.filter((p) => p < 128).length).toBeGreaterThan(5000);
      expect(diff.meanAbsDiff).toBeLessThanOrEqual(MAX_MEAN_ABS_DIFF);
      expect(diff.differingShare).toBeLessThanOrEqual(MAX_DIFFERING_SHARE);
    }
  });

  it('would notice a changed word (the comparison is sensitive enough)', async () => {
    const input = { nfseXml: sample() };
    const changed = { nfseXml: sample().replace('MXM &amp; JETTAX', 'MXM &amp; JETTAY') };
    const [a, b] = await Promise.all([renderDanfse(input), renderDanfse(changed)]);
    if (!a.ok || !b.ok) throw new Error('render failed');
    const diff = compare(rasterise(a.pdf)[0], rasterise(b.pdf)[0]);
    expect(diff.differingShare).toBeGreaterThan(MAX_DIFFERING_SHARE);
    expect(diff.meanAbsDiff).toBeGreaterThan(MAX_MEAN_ABS_DIFF);
  });
});
