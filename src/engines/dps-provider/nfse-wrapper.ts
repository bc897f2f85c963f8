import { findMunicipality } from '../../domain/municipalities.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { findServiceCode } from '../../domain/service-codes.ts';
import { accessKeyCheckDigit } from '../../xml/access-key.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { toLatin1Line } from '../../xml/latin1.ts';
import { child, parseXml, text } from '../../xml/read.ts';
import type { BuiltDps } from '../national/dps-builder.ts';

/**
 * The taxpayer-built `NFSe` document that SIL/TBW and Digifred take instead of a bare DPS (briefs/providers-own.md
 * §4: "a full NFSe document wrapping the DPS, signed on infNFSe"). It is made from the national DPS the national
 * builder already wrote (never a second DPS builder): the DPS goes inside `infNFSe` unchanged (unsigned: the
 * signature is the wrapper's, on `infNFSe`), and the `infNFSe` fields the provider will overwrite are filled from it
 * (NFSe_v1.01.xsd order: xLocEmi, xLocPrestacao, nNFSe, xTribNac, verAplic, ambGer, tpEmis, cStat, dhProc, nDFSe,
 * emit, valores, DPS).
 *
 * `identifiers`:
 * - `provisional` (SIL/TBW): real, XSD-valid values the provider replaces: nNFSe and nDFSe = the DPS number, and
 *   `Id = "NFS" + key` with the key made by the national rule (cLocEmi, ambGer 1 = municipality, CNPJ, nNFSe, AAMM of
 *   dhEmi, the DPS number as the 9-digit code, check digit);
 * - `empty` (Digifred): `nNFSe`, `nDFSe` and the `Id` attributes of `infNFSe` and `infDPS` empty, as Digifred
 *   requires; such a document no longer satisfies the XSD (the provider completes it).
 */
export type WrapperIdentifiers = 'provisional' | 'empty';

const NFSE_NAMESPACE = 'http://www.sped.fazenda.gov.br/nfse';

function leaf(name: string, value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  return `<${name}>${escapeXmlText(String(value))}</${name}>`;
}

function cents(value: string | null): number {
  return value ? Math.round(Number(value) * 100) : 0;
}

function money(valueCents: number): string {
  const c = Math.max(0, valueCents);
  return `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
}

function placeName(code: string | null): string {
  return (code && findMunicipality(code)?.name) || 'Nao informado';
}

/** The provisional access key of a taxpayer-built NFSe (see `provisional` above). */
export function provisionalNfseKey(dps: { cLocEmi: string; cnpj: string; nDPS: string; dhEmi: string }): string {
  const number = dps.nDPS.replace(/^0+(?=.)/, '');
  const aamm = `${dps.dhEmi.slice(2, 4)}${dps.dhEmi.slice(5, 7)}`;
  const body = `${dps.cLocEmi}12${dps.cnpj.padStart(14, '0')}${number.padStart(13, '0')}${aamm}${number.slice(-9).padStart(9, '0')}`;
  if (!/^\d{49}$/.test(body)) throw new Error(`provisionalNfseKey: parts do not make 49 digits (${body})`);
  return body + String(accessKeyCheckDigit(body));
}

/**
 * Wraps a built (unsigned) DPS into the unsigned `NFSe` document; sign `infNFSe`. Returns the document and its id
 * (the DPS id: what the provider and our reconciliation know the declaration by).
 */
export function buildNfseWrapper(
  dps: BuiltDps,
  project: ProjectFiscalProfile,
  identifiers: WrapperIdentifiers,
): { id: string; xml: string } {
  const parsed = parseXml(dps.xml);
  if (!parsed.ok) throw new Error(`buildNfseWrapper: the DPS does not parse: ${parsed.message}`);
  const inf = child(parsed.root, 'infDPS');
  const cLocEmi = text(inf, 'cLocEmi') ?? '';
  const dhEmi = text(inf, 'dhEmi') ?? '';
  const nDPS = text(inf, 'nDPS') ?? '';
  const cTribNac = text(inf, 'serv/cServ/cTribNac') ?? '';
  const cLocPrestacao = text(inf, 'serv/locPrest/cLocPrestacao');
  const vServ = cents(text(inf, 'valores/vServPrest/vServ'));
  const vLiq =
    vServ -
    cents(text(inf, 'valores/vDescCondIncond/vDescIncond')) -
    cents(text(inf, 'valores/vDescCondIncond/vDescCond'));
  const address = project.endereco;
  const empty = identifiers === 'empty';
  const number = nDPS.replace(/^0+(?=.)/, '');
  const id = empty ? '' : `NFS${provisionalNfseKey({ cLocEmi, cnpj: project.cnpj, nDPS, dhEmi })}`;
  const line = (value: string | null | undefined, max: number, fallback: string) =>
    toLatin1Line(value ?? '', max) || fallback;

  const emit =
    '<emit>' +
    leaf('CNPJ', project.cnpj) +
    (project.inscricaoMunicipal ? leaf('IM', project.inscricaoMunicipal) : '') +
    leaf('xNome', line(project.razaoSocial, 300, project.cnpj)) +
    '<enderNac>' +
    leaf('xLgr', line(address?.logradouro, 255, 'NAO INFORMADO')) +
    leaf('nro', line(address?.numero, 60, 'S/N')) +
    leaf('xBairro', line(address?.bairro, 60, 'NAO INFORMADO')) +
    leaf('cMun', cLocEmi) +
    leaf('UF', findMunicipality(cLocEmi)?.uf ?? 'DF') +
    leaf('CEP', /^\d{8}$/.test(address?.cep ?? '') ? address?.cep : '00000000') +
    '</enderNac>' +
    '</emit>';

  const dpsXml = empty ? dps.xml.replace(/<infDPS Id="[^"]*"/, '<infDPS Id=""') : dps.xml;
  const xml =
    `<NFSe xmlns="${NFSE_NAMESPACE}" versao="1.01"><infNFSe Id="${id}">` +
    leaf('xLocEmi', placeName(cLocEmi)) +
    leaf('xLocPrestacao', placeName(cLocPrestacao)) +
    `<nNFSe>${empty ? '' : number}</nNFSe>` +
    leaf('xTribNac', line(findServiceCode(cTribNac)?.description, 600, `Servico ${cTribNac}`)) +
    leaf('verAplic', text(inf, 'verAplic')) +
    leaf('ambGer', 1) +
    leaf('tpEmis', 1) +
    leaf('cStat', 100) +
    leaf('dhProc', dhEmi) +
    `<nDFSe>${empty ? '' : number}</nDFSe>` +
    emit +
    `<valores>${leaf('vLiq', money(vLiq))}</valores>` +
    dpsXml +
    '</infNFSe></NFSe>';
  return { id: dps.id, xml };
}
