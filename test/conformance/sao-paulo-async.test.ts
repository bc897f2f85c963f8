import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { asyncUrlOf, saoPauloAsyncFamily } from '../../src/engines/sao-paulo/family.ts';
import { createSaoPauloService, saoPauloSandbox } from '../../src/sandbox/sao-paulo/service.ts';
import { normalized, startMunicipalSandbox } from './soap-string-support.ts';
import { SAO_PAULO_PROJECT, saoPauloConformance } from './sao-paulo-target.ts';
import { describeConformance } from './suite.ts';

/**
 * São Paulo's asynchronous flow (§1.6, `lotenfeasync.asmx`): the whole conformance suite in the `async` emission
 * mode (pending → polled → issued; the rejection 306 comes back from the processed lote), and, with a sandbox whose
 * lotes wait before being processed, the lote state machine and the answer lost after the city committed: the
 * protocol is never seen, reconciliation by ConsultaNFe finds the note, and no second lote is ever sent.
 */
const project = SAO_PAULO_PROJECT;

describeConformance(saoPauloConformance(saoPauloAsyncFamily));

describe('São Paulo async: the lote state machine and a lost answer', () => {
  it('derives lotenfeasync.asmx beside lotenfe.asmx (§1.2), or under a sandbox mount', () => {
    expect(asyncUrlOf('https://nfews.prefeitura.sp.gov.br/lotenfe.asmx')).toBe(
      'https://nfews.prefeitura.sp.gov.br/lotenfeasync.asmx',
    );
    expect(asyncUrlOf('https://127.0.0.1:9/municipal/isssaopaulo/producao')).toBe(
      'https://127.0.0.1:9/municipal/isssaopaulo/producao/lotenfeasync.asmx',
    );
  });

  it('keeps a waiting lote pending, polls it to issued, and never sends a second lote (protocol known, or answer lost)', async () => {
    const log: string[] = [];
    const DELAY = 400;
    const delayed = {
      ...saoPauloSandbox,
      create: (deps: Parameters<typeof createSaoPauloService>[0]) =>
        createSaoPauloService(
          { ...deps, logger: { info: (m: string) => log.push(m), warn: (m: string) => log.push(m) } },
          { processingDelayMs: DELAY },
        ),
    };
    const env = await startMunicipalSandbox(delayed, project);
    const http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
    try {
      const engine = createEngine(saoPauloAsyncFamily, {
        http,
        endpoints: env.endpoints,
        signatureAlgorithm: 'rsa-sha1',
        validateBeforeSend: true,
      });
      const connection = { certificate: env.certificate, ambiente: 1 as const, municipality: '3550308' };
      let numero = 900_000 + (Date.now() % 90_000);
      const prepare = () => {
        const prepared = engine.prepare({
          project,
          invoice: normalized(project),
          serie: project.serieNfse,
          number: ++numero,
          issuedAt: new Date(Date.now() - 60_000),
          certificate: env.certificate,
        });
        if (prepared.kind !== 'ok') throw new Error(JSON.stringify(prepared));
        return prepared.value;
      };
      const received = () => log.filter((m) => / received, protocol /.test(m)).length;
      const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

      // protocol known: pending while enviado/verificado, a failed poll stays pending (nothing resent), then issued
      const first = prepare();
      const sent = await engine.issue(first, connection);
      expect(sent.kind, JSON.stringify(sent)).toBe('pending');
      if (sent.kind !== 'pending') return;
      expect(sent.protocol).toMatch(/^[0-9A-F]{32}$/);
      expect(await engine.poll(sent.protocol, first, connection)).toEqual({ kind: 'pending', protocol: sent.protocol });
      await wait(DELAY + 50);
      await env.setFaults({ errorRate: 1 });
      const failed = await engine.poll(sent.protocol, first, connection);
      await env.setFaults({});
      expect(failed).toEqual({ kind: 'pending', protocol: sent.protocol });
      const polled = await engine.poll(sent.protocol, first, connection);
      expect(polled.kind, JSON.stringify(polled)).toBe('ok');
      if (polled.kind !== 'ok') return;
      expect(polled.value.numero).toMatch(/^\d+$/);
      expect(polled.value.protocol).toBe(sent.protocol);
      expect(received()).toBe(1);

      // the lote's answer lost after the city received it: unknown; once processed, reconciliation finds the note,
      // and an emission asked again answers that note from ConsultaNFe without sending a second lote
      const second = prepare();
      await env.setFaults({ commitThenDropRate: 1 });
      const lost = await engine.issue(second, connection);
      await env.setFaults({});
      expect(lost.kind, JSON.stringify(lost)).toBe('unknown');
      expect(received()).toBe(2);
      await wait(DELAY + 50);
      const found = await engine.reconcile(second, connection);
      expect(found.kind === 'ok' && found.value?.numero, JSON.stringify(found)).toMatch(/^\d+$/);
      const again = await engine.issue(second, connection);
      expect(again.kind, JSON.stringify(again)).toBe('ok');
      if (again.kind === 'ok' && found.kind === 'ok') expect(again.value.numero).toBe(found.value?.numero);
      expect(received()).toBe(2);
      expect(log.filter((m) => /NF-e \d+ issued/.test(m))).toHaveLength(2);
    } finally {
      await http.close();
      await env.close();
    }
  });
});
