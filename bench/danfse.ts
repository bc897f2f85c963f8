/**
 * DANFSe rendering speed: `npx tsx bench/danfse.ts [runs]`. Renders the official sample NFS-e (portrait, then
 * landscape with logo and the CANCELADA watermark) with the service's renderer and with the previous one (pdfkit
 * subsetting DejaVu per document, kept in test/support/legacy-danfse-render.ts), in the same run, and prints PDFs
 * per second of one core (the loop is synchronous CPU work on one thread: wall time is that core's time).
 */
import { readFileSync } from 'node:fs';
import { type RenderDanfseInput, renderDanfse } from '../src/documents/danfse/render.ts';
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
  const runs = Number(process.argv[2] ?? 100);
  const nfseXml = loadSample();
  const cases: Array<{ name: string; input: RenderDanfseInput }> = [
    { name: 'padrao (portrait)', input: { nfseXml } },
    {
      name: 'paisagem_logo (landscape), cancelled',
      input: { nfseXml, template: 'paisagem_logo', cancelled: { at: new Date() } },
    },
  ];
  const renderers = [
    { name: 'new', render: renderDanfse },
    { name: 'old', render: renderDanfseLegacy },
  ];
  for (const c of cases)
    for (const { name, render } of renderers) await measure(`${name} ${c.name}`, () => render(c.input), runs);
}

async function measure(
  name: string,
  render: () => Promise<{ ok: true; pdf: Buffer } | { ok: false; message: string }>,
  runs: number,
) {
  {
    // Steady state of a long-running process: fonts prepared, code optimised by the JIT, caches filled.
    let warm = await render();
    for (let i = 0; i < 30; i++) warm = await render();
    if (!warm.ok) throw new Error(warm.message);
    const times: number[] = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const r = await render();
      times.push(performance.now() - t0);
      if (!r.ok) throw new Error(r.message);
    }
    const cpu = process.cpuUsage(cpu0);
    // CPU time, not wall time: the box is shared, and a PDF is pure CPU work on this thread (GC threads included).
    const cpuMs = (cpu.user + cpu.system) / 1000 / runs;
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    console.log(
      `${name}: ${(1000 / cpuMs).toFixed(0)} PDFs/s per core (${cpuMs.toFixed(2)} ms CPU/PDF); wall ${median.toFixed(1)} ms ` +
        `median, ${times[0].toFixed(1)} best, over ${runs} runs; ${warm.pdf.length} bytes`,
    );
  }
}

await main();
