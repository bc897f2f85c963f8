/**
 * The fast DANFSe renderer (our own small PDF writer, pdf-canvas.ts: fonts and logos serialised once per process,
 * pair-kerning layout) must draw the same page as the previous one (pdfkit subsetting DejaVu per document, kept
 * unchanged in test/support/legacy-danfse-render.ts). Every note of a corpus (each template, each kind of logo,
 * national and municipal ABRASF notes, crowded and long texts, foreign taker, cancelled) is rendered by both,
 * rasterised by poppler at 72 dpi in grey, and the pages compared pixel by pixel; the text extracted by pdftotext
 * must be the same too.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { type RenderDanfseInput, renderDanfse, renderDanfseWithPdfkit } from '../../src/documents/danfse/render.ts';
import { pngChunk, tinyJpeg, WEBP_LOSSY } from '../support/images.ts';
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

/** Every optional party present (intermediary, recipient), long texts, no document references left out. */
function crowded(xml: string): string {
  return longDescription(xml)
    .replace(
      '<indDest>0</indDest>',
      '<indDest>1</indDest><dest><CNPJ>11222333000181</CNPJ><xNome>DESTINATÁRIO FINAL S.A.</xNome><end><endNac>' +
        '<cMun>3550308</cMun><CEP>01310100</CEP></endNac><xLgr>Avenida Paulista</xLgr><nro>1000</nro>' +
        '<xBairro>Bela Vista</xBairro></end><fone>11987654321</fone></dest>',
    )
    .replace(
      '</toma>',
      '</toma><interm><CPF>12345678909</CPF><xNome>JOSÉ DA SILVA INTERMEDIAÇÕES DE NEGÓCIOS E REPRESENTAÇÕES ' +
        'COMERCIAIS LTDA</xNome><end><endExt><cPais>PT</cPais><cEndPost>1000-001</cEndPost><xCidade>Lisboa</xCidade>' +
        '<xEstProvReg>Lisboa</xEstProvReg></endExt><xLgr>Rua Augusta</xLgr><nro>100</nro><xBairro>Baixa</xBairro>' +
        '</end><email>jose@example.pt</email></interm>',
    );
}

const noTaker = (xml: string) => xml.replace(/<toma>[\s\S]*?<\/toma>/, '');

/** A municipal ABRASF 2.04 NFS-e (the DANFSe-like page of providers without a published PDF). */
const ABRASF_204 = `<?xml version="1.0" encoding="UTF-8"?>
<CompNfse xmlns="http://www.abrasf.org.br/nfse.xsd"><Nfse versao="2.04"><InfNfse Id="n1">
<Numero>2026000777</Numero><CodigoVerificacao>QW12ER34</CodigoVerificacao><DataEmissao>2026-11-20T10:15:00</DataEmissao>
<ValoresNfse><BaseCalculo>1500.00</BaseCalculo><Aliquota>3.00</Aliquota><ValorIss>45.00</ValorIss><ValorLiquidoNfse>1500.00</ValorLiquidoNfse></ValoresNfse>
<PrestadorServico><IdentificacaoPrestador><CpfCnpj><Cnpj>11222333000181</Cnpj></CpfCnpj><InscricaoMunicipal>123456</InscricaoMunicipal></IdentificacaoPrestador>
<RazaoSocial>Serviços Técnicos Açaí Ltda</RazaoSocial><Endereco><Endereco>Rua São João</Endereco><Numero>10</Numero><Bairro>Centro</Bairro><CodigoMunicipio>2704302</CodigoMunicipio><Uf>AL</Uf><Cep>57020000</Cep></Endereco>
<Contato><Telefone>8233334444</Telefone><Email>contato@acai.com.br</Email></Contato></PrestadorServico>
<OrgaoGerador><CodigoMunicipio>2704302</CodigoMunicipio><Uf>AL</Uf></OrgaoGerador>
<DeclaracaoPrestacaoServico><InfDeclaracaoPrestacaoServico Id="r1">
<Rps><IdentificacaoRps><Numero>17</Numero><Serie>A1</Serie><Tipo>1</Tipo></IdentificacaoRps><DataEmissao>2026-11-20</DataEmissao><Status>1</Status></Rps>
<Competencia>2026-11-20</Competencia>
<Servico><Valores><ValorServicos>1500.00</ValorServicos><ValorIss>45.00</ValorIss><Aliquota>3.00</Aliquota></Valores>
<IssRetido>2</IssRetido><ItemListaServico>01.05</ItemListaServico><CodigoCnae>6201501</CodigoCnae><CodigoTributacaoMunicipio>010501</CodigoTributacaoMunicipio>
<Discriminacao>Manutenção de software; suporte técnico e treinamento de usuários (24 horas)</Discriminacao><CodigoMunicipio>2704302</CodigoMunicipio><ExigibilidadeISS>1</ExigibilidadeISS><MunicipioIncidencia>2704302</MunicipioIncidencia></Servico>
<Prestador><CpfCnpj><Cnpj>11222333000181</Cnpj></CpfCnpj><InscricaoMunicipal>123456</InscricaoMunicipal></Prestador>
<TomadorServico><IdentificacaoTomador><CpfCnpj><Cpf>52998224725</Cpf></CpfCnpj></IdentificacaoTomador><RazaoSocial>João Conceição</RazaoSocial>
<Endereco><Endereco>Avenida Brasil</Endereco><Numero>2000</Numero><Bairro>Jardim</Bairro><CodigoMunicipio>3550308</CodigoMunicipio><Uf>SP</Uf><Cep>01310100</Cep></Endereco></TomadorServico>
<OptanteSimplesNacional>2</OptanteSimplesNacional><IncentivoFiscal>2</IncentivoFiscal>
</InfDeclaracaoPrestacaoServico></DeclaracaoPrestacaoServico></InfNfse></Nfse></CompNfse>`;

/** A name outside WinAnsi: this note takes the per-document font path in both renderers. */
const nonLatin1Taker = (xml: string) => xml.replace(/(<toma>[\s\S]*?<xNome>)[^<]*/, '$1ŁÓDŹ Ωmega → Serviços');

/**
 * A patterned PNG, written by hand so the test needs no image library: RGB (colour type 2), RGBA (6: pdfkit splits
 * the alpha into a soft mask) or indexed (3: a palette object).
 */
function makePng(width: number, height: number, colourType: 2 | 3 | 6 = 2): Buffer {
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
  ihdr[9] = colourType;
  const channels = colourType === 2 ? 3 : colourType === 6 ? 4 : 1;
  const raw = Buffer.alloc((width * channels + 1) * height);
  for (let i = 0; i < raw.length; i++) {
    const column = i % (width * channels + 1);
    raw[i] = column === 0 ? 0 : colourType === 3 ? (i * 3) % 16 : (i * 7) % 255;
  }
  const palette = Buffer.alloc(16 * 3);
  for (let i = 0; i < palette.length; i++) palette[i] = (i * 37) % 256;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    ...(colourType === 3 ? [chunk('PLTE', palette)] : []),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** An RGBA PNG whose pixel data is not zlib: png-js would rethrow the error from a zlib callback, ending the process. */
function corruptAlphaPng(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(10, 0);
  ihdr.writeUInt32BE(10, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', Buffer.from('not zlib data')),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

const logo = { data: makePng(120, 40), mimeType: 'image/png' };
const alphaLogo = { data: makePng(60, 60, 6), mimeType: 'image/png' };
const paletteLogo = { data: makePng(200, 30, 3), mimeType: 'image/png' };
const jpegLogo = { data: tinyJpeg(), mimeType: 'image/jpeg' };
const webpLogo = { data: WEBP_LOSSY, mimeType: 'image/webp' };
const cancelled = { at: new Date('2025-10-02T15:04:05-03:00') };

/**
 * Name, input, and whether to compare with the previous renderer too (it spilled crowded notes onto more pages,
 * where the page is scaled down since, and crashed on a corrupt RGBA logo): the others are compared with the same
 * layout drawn through pdfkit only.
 */
const corpus: Array<[string, RenderDanfseInput, boolean?]> = [
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
  ['portrait, RGBA logo (soft mask)', { nfseXml: sample(), template: 'retrato_logo', logo: alphaLogo }],
  ['landscape, indexed-colour logo', { nfseXml: production(sample()), template: 'paisagem_logo', logo: paletteLogo }],
  [
    'portrait, JPEG logo, cancelled',
    { nfseXml: production(sample()), template: 'retrato_logo', logo: jpegLogo, cancelled },
  ],
  ['portrait, WebP logo left out', { nfseXml: sample(), template: 'retrato_logo', logo: webpLogo }],
  [
    'portrait, corrupt RGBA logo left out (the previous renderer ended the process)',
    { nfseXml: sample(), template: 'retrato_logo', logo: { data: corruptAlphaPng(), mimeType: 'image/png' } },
    false,
  ],
  ['portrait, every party and long texts', { nfseXml: crowded(sample()) }, false],
  [
    'landscape, every party and long texts, cancelled',
    { nfseXml: crowded(sample()), template: 'paisagem_logo', cancelled },
    false,
  ],
  ['portrait, no taker', { nfseXml: noTaker(production(sample())) }],
  ['municipal ABRASF 2.04, portrait', { nfseXml: ABRASF_204 }],
  [
    'municipal ABRASF 2.04, landscape with logo, cancelled',
    { nfseXml: ABRASF_204, template: 'paisagem_logo', logo, cancelled },
  ],
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

/** The text poppler extracts, in reading order. */
function extractText(pdf: Buffer): string {
  const path = join(workDir, `t${++counter}.pdf`);
  writeFileSync(path, pdf);
  const r = spawnSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pdftotext failed: ${r.stderr}`);
  return r.stdout;
}

/**
 * Same extracted text. pdfkit's per-document subset sometimes maps a glyph to no character in its ToUnicode table
 * (the renderers before this one: after many documents, `Maceió` may extract as `Ma eió`); the shared fonts map
 * every glyph. So where the texts differ, the previous one must show a blank and the new one a character.
 */
function expectSameText(now: string, before: string) {
  expect(now.length).toBe(before.length);
  for (let i = 0; i < now.length; i++) {
    if (now[i] !== before[i]) expect([before[i], now.slice(i - 20, i + 20)]).toEqual([' ', expect.any(String)]);
  }
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
  it.each(corpus)('%s: same pages', async (_name, input, withLegacy = true) => {
    const now = await renderDanfse(input);
    const references = await Promise.all([
      renderDanfseWithPdfkit(input),
      ...(withLegacy ? [renderDanfseLegacy(input)] : []),
    ]);
    if (!now.ok) throw new Error(now.message);
    const pagesNow = rasterise(now.pdf);
    expect(pagesNow.length).toBe(1);
    // The comparison must be able to see a page: an all-white raster would compare equal to anything.
    expect(pagesNow[0].pixels.filter((p) => p < 128).length).toBeGreaterThan(5000);
    const text = extractText(now.pdf);
    expect(text).toContain('DANFSe v2.0');
    for (const before of references) {
      if (!before.ok) throw new Error(before.message);
      const pagesBefore = rasterise(before.pdf);
      expect(pagesBefore.length).toBe(1);
      expect([pagesNow[0].width, pagesNow[0].height]).toEqual([pagesBefore[0].width, pagesBefore[0].height]);
      const diff = compare(pagesBefore[0], pagesNow[0]);
      expect(diff.meanAbsDiff).toBeLessThanOrEqual(MAX_MEAN_ABS_DIFF);
      expect(diff.differingShare).toBeLessThanOrEqual(MAX_DIFFERING_SHARE);
      // The text stays extractable, and reads the same.
      expectSameText(text, extractText(before.pdf));
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
