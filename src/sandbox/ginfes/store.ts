import { join } from 'node:path';
import { JsonlFile, replayJsonl } from '../kit/jsonl.ts';

/**
 * What the GINFES sandbox keeps: the lotes it received (by protocol) and the notes it issued (by RPS and by number),
 * appended to a JSONL file when the sandbox has a data directory and replayed at start.
 */
export type Ambiente = 1 | 2;

export interface Mensagem {
  codigo: string;
  mensagem: string;
  correcao?: string;
}

export interface Lote {
  env: Ambiente;
  protocolo: string;
  numeroLote: string;
  cnpj: string;
  receivedAt: string;
  /** the signed EnviarLoteRpsEnvio as received */
  xml: string;
  rpsKey: string;
  situacao: '2' | '3' | '4';
  mensagens: Mensagem[];
  numeroNfse?: string;
}

export interface Note {
  env: Ambiente;
  rpsKey: string;
  cnpj: string;
  numero: string;
  codigoVerificacao: string;
  /** the CompNfse's Nfse element text (signed by the sandbox) */
  nfseXml: string;
  cancelledAt?: string;
  cancelamentoXml?: string;
}

type Line = { lote: Lote } | { note: Note };

export const rpsKeyOf = (env: Ambiente, cnpj: string, numero: string, serie: string, tipo: string) =>
  `${env}:${cnpj}:${Number(numero)}:${serie}:${tipo}`;

export class GinfesStore {
  private readonly lotes = new Map<string, Lote>();
  private readonly notes = new Map<string, Note>();
  private readonly file: JsonlFile<Line> | null;

  constructor(dataDir: string | null, warn: (message: string) => void) {
    const path = dataDir ? join(dataDir, 'ginfes', 'store.jsonl') : null;
    this.file = path ? new JsonlFile<Line>(path) : null;
    if (path) replayJsonl<Line>(path, (line) => this.apply(line), warn);
  }

  private apply(line: Line): void {
    if ('lote' in line) this.lotes.set(line.lote.protocolo, line.lote);
    else this.notes.set(line.note.rpsKey, line.note);
  }

  private write(line: Line): void {
    this.apply(line);
    this.file?.append(line);
  }

  saveLote(lote: Lote): void {
    this.write({ lote: { ...lote } });
  }

  saveNote(note: Note): void {
    this.write({ note: { ...note } });
  }

  lote(protocolo: string): Lote | undefined {
    return this.lotes.get(protocolo);
  }

  allLotes(): Lote[] {
    return [...this.lotes.values()];
  }

  /** A lote that holds this RPS and was not refused (received or processed with success). */
  liveLoteOf(rpsKey: string): Lote | undefined {
    return this.allLotes().find((l) => l.rpsKey === rpsKey && l.situacao !== '3');
  }

  noteByRps(rpsKey: string): Note | undefined {
    return this.notes.get(rpsKey);
  }

  noteByNumber(env: Ambiente, cnpj: string, numero: string): Note | undefined {
    return [...this.notes.values()].find(
      (n) => n.env === env && n.cnpj === cnpj && n.numero === String(Number(numero)),
    );
  }

  nextNumber(env: Ambiente, cnpj: string): string {
    const used = [...this.notes.values()].filter((n) => n.env === env && n.cnpj === cnpj).length;
    return String(used + 1);
  }
}
