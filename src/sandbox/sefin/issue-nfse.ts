import { validateXml } from '../../xml/xsd.ts';
import { type SandboxSigner, signEnveloped } from '../kit/xml-signature.ts';
import { buildAccessKey } from './access-key.ts';
import { type DpsData, identifierInscricao, inscricaoOf, stripZeros } from './dps.ts';
import { composeNfse } from './nfse-builder.ts';
import type { Ambiente, IssuedRecord, SefinStore } from './store.ts';
import { brasiliaDateTime, brasiliaYearMonth } from './time.ts';

export interface IssueNfseInput {
  env: Ambiente;
  at: Date;
  dps: DpsData;
  /** the received `<DPS>` element's text, embedded unchanged in the NFS-e */
  dpsRaw: string;
  registeredName: string | null;
  store: SefinStore;
  signer: SandboxSigner;
  verAplic: string;
  /** ISS rate (%) when the DPS has no pAliq */
  defaultIssRate: number;
  /** who generated the note: 2 Sefin Nacional (default), 1 the municipality's own system (municipal providers) */
  ambGer?: 1 | 2;
}

/**
 * Issues the national-style NFS-e of an accepted DPS, as Sefin (or a municipal system on the national layout)
 * does: the next NFS-e and DF-e numbers, a fresh access key, the NFS-e composed around the DPS, signed by the
 * sandbox, checked against NFSe_v1.01.xsd and stored. One implementation for every sandbox that issues national
 * NFS-e (Sefin, its clones and the municipal providers of the national DPS).
 */
export function issueNationalNfse(input: IssueNfseInput): IssuedRecord {
  const { env, at, dps, store } = input;
  const ambGer = input.ambGer ?? 2;
  const ident = identifierInscricao(dps.emitter)!;
  const emitente = inscricaoOf(dps.emitter)!;
  const nNFSe = store.nextNfseNumber(env, dps.cLocEmi, emitente);
  const nDFSe = store.nextDfseNumber(env);
  const dhProc = brasiliaDateTime(at);
  let chaveAcesso: string;
  do {
    chaveAcesso = buildAccessKey({
      cMun: dps.cLocEmi,
      ambGer,
      tpInsc: ident.tpInsc,
      inscricao: ident.inscricao,
      nNFSe,
      aamm: brasiliaYearMonth(at),
    });
  } while (store.findByKey(env, chaveAcesso));
  let unsigned = composeNfse({
    dps,
    dpsRaw: input.dpsRaw,
    chaveAcesso,
    nNFSe,
    nDFSe,
    dhProc,
    verAplic: input.verAplic,
    defaultIssRate: input.defaultIssRate,
    registeredName: input.registeredName,
  });
  if (ambGer === 1) unsigned = unsigned.replace('<ambGer>2</ambGer>', '<ambGer>1</ambGer>');
  const nfseXml = signEnveloped(unsigned, { rootName: 'NFSe', elementName: 'infNFSe' }, input.signer);
  const check = validateXml('NFSe', nfseXml);
  if (!check.ok) throw new Error(`sandbox generated an NFS-e that fails NFSe_v1.01.xsd: ${check.errors.join(' | ')}`);
  store.addNfse({
    environment: env,
    chaveAcesso,
    idDps: dps.id,
    nNFSe: String(nNFSe),
    nDFSe: String(nDFSe),
    cLocEmi: dps.cLocEmi,
    emitente,
    prestador: inscricaoOf(dps.prest),
    tomador: inscricaoOf(dps.toma),
    intermediario: inscricaoOf(dps.interm),
    serie: stripZeros(dps.serie),
    nDPS: stripZeros(dps.nDPS),
    dhProc,
    nfseXml,
  });
  return store.findByKey(env, chaveAcesso)!;
}
