import { findCountry } from '../../domain/countries.ts';
import { findMunicipality } from '../../domain/municipalities.ts';
import { findServiceCode } from '../../domain/service-codes.ts';
import { rateAt, seedBreakdownsAt } from '../adn/seed.ts';
import type { DpsData, Party } from './dps.ts';
import { at, childElements, escapeXml, textAt } from '../kit/xml-dom.ts';
import { NFSE_NS } from './xml.ts';

/**
 * Composes the NFS-e that Sefin Nacional generates from an accepted DPS (NFSe_v1.01.xsd): the generated
 * identification, the emitter, the computed values, the computed IBS/CBS group and the signed DPS unchanged.
 */

export interface NfseComposition {
  dps: DpsData;
  /** The received `<DPS …>…</DPS>` text, signature included, embedded byte for byte. */
  dpsRaw: string;
  chaveAcesso: string;
  nNFSe: number;
  nDFSe: number;
  dhProc: string;
  verAplic: string;
  /** ISS rate (%) applied when the DPS has no pAliq (the municipal parameter the real system looks up). */
  defaultIssRate: number;
  /**
   * The emitter's name as the federal registry knows it (the real system copies it from the cadastro CNPJ);
   * offline, the name of the ICP-Brasil certificate that signed the DPS (its CN before `:CNPJ`).
   */
  registeredName?: string | null;
}

/** IBS/CBS rates of the 2026 test year, as Sefin applied them in the official sample. */
export const IBSCBS_RATES_2026 = { ibsUf: 0.1, ibsMun: 0, cbs: 0.9 };

const cents = (value: string | undefined): number => (value === undefined ? 0 : Math.round(Number(value) * 100));
const hundredths = (value: string | number): number => Math.round(Number(value) * 100);

function money(value: number): string {
  const c = Math.max(0, Math.round(value));
  return `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
}

/** A percentage (in hundredths) as `TSDec1V2`/`TSDec2V2` text. */
function percent(value: number): string {
  return `${Math.floor(value / 100)}.${String(value % 100).padStart(2, '0')}`;
}

/** `value × rate%` with the rate in hundredths of a percent, rounded half up to the cent. */
function applyRate(valueCents: number, rateHundredths: number): number {
  return Math.round((valueCents * rateHundredths) / 10000);
}

function el(name: string, content: string | number | null | undefined): string {
  if (content === null || content === undefined || content === '') return '';
  return `<${name}>${escapeXml(String(content))}</${name}>`;
}

function municipalityName(code: string | null | undefined): string {
  if (!code) return 'Não informado';
  return findMunicipality(code)?.name ?? `Município ${code}`;
}

/** Retained PIS and COFINS per tpRetPisCofins (XSD TSTipoRetPISCofins). */
function retainedPisCofins(tpRet: string | undefined): { pis: boolean; cofins: boolean } {
  switch (tpRet) {
    case '1':
    case '3':
    case '4':
      return { pis: true, cofins: true };
    case '5':
    case '9':
      return { pis: true, cofins: false };
    case '6':
    case '7':
      return { pis: false, cofins: true };
    default:
      return { pis: false, cofins: false };
  }
}

interface ComputedValues {
  vServ: number;
  vCalcDR: number | null;
  vBC: number | null;
  pAliq: number | null;
  vISSQN: number;
  vTotalRet: number;
  vLiq: number;
  vDescIncond: number;
  vPis: number;
  vCofins: number;
}

function computeValues(dps: DpsData, defaultIssRate: number): ComputedValues {
  const valores = at(dps.infDps, 'valores');
  const vServ = cents(textAt(valores, 'vServPrest/vServ'));
  const vDescIncond = cents(textAt(valores, 'vDescCondIncond/vDescIncond'));
  const vDescCond = cents(textAt(valores, 'vDescCondIncond/vDescCond'));

  let vCalcDR: number | null = null;
  const dedRed = at(valores, 'vDedRed');
  if (dedRed) {
    const pDR = textAt(dedRed, 'pDR');
    const vDR = textAt(dedRed, 'vDR');
    if (pDR !== undefined) vCalcDR = applyRate(vServ, hundredths(pDR));
    else if (vDR !== undefined) vCalcDR = cents(vDR);
    else {
      vCalcDR = 0;
      for (const doc of childElements(at(dedRed, 'documentos') ?? dedRed))
        vCalcDR += cents(textAt(doc, 'vDeducaoReducao'));
    }
  }

  const tribMun = at(valores, 'trib/tribMun');
  const tribISSQN = textAt(tribMun, 'tribISSQN');
  const tpRetISSQN = textAt(tribMun, 'tpRetISSQN');
  const opSimpNac = textAt(dps.infDps, 'prest/regTrib/opSimpNac');
  const declaredRate = textAt(tribMun, 'pAliq');
  const taxable = tribISSQN === '1' && opSimpNac !== '2';
  const vBC = taxable ? Math.max(0, vServ - vDescIncond - (vCalcDR ?? 0)) : null;
  // no pAliq: the rate the municipality of incidence parametrised (the ADN seed), else the sandbox default
  const parametrised = taxable && declaredRate === undefined ? parametrisedBreakdown(dps)?.rate : undefined;
  const pAliq = taxable ? hundredths(declaredRate ?? parametrised ?? defaultIssRate) : null;
  const vISSQN = vBC !== null && pAliq !== null ? applyRate(vBC, pAliq) : 0;

  const tribFed = at(valores, 'trib/tribFed');
  const vPis = cents(textAt(tribFed, 'piscofins/vPis'));
  const vCofins = cents(textAt(tribFed, 'piscofins/vCofins'));
  const retained = retainedPisCofins(textAt(tribFed, 'piscofins/tpRetPisCofins'));
  const vTotalRet =
    cents(textAt(tribFed, 'vRetCP')) +
    cents(textAt(tribFed, 'vRetIRRF')) +
    cents(textAt(tribFed, 'vRetCSLL')) +
    (retained.pis ? vPis : 0) +
    (retained.cofins ? vCofins : 0) +
    (tpRetISSQN === '2' || tpRetISSQN === '3' ? vISSQN : 0);
  const vLiq = vServ - vDescCond - vDescIncond - vTotalRet;
  return { vServ, vCalcDR, vBC, pAliq, vISSQN, vTotalRet, vLiq, vDescIncond, vPis, vCofins };
}

/** Municipality of ISS incidence from the service's incidence rule (LC 116 art. 3; Anexo I incidence sheet). */
/**
 * The parametrised entry (ADN seed) of the DPS's service and breakdown (`000` without cTribMun) in the municipality
 * of incidence at the competência, with its rate and the municipality's text for the breakdown; undefined when the
 * municipality or the entry is not parametrised.
 */
export function parametrisedBreakdown(dps: DpsData): { rate: number; descricao: string } | undefined {
  const cLocIncid = issIncidence(dps);
  if (!cLocIncid) return undefined;
  const cTribNac = textAt(dps.infDps, 'serv/cServ/cTribNac') ?? '';
  const cTribMun = textAt(dps.infDps, 'serv/cServ/cTribMun') ?? '000';
  const entry = seedBreakdownsAt(cLocIncid, cTribNac, dps.dCompet)?.find((b) => b.codigo === cTribMun);
  const rate = entry ? rateAt(entry.historico, dps.dCompet) : undefined;
  return entry && rate ? { rate: rate.aliq, descricao: entry.descricao } : undefined;
}

export function issIncidence(dps: DpsData): string | null {
  const tribISSQN = textAt(dps.infDps, 'valores/trib/tribMun/tribISSQN');
  if (tribISSQN === '3' || tribISSQN === '4') return null;
  const cTribNac = textAt(dps.infDps, 'serv/cServ/cTribNac') ?? '';
  const place = findServiceCode(cTribNac)?.incidence ?? 'EP';
  const cLocPrestacao = textAt(dps.infDps, 'serv/locPrest/cLocPrestacao') ?? null;
  if (place === 'LP') return cLocPrestacao;
  if (place === 'ET') return dps.toma?.address?.cMun ?? cLocPrestacao;
  return dps.prest.address?.cMun ?? dps.cLocEmi;
}

function emitXml(emitter: Party, cLocEmi: string, registeredName: string | null): string {
  const address = emitter.address;
  const cMun = address?.cMun || cLocEmi;
  const uf = findMunicipality(cMun)?.uf ?? 'DF';
  const id = emitter.cnpj ? el('CNPJ', emitter.cnpj) : el('CPF', emitter.cpf);
  return (
    '<emit>' +
    id +
    el('IM', emitter.im) +
    el('xNome', emitter.xNome ?? registeredName ?? `CONTRIBUINTE ${emitter.cnpj ?? emitter.cpf}`) +
    '<enderNac>' +
    el('xLgr', address?.xLgr || 'NAO INFORMADO') +
    el('nro', address?.nro || 'S/N') +
    el('xCpl', address?.xCpl) +
    el('xBairro', address?.xBairro || 'NAO INFORMADO') +
    el('cMun', cMun) +
    el('UF', uf) +
    el('CEP', address?.cep || '00000000') +
    '</enderNac>' +
    el('fone', emitter.fone) +
    el('email', emitter.email) +
    '</emit>'
  );
}

function ibsCbsXml(dps: DpsData, values: ComputedValues): string {
  const group = at(dps.infDps, 'IBSCBS');
  if (!group) return '';
  const destCMun = textAt(group, 'indDest') === '1' ? textAt(group, 'dest/end/endNac/cMun') : undefined;
  const cLocalidadeIncid =
    destCMun ?? dps.toma?.address?.cMun ?? textAt(dps.infDps, 'serv/locPrest/cLocPrestacao') ?? dps.cLocEmi;

  let vCalcReeRepRes = 0;
  for (const doc of childElements(at(group, 'valores/gReeRepRes') ?? group)) {
    if (doc.localName === 'documentos') vCalcReeRepRes += cents(textAt(doc, 'vlrReeRepRes'));
  }
  // Until 2026 the base excludes ISS, PIS and COFINS (XSD TCRTCValoresIBSCBS/vBC).
  const vBC = Math.max(
    0,
    values.vServ - values.vDescIncond - vCalcReeRepRes - values.vISSQN - values.vPis - values.vCofins,
  );
  const pUf = hundredths(IBSCBS_RATES_2026.ibsUf);
  const pMun = hundredths(IBSCBS_RATES_2026.ibsMun);
  const pCbs = hundredths(IBSCBS_RATES_2026.cbs);
  const vIBSUF = applyRate(vBC, pUf);
  const vIBSMun = applyRate(vBC, pMun);
  const vCBS = applyRate(vBC, pCbs);
  return (
    '<IBSCBS>' +
    el('cLocalidadeIncid', cLocalidadeIncid) +
    el('xLocalidadeIncid', municipalityName(cLocalidadeIncid)) +
    '<valores>' +
    el('vBC', money(vBC)) +
    el('vCalcReeRepRes', money(vCalcReeRepRes)) +
    `<uf>${el('pIBSUF', percent(pUf))}${el('pAliqEfetUF', percent(pUf))}</uf>` +
    `<mun>${el('pIBSMun', percent(pMun))}${el('pAliqEfetMun', percent(pMun))}</mun>` +
    `<fed>${el('pCBS', percent(pCbs))}${el('pAliqEfetCBS', percent(pCbs))}</fed>` +
    '</valores>' +
    '<totCIBS>' +
    el('vTotNF', money(values.vLiq)) +
    '<gIBS>' +
    el('vIBSTot', money(vIBSUF + vIBSMun)) +
    `<gIBSUFTot>${el('vIBSUF', money(vIBSUF))}</gIBSUFTot>` +
    `<gIBSMunTot>${el('vIBSMun', money(vIBSMun))}</gIBSMunTot>` +
    '</gIBS>' +
    `<gCBS>${el('vCBS', money(vCBS))}</gCBS>` +
    '</totCIBS>' +
    '</IBSCBS>'
  );
}

/** The unsigned `<NFSe>` document. */
export function composeNfse(input: NfseComposition): string {
  const { dps } = input;
  if (!dps.emitter) throw new Error('composeNfse needs an identified emitter');
  const values = computeValues(dps, input.defaultIssRate);

  const cLocPrestacao = textAt(dps.infDps, 'serv/locPrest/cLocPrestacao');
  const cPaisPrestacao = textAt(dps.infDps, 'serv/locPrest/cPaisPrestacao');
  const xLocPrestacao = cLocPrestacao
    ? municipalityName(cLocPrestacao)
    : (findCountry(cPaisPrestacao ?? '')?.name ?? cPaisPrestacao ?? 'Não informado');
  const cLocIncid = issIncidence(dps);
  const cTribNac = textAt(dps.infDps, 'serv/cServ/cTribNac') ?? '';
  const xTribNac = findServiceCode(cTribNac)?.description ?? `Código de tributação nacional ${cTribNac}`;

  const valores =
    '<valores>' +
    (values.vCalcDR !== null ? el('vCalcDR', money(values.vCalcDR)) : '') +
    (values.vBC !== null ? el('vBC', money(values.vBC)) : '') +
    (values.pAliq !== null ? el('pAliqAplic', percent(values.pAliq)) : '') +
    (values.vBC !== null ? el('vISSQN', money(values.vISSQN)) : '') +
    (values.vTotalRet > 0 ? el('vTotalRet', money(values.vTotalRet)) : '') +
    el('vLiq', money(values.vLiq)) +
    '</valores>';

  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<NFSe xmlns="${NFSE_NS}" versao="1.01">` +
    `<infNFSe Id="NFS${input.chaveAcesso}">` +
    el('xLocEmi', municipalityName(dps.cLocEmi)) +
    el('xLocPrestacao', xLocPrestacao) +
    el('nNFSe', input.nNFSe) +
    (cLocIncid ? el('cLocIncid', cLocIncid) + el('xLocIncid', municipalityName(cLocIncid)) : '') +
    el('xTribNac', xTribNac.slice(0, 600)) +
    (textAt(dps.infDps, 'serv/cServ/cTribMun')
      ? el(
          'xTribMun',
          (
            parametrisedBreakdown(dps)?.descricao ||
            `Código de tributação municipal ${textAt(dps.infDps, 'serv/cServ/cTribMun')}`
          ).slice(0, 600),
        )
      : '') +
    el('verAplic', input.verAplic) +
    el('ambGer', 2) +
    el('tpEmis', 1) +
    el('procEmi', 1) +
    el('cStat', 100) +
    el('dhProc', input.dhProc) +
    el('nDFSe', input.nDFSe) +
    emitXml(dps.emitter, dps.cLocEmi, input.registeredName ?? null) +
    valores +
    ibsCbsXml(dps, values) +
    input.dpsRaw +
    '</infNFSe>' +
    '</NFSe>'
  );
}
