/**
 * DANFSe rendering speed: `npx tsx bench/danfse.ts [runs]`. Renders the official sample NFS-e (portrait, then
 * landscape with logo and the CANCELADA watermark) in the same run with: the service's renderer (`new`: our PDF
 * writer, pdf-canvas.ts), the same layout drawn through pdfkit with a per-document font subset (`pdfkit`: the
 * fallback for text outside WinAnsi), and the previous renderer (`old`: pdfkit subsetting DejaVu per document, kept
 * in test/support/legacy-danfse-render.ts). Prints PDFs per second of one core and CPU milliseconds per PDF (the
 * loop is synchronous CPU work on one thread).
 */
import { readFileSync } from 'node:fs';
import QRCode from 'qrcode';
import { buildDanfseModel } from '../src/documents/danfse/model.ts';
import { qrModules } from '../src/documents/danfse/qr.ts';
import { type RenderDanfseInput, renderDanfse, renderDanfseWithPdfkit } from '../src/documents/danfse/render.ts';
import { tinyJpeg } from '../test/support/images.ts';
import { renderDanfseLegacy } from '../test/support/legacy-danfse-render.ts';

const SAMPLE = new URL(
  '../test/fixtures/national/ExemploPisZeradoCofinsSobreFaturamentoPreenchido.xml',
  import.meta.url,
).pathname;

function loadSample(): string {
  // The published sample has one raw `&` in a name; escape it so the XML is well-formed.
  return readFileSync(process.env.DANFSE_SAMPLE ?? SAMPLE, 'utf8').replace(/&(?!amp;|lt;|gt;|quot;|apos;|#)/g, '&amp;');
}

async function main() {
  const runs = Number(process.argv[2] ?? 200);
  const nfseXml = loadSample();
  const logo = { data: tinyJpeg(), mimeType: 'image/jpeg' };
  const cases: Array<{ name: string; input: RenderDanfseInput }> = [
    { name: 'padrao (portrait)', input: { nfseXml } },
    {
      name: 'paisagem_logo (landscape), logo, cancelled',
      input: { nfseXml, template: 'paisagem_logo', logo, cancelled: { at: new Date() } },
    },
  ];
  const renderers = [
    { name: 'new', render: renderDanfse },
    { name: 'pdfkit', render: renderDanfseWithPdfkit },
    { name: 'old', render: renderDanfseLegacy },
  ];
  await parts(nfseXml, 5 * runs);
  for (const c of cases) {
    const results = renderers.map(({ name, render }) => ({
      name,
      render: () => render(c.input),
      batches: [] as number[],
      bytes: 0,
    }));
    for (const r of results) {
      // Steady state of a long-running process (at least 50 renders and 1 s): fonts prepared, code optimised by
      // the JIT, caches filled.
      const until = performance.now() + 1000;
      for (let i = 0; i < 50 || performance.now() < until; i++) {
        const warm = await r.render();
        if (!warm.ok) throw new Error(warm.message);
        r.bytes = warm.pdf.length;
      }
      // One renderer at a time: another's garbage would be collected on this one's time.
      for (let done = 0; done < runs; done += BATCH)
        r.batches.push(await cpuPerPdf(r.render, Math.min(BATCH, runs - done)));
    }
    for (const r of results) {
      const sorted = [...r.batches].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)];
      console.log(
        `${r.name} ${c.name}: ${(1000 / median).toFixed(0)} PDFs/s per core (${median.toFixed(2)} ms CPU/PDF, median ` +
          `of ${sorted.length} batches of ${BATCH}; best batch ${sorted[0].toFixed(2)} ms = ` +
          `${(1000 / sorted[0]).toFixed(0)} PDFs/s); ${r.bytes} bytes`,
      );
    }
  }
}

const BATCH = 20;

/** Two parts of every renderer's time that are not PDF writing: reading the XML, and encoding the QR code. */
async function parts(nfseXml: string, runs: number) {
  const built = buildDanfseModel(nfseXml);
  if (!built.ok) throw new Error(built.message);
  const url = built.model.qrCodeUrl;
  const steps: Array<[string, () => unknown]> = [
    ['  of which the model (XML parse)', () => buildDanfseModel(nfseXml)],
    ['  of which the QR code (qr.ts, new)', () => qrModules(url)],
    ['  of which the QR code (QRCode.create, pdfkit and old)', () => QRCode.create(url, { errorCorrectionLevel: 'M' })],
  ];
  for (const [name, step] of steps) {
    for (let i = 0; i < 500; i++) step();
    const ms = await cpuPerPdf(async () => {
      step();
      return { ok: true as const };
    }, runs);
    console.log(`${name}: ${ms.toFixed(2)} ms CPU per document`);
  }
}

/**
 * CPU milliseconds per PDF over a batch. CPU time, not wall time: the box is shared, and a PDF is CPU work on this
 * thread (the promise resolves without I/O; GC threads included).
 */
async function cpuPerPdf(render: () => Promise<{ ok: true } | { ok: false; message: string }>, n: number) {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const r = await render();
    if (!r.ok) throw new Error(r.message);
  }
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000 / n;
}

await main();
