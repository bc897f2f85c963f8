import { createHash } from 'node:crypto';
import { findMunicipality } from '../../domain/municipalities.ts';
import { escapeXml } from '../kit/xml-dom.ts';
import { signEnveloped } from '../kit/xml-signature.ts';
import { ABRASF_SIGNATURE_PROFILE, type ComposeNfseOptions } from './rules.ts';

/**
 * The national-layout NFS-e some ABRASF providers return inside `CompNfse/Nfse` (Tinus, briefs/providers-abrasf.md
 * §10: `infNFSe/nNFSe`, `dhProc`, `DPS/infDPS`, as ACBr's and OpenAC's readers expect): the subset of the national
 * NFSe 1.01 elements a reader needs, in the national namespace, signed by the sandbox on infNFSe, with the 50-digit
 * key (cMun, ambGer, tpInsc, inscrição, nNFSe, AAMM, a code, a check digit) in infNFSe@Id after `NFS`.
 */
export const NATIONAL_NS = 'http://www.sped.fazenda.gov.br/nfse';

function checkDigit(digits: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += Number(digits[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const rest = sum % 11;
  return rest < 2 ? '0' : String(11 - rest);
}

export function nationalKey(options: ComposeNfseOptions): string {
  const { rps } = options;
  const code = BigInt(
    `0x${createHash('sha1').update(`${rps.prestador}:${options.numero}:${options.codigoVerificacao}`).digest('hex').slice(0, 12)}`,
  );
  const body =
    rps.codigoMunicipio.padStart(7, '0') +
    '2' +
    (rps.prestador.length === 14 ? '2' : '1') +
    rps.prestador.padStart(14, '0') +
    options.numero.padStart(13, '0') +
    options.dataEmissao.slice(2, 4) +
    options.dataEmissao.slice(5, 7) +
    String(code % 1_000_000_000n).padStart(9, '0');
  return body + checkDigit(body);
}

/** The 50-digit key of a stored national NFS-e (`infNFSe Id="NFS…"`). */
export const nationalKeyIn = (nfseXml: string) => /<infNFSe[^>]* Id="NFS(\d{50})"/.exec(nfseXml)?.[1] ?? null;

export function composeNationalNfse(options: ComposeNfseOptions): string {
  const { rps } = options;
  const el = (name: string, value: string | null | undefined) =>
    value ? `<${name}>${escapeXml(value)}</${name}>` : '';
  const city = findMunicipality(rps.codigoMunicipio);
  const liquido = Math.max(0, rps.valorServicos - rps.retencoes - (rps.issRetido ? rps.valorIss : 0));
  const inscricao = rps.prestador.length === 14 ? el('CNPJ', rps.prestador) : el('CPF', rps.prestador);
  const ns = options.dataNamespace ? ` xmlns="${options.dataNamespace}"` : '';
  const unsigned =
    `<Nfse${ns} versao="${options.version}"><infNFSe xmlns="${NATIONAL_NS}" Id="NFS${nationalKey(options)}">` +
    el('xLocEmi', city?.name ?? rps.codigoMunicipio) +
    el('nNFSe', options.numero) +
    el('cLocIncid', rps.codigoMunicipio) +
    '<ambGer>2</ambGer><tpEmis>1</tpEmis><cStat>100</cStat>' +
    el('dhProc', options.dataEmissao) +
    el('cVerif', options.codigoVerificacao) +
    `<emit>${inscricao}${el('IM', rps.inscricaoMunicipal)}${el('xNome', options.razaoSocial.slice(0, 300) || rps.prestador)}</emit>` +
    `<valores>${el('vBC', rps.valorServicos.toFixed(2))}${el('pAliqAplic', rps.aliquota)}` +
    `${rps.valorIss > 0 ? el('vISSQN', rps.valorIss.toFixed(2)) : ''}${el('vLiq', liquido.toFixed(2))}</valores>` +
    `<DPS versao="1.01"><infDPS>${el('dhEmi', rps.dataEmissao)}${el('serie', rps.ident.serie)}${el('nDPS', rps.ident.numero)}` +
    `${el('dCompet', rps.competencia)}<prest>${inscricao}</prest></infDPS></DPS></infNFSe></Nfse>`;
  if (options.signed === false) return unsigned;
  return signEnveloped(
    unsigned,
    { rootName: 'Nfse', elementName: 'infNFSe' },
    options.signer,
    ABRASF_SIGNATURE_PROFILE,
  );
}
