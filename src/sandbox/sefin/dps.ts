import { isNationalEmitterMunicipality } from '../../domain/service-codes.ts';
import { seedBreakdownsAt } from '../adn/seed.ts';
import { type MensagemProcessamento, officialMessage } from './codes.ts';
import { issIncidence } from './nfse-builder.ts';
import type { Ambiente, SefinStore } from './store.ts';
import { at, child, textAt } from '../kit/xml-dom.ts';

/** The fields of a received DPS that the sandbox's rules and NFS-e generation use. */

export interface Party {
  cnpj: string | null;
  cpf: string | null;
  im: string | null;
  xNome: string | null;
  fone: string | null;
  email: string | null;
  /** National address (endNac), when the party has one. */
  address: {
    cMun: string;
    cep: string;
    xLgr: string;
    nro: string;
    xCpl: string | null;
    xBairro: string;
  } | null;
}

export interface DpsData {
  id: string;
  tpAmb: string;
  dhEmi: string;
  serie: string;
  nDPS: string;
  dCompet: string;
  tpEmit: '1' | '2' | '3';
  cLocEmi: string;
  /** prest/regTrib/opSimpNac: 1 not opted-in, 2 MEI, 3 ME/EPP */
  opSimpNac: string;
  prest: Party;
  toma: Party | null;
  interm: Party | null;
  /** The party that issued (and must have signed) the DPS, per tpEmit. */
  emitter: Party | null;
  infDps: Element;
}

function readParty(el: Element | null): Party | null {
  if (!el) return null;
  const endNac = at(el, 'end/endNac');
  const end = child(el, 'end');
  return {
    cnpj: textAt(el, 'CNPJ') ?? null,
    cpf: textAt(el, 'CPF') ?? null,
    im: textAt(el, 'IM') ?? null,
    xNome: textAt(el, 'xNome') ?? null,
    fone: textAt(el, 'fone') ?? null,
    email: textAt(el, 'email') ?? null,
    address:
      endNac && end
        ? {
            cMun: textAt(endNac, 'cMun') ?? '',
            cep: textAt(endNac, 'CEP') ?? '',
            xLgr: textAt(end, 'xLgr') ?? '',
            nro: textAt(end, 'nro') ?? '',
            xCpl: textAt(end, 'xCpl') ?? null,
            xBairro: textAt(end, 'xBairro') ?? '',
          }
        : null,
  };
}

/** Reads a DPS that already passed the schema (so the mandatory elements are there). */
export function readDps(root: Element): DpsData {
  const infDps = child(root, 'infDPS');
  if (!infDps) throw new Error('DPS without infDPS (the schema should have refused it)');
  const tpEmit = (textAt(infDps, 'tpEmit') ?? '1') as DpsData['tpEmit'];
  const prest = readParty(child(infDps, 'prest'))!;
  const toma = readParty(child(infDps, 'toma'));
  const interm = readParty(child(infDps, 'interm'));
  return {
    id: infDps.getAttribute('Id') ?? '',
    tpAmb: textAt(infDps, 'tpAmb') ?? '',
    dhEmi: textAt(infDps, 'dhEmi') ?? '',
    serie: textAt(infDps, 'serie') ?? '',
    nDPS: textAt(infDps, 'nDPS') ?? '',
    dCompet: textAt(infDps, 'dCompet') ?? '',
    tpEmit,
    cLocEmi: textAt(infDps, 'cLocEmi') ?? '',
    opSimpNac: textAt(infDps, 'prest/regTrib/opSimpNac') ?? '',
    prest,
    toma,
    interm,
    emitter: tpEmit === '2' ? toma : tpEmit === '3' ? interm : prest,
    infDps,
  };
}

/** CNPJ (14) or CPF (11) of a party, or null for a foreign or unidentified one. */
export function inscricaoOf(party: Party | null): string | null {
  return party?.cnpj ?? party?.cpf ?? null;
}

/** The part of an inscription that identifies the taxpayer: the CNPJ root (8) or the whole CPF. */
export function inscricaoRoot(inscricao: string): string {
  return inscricao.length === 14 ? inscricao.slice(0, 8) : inscricao;
}

/** Type (1 CPF, 2 CNPJ) and the 14-character inscription of the DPS/NFS-e identifiers. */
export function identifierInscricao(party: Party | null): { tpInsc: 1 | 2; inscricao: string } | null {
  if (party?.cnpj) return { tpInsc: 2, inscricao: party.cnpj };
  if (party?.cpf) return { tpInsc: 1, inscricao: `000${party.cpf}` };
  return null;
}

export function expectedDpsId(dps: DpsData): string | null {
  const ident = identifierInscricao(dps.emitter);
  if (!ident) return null;
  return `DPS${dps.cLocEmi}${ident.tpInsc}${ident.inscricao}${dps.serie.padStart(5, '0')}${dps.nDPS.padStart(15, '0')}`;
}

export function stripZeros(value: string): string {
  return value.replace(/^0+(?=.)/, '');
}

/** Business rules of Anexo I that the sandbox holds (all failures are reported together, as Sefin does). */
/**
 * The federal registries (cadastro CNPJ / CPF) the real system consults. Offline, every well-formed
 * document counts as registered except those the sandbox is told are not (to exercise E0190 / E0207).
 */
export interface TaxRegistry {
  isRegistered(document: string): boolean;
}

export const EVERYONE_REGISTERED: TaxRegistry = { isRegistered: () => true };

export function checkDpsRules(
  dps: DpsData,
  env: Ambiente,
  now: Date,
  store: SefinStore,
  registry: TaxRegistry = EVERYONE_REGISTERED,
  /** false for a municipal provider's Sefin clone: its cities issue there precisely because they are not adherent */
  requireNationalAdherence = true,
): MensagemProcessamento[] {
  const errors: MensagemProcessamento[] = [];
  const taker = dps.toma;
  if (taker?.cnpj && !registry.isRegistered(taker.cnpj)) {
    errors.push(officialMessage('E0190', `CNPJ ${taker.cnpj}.`));
  }
  if (taker?.cpf && !registry.isRegistered(taker.cpf)) {
    errors.push(officialMessage('E0207', `CPF ${taker.cpf}.`));
  }
  // E0037: the issuing municipality must have an agreement with the national system (the official adhesion
  // list: Conveniado Ativo + AderenteEmissorNacional), except when the emitter is MEI
  if (requireNationalAdherence && dps.opSimpNac !== '2' && !isNationalEmitterMunicipality(dps.cLocEmi)) {
    errors.push(officialMessage('E0037', `cLocEmi ${dps.cLocEmi}; opSimpNac ${dps.opSimpNac}.`));
  }
  const expectedId = expectedDpsId(dps);
  if (expectedId !== dps.id) {
    errors.push(
      officialMessage('E0004', `Id informado: ${dps.id}; esperado: ${expectedId ?? '(emitente sem CNPJ/CPF)'}.`),
    );
  }
  if (dps.tpAmb !== String(env)) {
    errors.push(officialMessage('E0006', `tpAmb ${dps.tpAmb} enviado ao ambiente ${env}.`));
  }
  const dhEmi = Date.parse(dps.dhEmi);
  if (Number.isNaN(dhEmi) || dhEmi > now.getTime()) {
    errors.push(officialMessage('E0008', `dhEmi ${dps.dhEmi}; processamento ${now.toISOString()}.`));
  }
  const serie = Number(dps.serie);
  if (!Number.isInteger(serie) || serie < 1 || serie > 49999) {
    errors.push(
      officialMessage('E0010', `Série ${dps.serie}: a faixa do aplicativo próprio do contribuinte é 00001 a 49999.`),
    );
  }
  if (dps.dCompet > dps.dhEmi.slice(0, 10)) {
    errors.push(officialMessage('E0015', `dCompet ${dps.dCompet}; dhEmi ${dps.dhEmi}.`));
  }
  errors.push(...checkMunicipalBreakdown(dps));
  const emitente = inscricaoOf(dps.emitter);
  if (emitente) {
    const previous = store.findByDpsNumber(env, dps.cLocEmi, emitente, stripZeros(dps.serie), stripZeros(dps.nDPS));
    if (previous) errors.push(officialMessage('E0014', `DPS já processada: ${previous.idDps}.`));
  }
  return errors;
}

/**
 * cTribMun against the parametrisation of the municipality of incidence (the ADN seed), Anexo I E0314: a breakdown
 * sent must exist at the competência; a municipality that broke the service down (no `000`) needs one. Municipalities
 * outside the seed are not checked (the sandbox knows no parametrisation for them).
 */
function checkMunicipalBreakdown(dps: DpsData): MensagemProcessamento[] {
  const tribISSQN = textAt(dps.infDps, 'valores/trib/tribMun/tribISSQN');
  if (tribISSQN !== '1') return [];
  const cLocIncid = issIncidence(dps);
  if (!cLocIncid) return [];
  const cTribNac = textAt(dps.infDps, 'serv/cServ/cTribNac') ?? '';
  const cTribMun = textAt(dps.infDps, 'serv/cServ/cTribMun') ?? null;
  const entries = seedBreakdownsAt(cLocIncid, cTribNac, dps.dCompet);
  if (!entries || entries.length === 0) return [];
  const codes = entries.map((e) => e.codigo).filter((c) => c !== '000');
  if (cTribMun === null) {
    return codes.length > 0 && !entries.some((e) => e.codigo === '000')
      ? [
          officialMessage(
            'E0314',
            `O município ${cLocIncid} exige o desdobramento do código ${cTribNac}: ${codes.join(', ')}.`,
          ),
        ]
      : [];
  }
  return codes.includes(cTribMun)
    ? []
    : [officialMessage('E0314', `cTribMun ${cTribMun} para ${cTribNac} no município ${cLocIncid} em ${dps.dCompet}.`)];
}
