import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  formatCep,
  formatCnpj,
  formatCpf,
  formatDate,
  formatDateTime,
  formatDecimal,
  formatMoney,
  formatPercent,
  formatPhone,
  sumDecimals,
} from '../../src/documents/danfse/format.ts';
import { asCancelled, buildDanfseModel, CONSULTA_PUBLICA_URL, EMPTY_TEXTS } from '../../src/documents/danfse/model.ts';
import { type RenderDanfseInput, renderDanfse } from '../../src/documents/danfse/render.ts';
import { accessKeyCheckDigit, isValidAccessKey } from '../../src/xml/access-key.ts';
import { hasTool } from '../support/tools.ts';

const SAMPLE = new URL('../fixtures/national/ExemploPisZeradoCofinsSobreFaturamentoPreenchido.xml', import.meta.url)
  .pathname;
const KEY = '33045572211905971000105000000000014625124504258429';
const QR_URL = `https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=${KEY}`;

/** The published sample has a raw `&` in the taker's name; real documents from Sefin are well-formed. */
function sampleXml(): string {
  return readFileSync(SAMPLE, 'utf8').replace('MXM & JETTAX', 'MXM &amp; JETTAX');
}

function production(xml: string): string {
  return xml.replace('<tpAmb>2</tpAmb>', '<tpAmb>1</tpAmb>');
}

/** A sample with every optional party, a 2,000-character description and long complementary information. */
function crowdedXml(): string {
  const description =
    'Prestação de serviços de consultoria em tecnologia da informação, incluindo análise, especificação, ' +
    'desenvolvimento, testes e implantação de módulos; ação, coração, pôr, müller. ';
  const info = 'Informação complementar extensa para testar a quebra de linhas e o corte com reticências. ';
  return sampleXml()
    .replace(
      '<xDescServ>Analise e desenvolvimento de sistemas (MXM)</xDescServ>',
      `<xDescServ>${description.repeat(20).slice(0, 2000)}</xDescServ>`,
    )
    .replace(
      /<toma>[\s\S]*?<\/toma>/,
      '<interm><CPF>12345678909</CPF><xNome>JOSÉ DA SILVA INTERMEDIAÇÕES DE NEGÓCIOS E REPRESENTAÇÕES COMERCIAIS LTDA</xNome>' +
        '<end><endExt><cPais>PT</cPais><cEndPost>1000-001</cEndPost><xCidade>Lisboa</xCidade><xEstProvReg>Lisboa</xEstProvReg></endExt>' +
        '<xLgr>Rua Augusta</xLgr><nro>100</nro><xBairro>Baixa</xBairro></end><email>jose@example.pt</email></interm>',
    )
    .replace(
      '<indDest>0</indDest>',
      '<indDest>1</indDest><dest><CNPJ>11222333000181</CNPJ><xNome>DESTINATÁRIO FINAL S.A.</xNome><end><endNac>' +
        '<cMun>3550308</cMun><CEP>01310100</CEP></endNac><xLgr>Avenida Paulista</xLgr><nro>1000</nro>' +
        '<xBairro>Bela Vista</xBairro></end><fone>11987654321</fone></dest>',
    )
    .replace(
      '</cServ>',
      `</cServ><infoCompl><docRef>CONTRATO 2025/123</docRef><xPed>PO-998877</xPed><xInfComp>${info.repeat(30).slice(0, 2000)}</xInfComp></infoCompl>`,
    );
}

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
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = y * (width * 3 + 1) + 1 + x * 3;
      raw[o] = 30;
      raw[o + 1] = 90;
      raw[o + 2] = 200;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const workDir = mkdtempSync(join(tmpdir(), 'danfse-test-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
let fileCounter = 0;

async function render(input: RenderDanfseInput): Promise<{ pdf: Buffer; path: string }> {
  const result = await renderDanfse(input);
  if (!result.ok) throw new Error(`render failed: ${result.code} ${result.message}`);
  const path = join(workDir, `danfse-${++fileCounter}.pdf`);
  writeFileSync(path, result.pdf);
  return { pdf: result.pdf, path };
}

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

function pdfText(path: string): string {
  return run('pdftotext', ['-layout', path, '-']);
}

function pdfInfo(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of run('pdfinfo', [path]).split('\n')) {
    const m = /^([^:]+):\s*(.*)$/.exec(line);
    if (m) out[m[1].trim()] = m[2].trim();
  }
  return out;
}

function decodeQr(path: string): string {
  const prefix = path.replace(/\.pdf$/, '');
  run('pdftoppm', ['-r', '150', '-png', '-singlefile', path, prefix]);
  const r = spawnSync('zbarimg', ['-q', '--raw', `${prefix}.png`], { encoding: 'utf8' });
  return r.stdout.trim();
}

/** A low-resolution greyscale render of the page (one byte per pixel, 0 black to 255 white). */
function greyPixels(path: string): Buffer {
  const prefix = path.replace(/\.pdf$/, '-grey');
  run('pdftoppm', ['-r', '30', '-gray', '-singlefile', path, prefix]);
  const pgm = readFileSync(`${prefix}.pgm`);
  // Binary PGM: "P5\n<w> <h>\n<max>\n" then one byte per pixel.
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.subarray(0, 50).toString('latin1'));
  if (!header) throw new Error('not a PGM file');
  return pgm.subarray(header[0].length);
}

/** Share of pixels clearly darker in `b` than in `a` (same page size). */
function darkenedShare(a: Buffer, b: Buffer): number {
  expect(b.length).toBe(a.length);
  let darker = 0;
  for (let i = 0; i < a.length; i++) if (b[i] < a[i] - 20) darker++;
  return darker / a.length;
}

const tools = {
  pdftotext: hasTool('pdftotext'),
  pdfinfo: hasTool('pdfinfo'),
  pdftoppm: hasTool('pdftoppm'),
  zbarimg: hasTool('zbarimg'),
};

describe('pt-BR formatting', () => {
  it('formats money, decimals and percentages from XML decimal strings', () => {
    expect(formatMoney('1234.56')).toBe('R$ 1.234,56');
    expect(formatMoney('10000')).toBe('R$ 10.000,00');
    expect(formatMoney('9385.5')).toBe('R$ 9.385,50');
    expect(formatMoney('0.00')).toBe('R$ 0,00');
    expect(formatMoney('1234567.891')).toBe('R$ 1.234.567,89');
    expect(formatMoney(null)).toBe('-');
    expect(formatMoney('abc')).toBe('-');
    expect(formatDecimal('0.005')).toBe('0,01');
    expect(formatDecimal('999.995')).toBe('1.000,00');
    expect(formatPercent('5.00')).toBe('5,00%');
    expect(formatPercent('0.9')).toBe('0,90%');
    expect(sumDecimals('8.74', '78.66')).toBe('87.40');
    expect(sumDecimals(null, undefined)).toBeNull();
  });

  it('formats dates as written in the XML (issuer local time), independent of the process time zone', () => {
    expect(formatDateTime('2025-12-30T19:01:35-03:00')).toBe('30/12/2025 19:01:35');
    expect(formatDateTime('2025-12-30T19:01:35-03:00', false)).toBe('30/12/2025 19:01');
    expect(formatDate('2025-12-30')).toBe('30/12/2025');
    expect(formatDateTime('garbage')).toBeNull();
  });

  it('masks CNPJ (numeric and alphanumeric), CPF, CEP and phones', () => {
    expect(formatCnpj('11905971000105')).toBe('11.905.971/0001-05');
    expect(formatCnpj('12ABC34501DE35')).toBe('12.ABC.345/01DE-35');
    expect(formatCpf('12345678909')).toBe('123.456.789-09');
    expect(formatCep('23095072')).toBe('23095-072');
    expect(formatPhone('2135933387')).toBe('(21) 3593-3387');
    expect(formatPhone('11987654321')).toBe('(11) 98765-4321');
    expect(formatPhone('+351 21 000 0000')).toBe('+351 21 000 0000');
  });
});

describe('DANFSe view model', () => {
  it('validates the access key check digit (modulo 11)', () => {
    expect(accessKeyCheckDigit(KEY.slice(0, 49))).toBe(9);
    expect(isValidAccessKey(KEY)).toBe(true);
    expect(isValidAccessKey(`${KEY.slice(0, 49)}0`)).toBe(false);
    expect(isValidAccessKey(KEY.slice(1))).toBe(false);
  });

  it('reads the real sample into display values', () => {
    const result = buildDanfseModel(sampleXml());
    if (!result.ok) throw new Error(result.message);
    const m = result.model;
    expect(m.chaveAcesso).toBe(KEY);
    expect(m.numero).toBe('146');
    expect(m.tpAmb).toBe('2');
    expect(m.tipoAmbiente).toBe('Homologação');
    expect(m.ambienteGerador).toBe('Sistema Nacional NFS-e');
    expect(m.municipioEmissor).toBe('Rio de Janeiro - RJ');
    expect(m.competencia).toBe('30/12/2025');
    expect(m.dataHoraEmissao).toBe('30/12/2025 19:01:35');
    expect([m.dpsNumero, m.dpsSerie, m.dpsDataHora]).toEqual(['6', '333', '30/12/2025 19:00:06']);
    expect(m.emitente).toBe('Prestador do serviço');
    expect(m.situacao).toBe('NFS-e Gerada');
    expect(asCancelled(m).situacao).toBe('NFS-e Cancelada');
    expect(m.finalidade).toBe('NFS-e regular');
    expect(m.processadaEm.toISOString()).toBe('2025-12-30T22:01:35.000Z');
    expect(m.qrCodeUrl).toBe(QR_URL);
    expect(CONSULTA_PUBLICA_URL + KEY).toBe(QR_URL);

    // Provider: registry name/address from `emit`, declared phone/e-mail from the DPS.
    expect(m.prestador.nome).toBe('GUIDI SISTEMAS E SERVICOS EM TECNOLOGIA DA INFORMACAO LTDA');
    expect(m.prestador.documentoLabel).toBe('CNPJ');
    expect(m.prestador.documento).toBe('11.905.971/0001-05');
    expect(m.prestador.endereco).toBe('GUANDU DO SAPE, 01450, CAMPO GRANDE');
    expect(m.prestador.municipio).toBe('Rio de Janeiro - RJ');
    expect(m.prestador.cep).toBe('23095-072');
    expect(m.prestador.telefone).toBe('(31) 3233-2300');
    expect(m.prestador.simplesNacional).toBe('Optante - ME/EPP');

    expect(m.tomador?.nome).toBe('MXM & JETTAX');
    expect(m.tomador?.documento).toBe('39.847.728/0001-99');
    expect(m.tomador?.municipio).toBe('Niterói - RJ');
    expect(m.tomador?.cep).toBe('24020-077');
    expect(m.destinatario).toEqual({ kind: 'tomador' });
    expect(m.intermediario).toBeNull();

    expect(m.servico.codigoTributacaoNacional).toBe('01.01.01 - Análise e desenvolvimento de sistemas.');
    expect(m.servico.codigoNbs.startsWith('1.1502.10.00 - ')).toBe(true);
    expect(m.servico.descricao).toBe('Analise e desenvolvimento de sistemas (MXM)');

    expect(m.issqn).toMatchObject({
      tributacao: 'Operação tributável',
      municipioIncidencia: 'Rio de Janeiro - RJ',
      baseCalculo: 'R$ 10.000,00',
      aliquota: '5,00%',
      retencao: 'Não retido',
      issqnApurado: 'R$ 500,00',
      suspensao: 'Não',
    });
    expect(m.federal).toMatchObject({ irrf: 'R$ 150,00', csll: 'R$ 465,00', pis: 'R$ 0,00', cofins: 'R$ 760,00' });
    expect(m.ibsCbs).toMatchObject({
      cstClassTrib: '000 / 000001',
      indicadorOperacao: '100301',
      localidadeIncidencia: 'Niterói - RJ (3303302)',
      baseCalculo: 'R$ 8.740,00',
      aliquotaIbsUf: '0,10%',
      valorIbsUf: 'R$ 8,74',
      valorIbs: 'R$ 8,74',
      aliquotaCbs: '0,90%',
      valorCbs: 'R$ 78,66',
    });
    expect(m.totais).toEqual({
      valorServico: 'R$ 10.000,00',
      descontoIncondicionado: '-',
      descontoCondicionado: '-',
      totalRetencoes: 'R$ 615,00',
      valorLiquido: 'R$ 9.385,00',
      totalIbsCbs: 'R$ 87,40',
      valorLiquidoMaisIbsCbs: 'R$ 9.385,00',
    });
    expect(m.tributosAproximados).toBe(
      'Totais aproximados dos tributos cfe. Lei nº 12.741/2012: Federais: R$ 760,00; Estaduais: R$ 0,00; Municipais: R$ 500,00',
    );
    expect(m.informacoesComplementares).toBe('');
  });

  it('reads optional parties, foreign addresses and complementary information', () => {
    const result = buildDanfseModel(crowdedXml());
    if (!result.ok) throw new Error(result.message);
    const m = result.model;
    expect(m.tomador).toBeNull();
    expect(m.destinatario.kind).toBe('party');
    if (m.destinatario.kind === 'party') {
      expect(m.destinatario.party.nome).toBe('DESTINATÁRIO FINAL S.A.');
      expect(m.destinatario.party.municipio).toBe('São Paulo - SP');
      expect(m.destinatario.party.telefone).toBe('(11) 98765-4321');
    }
    expect(m.intermediario?.documentoLabel).toBe('CPF');
    expect(m.intermediario?.documento).toBe('123.456.789-09');
    // countries print by name (Anexo A), not by ISO code
    expect(m.intermediario?.municipio).toBe('Lisboa - Lisboa (Portugal)');
    expect(m.intermediario?.cep).toBe('1000-001');
    expect(
      m.informacoesComplementares.startsWith('Documento de referência: CONTRATO 2025/123 | Pedido: PO-998877 | '),
    ).toBe(true);
    expect(m.informacoesComplementares).toContain('Informação complementar extensa');
    expect(m.informacoesComplementares.length).toBe(2000);
    expect(m.informacoesComplementares.endsWith('...')).toBe(true);
  });

  it('uses the fixed sentences for a missing taker and for operations outside ISSQN', () => {
    const xml = sampleXml()
      .replace(/<toma>[\s\S]*?<\/toma>/, '')
      .replace('<cTribNac>010101</cTribNac>', '<cTribNac>990101</cTribNac>');
    const result = buildDanfseModel(xml);
    if (!result.ok) throw new Error(result.message);
    expect(result.model.tomador).toBeNull();
    expect(result.model.destinatario).toEqual({ kind: 'nao-identificado' });
    expect(result.model.issqn).toBeNull();
  });

  it('totals a note without the IBS/CBS group at its net value', () => {
    const result = buildDanfseModel(sampleXml().replace(/<IBSCBS>[\s\S]*?<\/IBSCBS>/g, ''));
    if (!result.ok) throw new Error(result.message);
    expect(result.model.ibsCbs).toBeNull();
    expect(result.model.totais.totalIbsCbs).toBe('-');
    expect(result.model.totais.valorLiquidoMaisIbsCbs).toBe('R$ 9.385,00');
    expect(result.model.finalidade).toBe('NFS-e regular');
  });

  it('rejects unparsable XML and documents that are not an NFS-e', () => {
    for (const xml of ['', 'not xml at all', sampleXml().slice(0, 1500), '<NFSe><infNFSe']) {
      const result = buildDanfseModel(xml);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.code).toBe('DANFSE_INVALID_XML');
    }
    const dps = buildDanfseModel('<DPS xmlns="http://www.sped.fazenda.gov.br/nfse"><infDPS Id="x"/></DPS>');
    expect(dps).toMatchObject({ ok: false, code: 'DANFSE_INVALID_XML' });
  });

  it('reports missing key, number or provider as DANFSE_MISSING_DATA', () => {
    const xml = sampleXml();
    const cases: Array<[string, string]> = [
      [xml.replace(`Id="NFS${KEY}"`, ''), 'access key'],
      [xml.replace(`Id="NFS${KEY}"`, `Id="NFS${KEY.slice(0, 49)}0"`), 'invalid access key'],
      [xml.replace('<nNFSe>146</nNFSe>', ''), 'nNFSe'],
      [xml.replace(/<emit>[\s\S]*?<\/emit>/, '').replace(/<prest>[\s\S]*?<\/prest>/, ''), 'provider'],
    ];
    for (const [variant, hint] of cases) {
      const result = buildDanfseModel(variant);
      expect(result.ok, hint).toBe(false);
      if (!result.ok) {
        expect(result.code).toBe('DANFSE_MISSING_DATA');
        expect(result.message).toContain(hint);
      }
    }
  });
});

describe('renderDanfse', () => {
  it('returns the error codes instead of throwing', async () => {
    expect(await renderDanfse({ nfseXml: '<NFSe><infNFSe' })).toMatchObject({ ok: false, code: 'DANFSE_INVALID_XML' });
    expect(await renderDanfse({ nfseXml: sampleXml().replace('<nNFSe>146</nNFSe>', '') })).toMatchObject({
      ok: false,
      code: 'DANFSE_MISSING_DATA',
    });
  });

  it('renders the homologation sample: one A4 page with key, parties, pt-BR values and the warning', async () => {
    const { pdf, path } = await render({ nfseXml: sampleXml() });
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    if (tools.pdfinfo) {
      const info = pdfInfo(path);
      expect(info.Pages).toBe('1');
      expect(info['Page size']).toMatch(/^595\.2\d x 841\.8\d pts \(A4\)/);
    }
    if (!tools.pdftotext) return;
    const text = pdfText(path);
    for (const expected of [
      'DANFSe v2.0',
      'Documento Auxiliar da NFS-e',
      KEY,
      'Rio de Janeiro - RJ',
      'GUIDI SISTEMAS E SERVICOS EM TECNOLOGIA DA INFORMACAO LTDA',
      '11.905.971/0001-05',
      'MXM & JETTAX',
      '39.847.728/0001-99',
      'Niterói - RJ',
      'PRESTADOR / FORNECEDOR',
      'TOMADOR / ADQUIRENTE',
      'TRIBUTAÇÃO MUNICIPAL (ISSQN)',
      'TRIBUTAÇÃO FEDERAL (EXCETO CBS)',
      'TRIBUTAÇÃO IBS / CBS',
      'VALOR TOTAL DA NFS-E',
      'INFORMAÇÕES COMPLEMENTARES',
      EMPTY_TEXTS.destinatarioTomador,
      EMPTY_TEXTS.intermediario,
      'R$ 10.000,00',
      'R$ 9.385,00',
      'R$ 500,00',
      'R$ 78,66',
      '30/12/2025 19:01:35',
      'NFS-e SEM VALIDADE JURÍDICA',
      'Lei nº 12.741/2012',
      'A autenticidade desta NFS-e pode ser',
    ]) {
      expect(text, expected).toContain(expected);
    }
    expect(text).not.toContain('CANCELADA');
    // Blocks come in the order of the layout.
    const order = [
      'CHAVE DE ACESSO',
      'PRESTADOR / FORNECEDOR',
      'TOMADOR / ADQUIRENTE',
      'DESTINATÁRIO DA OPERAÇÃO',
      'INTERMEDIÁRIO DA OPERAÇÃO',
      'SERVIÇO PRESTADO',
      'TRIBUTAÇÃO MUNICIPAL (ISSQN)',
      'TRIBUTAÇÃO FEDERAL (EXCETO CBS)',
      'TRIBUTAÇÃO IBS / CBS',
      'VALOR TOTAL DA NFS-E',
      'INFORMAÇÕES COMPLEMENTARES',
    ].map((title) => text.indexOf(title));
    expect(order.every((pos, i) => pos >= 0 && (i === 0 || pos > order[i - 1]))).toBe(true);
  });

  it('prints no homologation warning for a production note', async () => {
    const { path } = await render({ nfseXml: production(sampleXml()) });
    if (!tools.pdftotext) return;
    const text = pdfText(path);
    expect(text).toContain(KEY);
    expect(text).toContain('Tipo de ambiente: Produção');
    expect(text).not.toContain('SEM VALIDADE JURÍDICA');
  });

  it.skipIf(!tools.pdftoppm || !tools.zbarimg)(
    'draws a QR code that decodes to the public consultation URL',
    async () => {
      const { path } = await render({ nfseXml: production(sampleXml()) });
      expect(decodeQr(path)).toBe(QR_URL);
    },
  );

  it('marks a cancelled note: header line and a diagonal grey CANCELADA watermark', async () => {
    const plain = await render({ nfseXml: production(sampleXml()) });
    const cancelled = await render({
      nfseXml: production(sampleXml()),
      cancelled: { at: new Date('2026-01-05T13:00:00Z') },
    });
    if (tools.pdfinfo) expect(pdfInfo(cancelled.path).Pages).toBe('1');
    if (tools.pdftotext) {
      const text = pdfText(cancelled.path);
      expect(text).toContain('NFS-e CANCELADA em 05/01/2026 10:00');
      expect(text).toContain('CANCELADA');
      // the situation field says it too (the NFS-e's cStat 100 no longer describes the note)
      expect(text).toContain('NFS-e Cancelada');
      expect(text).not.toContain('NFS-e Gerada');
      expect(pdfText(plain.path)).toContain('NFS-e Gerada');
      expect(text).toContain(KEY);
    }
    if (tools.pdftoppm) {
      // The watermark's grey letters darken a sizeable part of the page; everything else is identical.
      const plainPixels = greyPixels(plain.path);
      const cancelledPixels = greyPixels(cancelled.path);
      expect(darkenedShare(plainPixels, cancelledPixels)).toBeGreaterThan(0.03);
      expect(darkenedShare(cancelledPixels, plainPixels)).toBeLessThan(0.01);
    }
    if (tools.pdftoppm && tools.zbarimg) expect(decodeQr(cancelled.path)).toBe(QR_URL);
  });

  it('draws the logo for the logo templates, in portrait and in landscape', async () => {
    const logo = { data: makePng(120, 40), mimeType: 'image/png' };
    const portrait = await render({ nfseXml: sampleXml(), template: 'retrato_logo', logo });
    const landscape = await render({ nfseXml: sampleXml(), template: 'paisagem_logo', logo });
    const standard = await render({ nfseXml: sampleXml(), template: 'padrao', logo });
    expect(portrait.pdf.includes('/Subtype /Image')).toBe(true);
    expect(landscape.pdf.includes('/Subtype /Image')).toBe(true);
    expect(standard.pdf.includes('/Subtype /Image')).toBe(false);
    if (tools.pdfinfo) {
      const info = pdfInfo(landscape.path);
      expect(info.Pages).toBe('1');
      expect(info['Page size']).toMatch(/^841\.8\d x 595\.2\d pts \(A4\)/);
    }
    if (tools.pdftotext) {
      const text = pdfText(landscape.path);
      expect(text).toContain(KEY);
      expect(text).toContain('R$ 9.385,00');
    }
    if (tools.pdftoppm && tools.zbarimg) expect(decodeQr(landscape.path)).toBe(QR_URL);
  });

  it('leaves out a WebP (or corrupt) logo and keeps the layout', async () => {
    const webp = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1'), Buffer.alloc(24)]);
    for (const logo of [
      { data: webp, mimeType: 'image/webp' },
      { data: webp, mimeType: 'image/png' },
      { data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]), mimeType: 'image/png' },
    ]) {
      const { pdf, path } = await render({ nfseXml: sampleXml(), template: 'retrato_logo', logo });
      expect(pdf.includes('/Subtype /Image')).toBe(false);
      if (tools.pdftotext) expect(pdfText(path)).toContain(KEY);
    }
  });

  it('keeps a crowded note on one page, with the Lei 12.741 line intact', async () => {
    for (const template of ['padrao', 'paisagem_logo'] as const) {
      const { path } = await render({ nfseXml: crowdedXml(), template });
      if (tools.pdfinfo) expect(pdfInfo(path).Pages, template).toBe('1');
      if (tools.pdftotext) {
        const text = pdfText(path).replace(/\s+/g, ' ');
        expect(text).toContain(KEY);
        expect(text).toContain('JOSÉ DA SILVA');
        expect(text).toContain('DESTINATÁRIO FINAL S.A.');
        expect(text).toContain(EMPTY_TEXTS.tomador);
        expect(text).toContain('Documento de referência: CONTRATO 2025/123');
        expect(text).toContain('Federais: R$ 760,00; Estaduais: R$ 0,00; Municipais: R$ 500,00');
        expect(text).toContain('…');
      }
      if (tools.pdftoppm && tools.zbarimg) expect(decodeQr(path)).toBe(QR_URL);
    }
  });

  it('is deterministic: the same XML gives the same bytes, dated from dhProc', async () => {
    const a = await render({ nfseXml: sampleXml(), cancelled: { at: new Date('2026-01-05T13:00:00Z') } });
    const b = await render({ nfseXml: sampleXml(), cancelled: { at: new Date('2026-01-05T13:00:00Z') } });
    expect(a.pdf.equals(b.pdf)).toBe(true);
    if (tools.pdfinfo) expect(pdfInfo(a.path).CreationDate).toMatch(/Dec 30 \d\d:01:35 2025/);
  });
});
