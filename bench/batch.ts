/**
 * Wall time of a batch of 100 invoices on the embedded defaults (PGlite, the in-process Sefin sandbox, local
 * document storage, one process with the API and the workers): POST /emitir/batch → every item issued → every
 * DANFSe stored. With DATABASE_URL set the same runs on PostgreSQL.
 *
 *   npx tsx bench/batch.ts [runs]
 */
import { startTestService } from '../test/support/harness.ts';
import { invoiceBody, onboardProject } from '../test/support/onboarding.ts';

const RUNS = Number(process.argv[2] ?? 3);
const SIZE = 100;

const taker = {
  cnpj: '11444777000161',
  nome: 'Cliente Tomador SA',
  endereco: {
    logradouro: 'Avenida Paulista',
    numero: '1000',
    bairro: 'Bela Vista',
    cidade: 'São Paulo',
    uf: 'SP',
    cep: '01310100',
  },
};

async function main() {
  const t = await startTestService();
  try {
    const p = await onboardProject(t, { rateLimitPerMinute: 1_000_000 });
    const items = Array.from({ length: SIZE }, (_, i) => invoiceBody({ tomador: taker, referencia: `bench-${i}` }));
    console.log(`batch of ${SIZE} on ${t.databaseUrl ? 'PostgreSQL' : 'PGlite (embedded)'}, ${RUNS} runs`);
    for (let run = 1; run <= RUNS; run++) {
      const t0 = performance.now();
      const res = await t.request('POST', '/emitir/batch', { key: p.apiKey, body: { items } });
      if (res.status !== 202) throw new Error(`POST /emitir/batch: ${res.status} ${res.text}`);
      const accepted = performance.now() - t0;
      let issuedAt = 0;
      for (;;) {
        const view = (await t.request('GET', `/invoices/batch/${res.body.batchId}/status`, { key: p.apiKey })).body;
        if (!issuedAt && view.status !== 'processing') {
          issuedAt = performance.now() - t0;
          if (view.issued !== SIZE) throw new Error(`only ${view.issued} of ${SIZE} issued: ${JSON.stringify(view)}`);
        }
        if (issuedAt && view.items.every((i: { pdfUrl?: string | null }) => !!i.pdfUrl)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const documentsAt = performance.now() - t0;
      console.log(
        `run ${run}: accepted (202) in ${accepted.toFixed(0)} ms; all ${SIZE} issued after ${(issuedAt / 1000).toFixed(2)} s ` +
          `(${((SIZE * 1000) / issuedAt).toFixed(1)} invoices/s); all PDFs stored after ${(documentsAt / 1000).toFixed(2)} s`,
      );
    }
  } finally {
    await t.close();
  }
}

await main();
