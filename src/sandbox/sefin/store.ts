import { JsonlFile } from '../kit/jsonl.ts';

/**
 * What the sandbox issued, in memory and (optionally) appended to a JSONL file (the kit's ../kit/jsonl.ts, 0600 in
 * a 0700 directory) so a restart keeps it.
 */

export type Ambiente = 1 | 2;

export interface IssuedEvent {
  /** Six digits, e.g. `101101`. */
  tipoEvento: string;
  nSeqEvento: number;
  dhProc: string;
  nDFSe: string;
  eventoXml: string;
}

export interface IssuedRecord {
  environment: Ambiente;
  chaveAcesso: string;
  idDps: string;
  nNFSe: string;
  nDFSe: string;
  cLocEmi: string;
  /** CNPJ (14) or CPF (11) of the DPS emitter (tpEmit). */
  emitente: string;
  prestador: string | null;
  tomador: string | null;
  intermediario: string | null;
  /** Series and number without leading zeros (the E0014 identity). */
  serie: string;
  nDPS: string;
  dhProc: string;
  nfseXml: string;
  events: IssuedEvent[];
  cancelled: boolean;
}

type StoredLine =
  | ({ kind: 'nfse' } & Omit<IssuedRecord, 'events' | 'cancelled'>)
  | ({ kind: 'evento'; environment: Ambiente; chaveAcesso: string } & IssuedEvent);

const CANCELLING_EVENTS = new Set(['101101', '105102', '105104', '305101']);

export class SefinStore {
  private readonly byKey = new Map<string, IssuedRecord>();
  private readonly byDps = new Map<string, IssuedRecord>();
  private readonly byDpsNumber = new Map<string, IssuedRecord>();
  private readonly nfseNumbers = new Map<string, number>();
  private readonly dfseNumbers = new Map<Ambiente, number>();

  private readonly file: JsonlFile<StoredLine> | null;

  constructor(file: string | null, warn: (message: string) => void = () => {}) {
    this.file = file ? new JsonlFile<StoredLine>(file) : null;
    this.file?.replay((line) => this.apply(line), warn);
  }

  private static dpsNumberKey(env: Ambiente, cLocEmi: string, emitente: string, serie: string, nDPS: string): string {
    return `${env}|${cLocEmi}|${emitente}|${serie}|${nDPS}`;
  }

  private apply(line: StoredLine): void {
    if (line.kind === 'nfse') {
      const { kind: _kind, ...data } = line;
      const record: IssuedRecord = { ...data, events: [], cancelled: false };
      this.byKey.set(`${record.environment}|${record.chaveAcesso}`, record);
      this.byDps.set(`${record.environment}|${record.idDps}`, record);
      this.byDpsNumber.set(
        SefinStore.dpsNumberKey(record.environment, record.cLocEmi, record.emitente, record.serie, record.nDPS),
        record,
      );
      const seqKey = `${record.environment}|${record.cLocEmi}|${record.emitente}`;
      this.nfseNumbers.set(seqKey, Math.max(this.nfseNumbers.get(seqKey) ?? 0, Number(record.nNFSe)));
      this.bumpDfse(record.environment, Number(record.nDFSe));
    } else {
      const record = this.byKey.get(`${line.environment}|${line.chaveAcesso}`);
      if (!record) throw new Error(`event for unknown NFS-e ${line.chaveAcesso}`);
      const { kind: _kind, environment: _env, chaveAcesso: _key, ...event } = line;
      record.events.push(event);
      if (CANCELLING_EVENTS.has(event.tipoEvento)) record.cancelled = true;
      this.bumpDfse(line.environment, Number(event.nDFSe));
    }
  }

  private bumpDfse(env: Ambiente, n: number): void {
    this.dfseNumbers.set(env, Math.max(this.dfseNumbers.get(env) ?? 0, n));
  }

  private persist(line: StoredLine): void {
    this.file?.append(line);
  }

  nextNfseNumber(env: Ambiente, cLocEmi: string, emitente: string): number {
    return (this.nfseNumbers.get(`${env}|${cLocEmi}|${emitente}`) ?? 0) + 1;
  }

  nextDfseNumber(env: Ambiente): number {
    return (this.dfseNumbers.get(env) ?? 0) + 1;
  }

  findByKey(env: Ambiente, chaveAcesso: string): IssuedRecord | undefined {
    return this.byKey.get(`${env}|${chaveAcesso}`);
  }

  findByDps(env: Ambiente, idDps: string): IssuedRecord | undefined {
    return this.byDps.get(`${env}|${idDps}`);
  }

  findByDpsNumber(
    env: Ambiente,
    cLocEmi: string,
    emitente: string,
    serie: string,
    nDPS: string,
  ): IssuedRecord | undefined {
    return this.byDpsNumber.get(SefinStore.dpsNumberKey(env, cLocEmi, emitente, serie, nDPS));
  }

  /** Takes a new NFS-e: written to the file first, then visible. */
  addNfse(record: Omit<IssuedRecord, 'events' | 'cancelled'>): void {
    const line: StoredLine = { kind: 'nfse', ...record };
    this.persist(line);
    this.apply(line);
  }

  addEvent(env: Ambiente, chaveAcesso: string, event: IssuedEvent): void {
    const line: StoredLine = { kind: 'evento', environment: env, chaveAcesso, ...event };
    this.persist(line);
    this.apply(line);
  }

  all(): IssuedRecord[] {
    return [...this.byKey.values()].map((r) => ({ ...r, events: r.events.map((e) => ({ ...e })) }));
  }
}
