import { randomUUID, type X509Certificate } from 'node:crypto';
import type { MunicipalSandboxDependencies } from '../municipal.ts';

/**
 * The lotes of São Paulo's asynchronous service (`lotenfeasync.asmx`, briefs/providers-own.md §1.6) and their state
 * machine (`tpSituacaoLote`, TiposNFeAsync_v02.xsd): a lote received answers a 32-character protocol and is
 * `enviado` (0); it is `verificado` (2) from half its processing delay, and processed once the delay is over — by
 * the first request that reaches the service after it (`settle`, before every operation, so a ConsultaNFe sees
 * what a situation query would): `processado` (3) with its `RetornoEnvioLoteRPS`, or `invalidado` (1).
 */
export interface ReceivedLote {
  protocolo: string;
  numero: number;
  env: string;
  xml: string;
  certificate: X509Certificate;
  prestador: string;
  remetente: string;
  receivedAt: string;
  receivedMs: number;
  /** the RetornoEnvioLoteRPS once processed */
  resultado: string | null;
  processedAt: string | null;
}

export interface LoteQueueOptions {
  now: () => Date;
  processingDelayMs: number;
  logger: MunicipalSandboxDependencies['logger'];
  process(lote: ReceivedLote): string;
}

export const SITUACOES = { enviado: 0, invalidado: 1, verificado: 2, processado: 3 } as const;

export function createLoteQueue(options: LoteQueueOptions) {
  const lotes = new Map<string, ReceivedLote>(); // protocolo → lote
  let numero = 0;
  const stamp = () => options.now().toISOString().slice(0, 19);

  return {
    receive(input: Pick<ReceivedLote, 'env' | 'xml' | 'certificate' | 'prestador' | 'remetente'>): ReceivedLote {
      const lote: ReceivedLote = {
        ...input,
        protocolo: randomUUID().replace(/-/g, '').toUpperCase(),
        numero: ++numero,
        receivedAt: stamp(),
        receivedMs: options.now().getTime(),
        resultado: null,
        processedAt: null,
      };
      lotes.set(lote.protocolo, lote);
      options.logger.info(`sandbox São Paulo: lote ${lote.numero} received, protocol ${lote.protocolo}`);
      return lote;
    },
    /** Processes, in order of arrival, every lote whose delay is over. */
    settle(): void {
      const now = options.now().getTime();
      for (const lote of lotes.values()) {
        if (lote.resultado !== null || now - lote.receivedMs < options.processingDelayMs) continue;
        lote.resultado = options.process(lote);
        lote.processedAt = stamp();
        options.logger.info(`sandbox São Paulo: lote ${lote.numero} processed`);
      }
    },
    situacao(protocolo: string): { lote: ReceivedLote; situacao: keyof typeof SITUACOES } | null {
      const lote = lotes.get(protocolo);
      if (!lote) return null;
      if (lote.resultado !== null) return { lote, situacao: 'processado' };
      const age = options.now().getTime() - lote.receivedMs;
      return { lote, situacao: age * 2 >= options.processingDelayMs ? 'verificado' : 'enviado' };
    },
  };
}

/** The XML text of each `RPS` of a lote, in order (what a note keeps of its RPS). */
export function rpsTexts(xml: string): string[] {
  const out: string[] = [];
  let from = xml.indexOf('<RPS');
  while (from >= 0) {
    const end = xml.indexOf('</RPS>', from);
    if (end < 0) break;
    out.push(xml.slice(from, end + '</RPS>'.length));
    from = xml.indexOf('<RPS', end);
  }
  return out;
}
