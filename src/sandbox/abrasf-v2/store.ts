import { JsonlFile } from '../kit/jsonl.ts';

/**
 * What an ABRASF sandbox issued, per environment: each NFS-e with its RPS identification, kept for the queries and
 * the cancellation, replayed from `<dataDir>/<family>/store.jsonl` when a data directory is given.
 */
export type Ambiente = 1 | 2;

export interface IssuedNfse {
  env: Ambiente;
  numero: string;
  codigoVerificacao: string;
  /** CNPJ/CPF of the prestador (digits) */
  prestador: string;
  rpsNumero: string;
  rpsSerie: string;
  rpsTipo: string;
  dataEmissao: string;
  /** the signed `<Nfse>` text */
  nfseXml: string;
  cancelamento?: { dataHora: string; xml: string };
}

type Line =
  | { type: 'nfse'; nfse: IssuedNfse }
  | { type: 'cancel'; env: Ambiente; prestador: string; numero: string; dataHora: string; xml: string };

export class AbrasfStore {
  private readonly notes = new Map<string, IssuedNfse>();
  private readonly byRps = new Map<string, IssuedNfse>();
  private readonly last = new Map<string, number>();
  private readonly file: JsonlFile<Line> | null;

  constructor(file: string | null, warn: (message: string) => void) {
    this.file = file ? new JsonlFile<Line>(file) : null;
    this.file?.replay((line) => this.apply(line), warn);
  }

  private static noteKey = (env: Ambiente, prestador: string, numero: string) =>
    `${env}:${prestador}:${Number(numero)}`;
  static rpsKey = (env: Ambiente, prestador: string, numero: string, serie: string, tipo: string) =>
    `${env}:${prestador}:${Number(numero)}:${serie.trim()}:${tipo}`;

  private apply(line: Line): void {
    if (line.type === 'nfse') {
      const n = line.nfse;
      this.notes.set(AbrasfStore.noteKey(n.env, n.prestador, n.numero), n);
      this.byRps.set(AbrasfStore.rpsKey(n.env, n.prestador, n.rpsNumero, n.rpsSerie, n.rpsTipo), n);
      const counter = `${n.env}:${n.prestador}`;
      this.last.set(counter, Math.max(this.last.get(counter) ?? 0, Number(n.numero)));
    } else {
      const n = this.notes.get(AbrasfStore.noteKey(line.env, line.prestador, line.numero));
      if (n) n.cancelamento = { dataHora: line.dataHora, xml: line.xml };
    }
  }

  private write(line: Line): void {
    this.apply(line);
    this.file?.append(line);
  }

  nextNumber(env: Ambiente, prestador: string): string {
    return String((this.last.get(`${env}:${prestador}`) ?? 0) + 1);
  }

  add(nfse: IssuedNfse): void {
    this.write({ type: 'nfse', nfse });
  }

  cancel(env: Ambiente, prestador: string, numero: string, dataHora: string, xml: string): void {
    this.write({ type: 'cancel', env, prestador, numero, dataHora, xml });
  }

  find(env: Ambiente, prestador: string, numero: string): IssuedNfse | undefined {
    return this.notes.get(AbrasfStore.noteKey(env, prestador, numero));
  }

  findByRps(env: Ambiente, prestador: string, numero: string, serie: string, tipo: string): IssuedNfse | undefined {
    return this.byRps.get(AbrasfStore.rpsKey(env, prestador, numero, serie, tipo));
  }

  range(env: Ambiente, prestador: string, from: number, to: number): IssuedNfse[] {
    return [...this.notes.values()]
      .filter((n) => n.env === env && n.prestador === prestador && Number(n.numero) >= from && Number(n.numero) <= to)
      .sort((a, b) => Number(a.numero) - Number(b.numero));
  }

  all(): IssuedNfse[] {
    return [...this.notes.values()];
  }
}
