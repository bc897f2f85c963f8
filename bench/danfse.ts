/**
 * DANFSe rendering speed: `npx tsx bench/danfse.ts [runs]`. Renders the official sample NFS-e (portrait, then
 * landscape with the CANCELADA watermark) and prints milliseconds per PDF.
 */
import { readFileSync } from 'node:fs';
import { renderDanfse } from '../src/documents/danfse/render.ts';

const SAMPLE = new URL(
  '../test/fixtures/national/ExemploPisZeradoCofinsSobreFaturamentoPreenchido.xml',
  import.meta.url,
).pathname;

function loadSample(): string {
  // The published sample has one raw `&` in a name; escape it so the XML is well-formed.
  return readFileSync(process.env.DANFSE_SAMPLE ?? SAMPLE, 'utf8').replace(/&(?!amp;|lt;|gt;|quot;|apos;|#)/g, '&amp;');
}

async function main() {
  const runs = Number(process.argv[2] ?? 30);
  const nfseXml = loadSample();
  const cases = [
    { name: 'padrao (portrait)', input: { nfseXml } },
    {
      name: 'paisagem_logo (landscape), cancelled',
      input: { nfseXml, template: 'paisagem_logo' as const, cancelled: { at: new Date() } },
    },
  ];
  for (const c of cases) {
    const warm = await renderDanfse(c.input);
    if (!warm.ok) throw new Error(warm.message);
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const r = await renderDanfse(c.input);
      times.push(performance.now() - t0);
      if (!r.ok) throw new Error(r.message);
    }
    times.sort((a, b) => a - b);
    const mean = times.reduce((s, t) => s + t, 0) / times.length;
    const median = times[Math.floor(times.length / 2)];
    console.log(
      `${c.name}: ${(1000 / mean).toFixed(1)} PDFs/s (one core), ${mean.toFixed(1)} ms/PDF mean, ${median.toFixed(1)} median, ` +
        `[${times[0].toFixed(1)}–${times[times.length - 1].toFixed(1)}] over ${runs} runs, ${warm.pdf.length} bytes`,
    );
  }
}

await main();
