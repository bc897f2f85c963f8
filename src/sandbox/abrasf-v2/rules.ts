import { randomInt } from 'node:crypto';
import { XMLSerializer } from '@xmldom/xmldom';
import { findMunicipality } from '../../domain/municipalities.ts';
import { at, child, childElements, escapeXml, textAt, XMLDSIG_NS } from '../kit/xml-dom.ts';
import {
  type SandboxSigner,
  type SignatureCheck,
  type SignatureProfile,
  signEnveloped,
  verifyEnvelopedSignature,
} from '../kit/xml-signature.ts';
import { OFFICIAL_MESSAGES } from './profiles.ts';

/**
 * The ABRASF rules of the sandbox, on the DOM of a received message: reading RPS, verifying the signatures the
 * provider requires (the kit's own verifier), and composing the NFS-e (CompNfse) the provider would return.
 */

export type Mensagem = { codigo: string; mensagem: string; correcao?: string; rps?: RpsIdentity };
export interface RpsIdentity {
  numero: string;
  serie: string;
  tipo: string;
}

/** An official message (optionally with a detail in Correcao), trimmed to the XSD's 200 characters. */
export function official(codigo: string, correcao?: string, rps?: RpsIdentity): Mensagem {
  return {
    codigo,
    mensagem: OFFICIAL_MESSAGES[codigo] ?? codigo,
    ...(correcao ? { correcao: correcao.slice(0, 200) } : {}),
    ...(rps ? { rps } : {}),
  };
}

/** How ABRASF providers sign (MAN-2.01 §3.2.3): RSA-SHA1, SHA-1 digest, C14N 1.0. */
export const ABRASF_SIGNATURE_PROFILE: SignatureProfile = {
  signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1',
  canonicalizationAlgorithm: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
};

export const digitsOf = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');
/** CNPJ root (8 digits) or the CPF: who may sign for whom. */
export const rootOf = (id: string) => (id.length === 14 ? id.slice(0, 8) : id);

export function cpfCnpjOf(el: Element | null): string {
  const c = child(el, 'CpfCnpj');
  return digitsOf(textAt(c, 'Cnpj') ?? textAt(c, 'Cpf'));
}

export const serialize = (node: Node) => new XMLSerializer().serializeToString(node);

/** The enveloped signature of `signed` (a Signature sibling inside its parent), with the signer's CNPJ/CPF. */
export function verifySigned(xml: string, signed: Element, documentReference = false): SignatureCheck {
  return verifyEnvelopedSignature(xml, signed.parentNode as Element, signed, { documentReference });
}

/** The RPS signature: held by the Rps (tcDeclaracaoPrestacaoServico), referencing `rps.signed`. */
export function verifyRps(xml: string, rps: RpsData, documentReference = false): SignatureCheck {
  return verifyEnvelopedSignature(xml, rps.inf.parentNode as Element, rps.signed, { documentReference });
}

export function hasSignature(parent: Element): boolean {
  return childElements(parent).some((e) => e.localName === 'Signature' && e.namespaceURI === XMLDSIG_NS);
}

export interface RpsData {
  ident: RpsIdentity;
  dataEmissao: string;
  competencia: string;
  prestador: string;
  inscricaoMunicipal: string | null;
  codigoMunicipio: string;
  valorServicos: number;
  aliquota: string | null;
  valorIss: number;
  retencoes: number;
  issRetido: boolean;
  /** the declaration as it will sit in the NFS-e: InfDeclaracaoPrestacaoServico and its Signature */
  declaracaoXml: string;
  inf: Element;
  /**
   * The element the RPS signature references: InfDeclaracaoPrestacaoServico@Id, or, in the official 2.00 layout (no
   * Id on it: nfse v2.00 XSD), its Rps@Id; the Signature sits after InfDeclaracaoPrestacaoServico in both.
   */
  signed: Element;
  /** the RPS is in the official 2.00 layout */
  layout200: boolean;
}

const num = (value: string | undefined) => Number(value ?? 0) || 0;

export function readRps(rps: Element): RpsData {
  const inf = child(rps, 'InfDeclaracaoPrestacaoServico')!;
  const inner = child(inf, 'Rps');
  const layout200 = !inf.hasAttribute('Id') && inner?.hasAttribute('Id') === true;
  const ident = at(inf, 'Rps/IdentificacaoRps');
  const valores = at(inf, 'Servico/Valores');
  const v = (name: string) => num(textAt(valores, name));
  const issRetido = textAt(inf, 'Servico/IssRetido') === '1';
  return {
    ident: {
      numero: String(Number(textAt(ident, 'Numero') ?? '0')),
      serie: (textAt(ident, 'Serie') ?? '').trim(),
      tipo: textAt(ident, 'Tipo') ?? '1',
    },
    dataEmissao: textAt(inf, 'Rps/DataEmissao') ?? '',
    competencia: textAt(inf, 'Competencia') ?? '',
    prestador: cpfCnpjOf(child(inf, 'Prestador')),
    inscricaoMunicipal: textAt(inf, 'Prestador/InscricaoMunicipal') ?? null,
    codigoMunicipio: textAt(inf, 'Servico/CodigoMunicipio') ?? '',
    valorServicos: v('ValorServicos'),
    aliquota: textAt(valores, 'Aliquota') ?? null,
    valorIss: v('ValorIss'),
    retencoes: v('ValorPis') + v('ValorCofins') + v('ValorInss') + v('ValorIr') + v('ValorCsll') + v('OutrasRetencoes'),
    issRetido,
    declaracaoXml: childElements(rps).map(serialize).join(''),
    inf,
    signed: layout200 ? inner! : inf,
    layout200,
  };
}

/**
 * The signature checks of one RPS (E174 unsigned, E324 invalid, E171 signed by someone else than its prestador).
 * `required`: the provider signs RPS.
 */
export function checkRpsSignature(
  xml: string,
  rps: RpsData,
  required: boolean,
  documentReference = false,
): Mensagem | null {
  const parent = rps.inf.parentNode as Element;
  if (!hasSignature(parent)) return required ? official('E174', undefined, rps.ident) : null;
  const check = verifyRps(xml, rps, documentReference);
  if (!check.ok) return official('E324', check.detail, rps.ident);
  const signer = check.value.identity.cnpj ?? check.value.identity.cpf ?? '';
  if (!signer || rootOf(signer) !== rootOf(rps.prestador)) {
    return official(
      'E171',
      `Certificado de ${signer || 'titular desconhecido'}; prestador ${rps.prestador}.`,
      rps.ident,
    );
  }
  return null;
}

export const verificationCode = () =>
  Array.from({ length: 9 }, () => 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'[randomInt(0, 32)]).join('');

const money = (value: number) => value.toFixed(2);

export interface ComposeNfseOptions {
  dataNamespace: string | null;
  version: string;
  numero: string;
  codigoVerificacao: string;
  dataEmissao: string;
  rps: RpsData;
  razaoSocial: string;
  signer: SandboxSigner;
  /** false: the NFS-e is returned unsigned */
  signed?: boolean;
  /** InfNfse/ChaveAcesso, when the provider writes one */
  chaveAcesso?: string;
}

/** The NFS-e (tcNfse) of an RPS, signed by the sandbox on InfNfse as a provider's server does. */
export function composeNfse(options: ComposeNfseOptions): string {
  const { rps } = options;
  const ns = options.dataNamespace ? ` xmlns="${options.dataNamespace}"` : '';
  const city = findMunicipality(rps.codigoMunicipio);
  const base = rps.valorServicos;
  const liquido = Math.max(0, base - rps.retencoes - (rps.issRetido ? rps.valorIss : 0));
  const el = (name: string, value: string | null | undefined) =>
    value ? `<${name}>${escapeXml(value)}</${name}>` : '';
  const prestadorId = `<CpfCnpj>${rps.prestador.length === 11 ? el('Cpf', rps.prestador) : el('Cnpj', rps.prestador)}</CpfCnpj>`;
  const unsigned =
    `<Nfse${ns} versao="${rps.layout200 ? '2.00' : options.version}"><InfNfse${options.signed === false ? '' : ` Id="NFSE${rps.prestador}N${options.numero}"`}>` +
    el('Numero', options.numero) +
    el('CodigoVerificacao', options.codigoVerificacao) +
    el('DataEmissao', options.dataEmissao) +
    `<ValoresNfse>${el('BaseCalculo', money(base))}${el('Aliquota', rps.aliquota)}` +
    `${rps.valorIss > 0 ? el('ValorIss', money(rps.valorIss)) : ''}${el('ValorLiquidoNfse', money(liquido))}</ValoresNfse>` +
    // ABRASF 2.04's tcDadosPrestador has no IdentificacaoPrestador (the prestador is in the declaration)
    (rps.layout200
      ? `<EnderecoPrestadorServico>${el('CodigoMunicipio', rps.codigoMunicipio)}${el('Uf', city?.uf)}</EnderecoPrestadorServico>`
      : `<PrestadorServico>${options.version === '2.04' ? '' : `<IdentificacaoPrestador>${prestadorId}${el('InscricaoMunicipal', rps.inscricaoMunicipal)}</IdentificacaoPrestador>`}` +
        `${el('RazaoSocial', options.razaoSocial.slice(0, 150) || rps.prestador)}<Endereco>${el('CodigoMunicipio', rps.codigoMunicipio)}${el('Uf', city?.uf)}</Endereco></PrestadorServico>`) +
    `<OrgaoGerador>${el('CodigoMunicipio', rps.codigoMunicipio)}${el('Uf', city?.uf ?? 'SP')}</OrgaoGerador>` +
    `<DeclaracaoPrestacaoServico>${rps.declaracaoXml}</DeclaracaoPrestacaoServico>` +
    `${el('ChaveAcesso', options.chaveAcesso)}</InfNfse></Nfse>`;
  if (options.signed === false) return unsigned;
  return signEnveloped(
    unsigned,
    { rootName: 'Nfse', elementName: 'InfNfse' },
    options.signer,
    ABRASF_SIGNATURE_PROFILE,
  );
}

export function listaMensagens(mensagens: Mensagem[], lote = false): string {
  const el = (name: string, value: string | undefined) => (value ? `<${name}>${escapeXml(value)}</${name}>` : '');
  const items = mensagens
    .map((m) =>
      lote && m.rps
        ? `<MensagemRetorno><IdentificacaoRps>${el('Numero', m.rps.numero)}${el('Serie', m.rps.serie)}${el('Tipo', m.rps.tipo)}</IdentificacaoRps>${el('Codigo', m.codigo)}${el('Mensagem', m.mensagem.slice(0, 200))}</MensagemRetorno>`
        : `<MensagemRetorno>${el('Codigo', m.codigo)}${el('Mensagem', m.mensagem.slice(0, 200))}${el('Correcao', m.correcao)}</MensagemRetorno>`,
    )
    .join('');
  return lote
    ? `<ListaMensagemRetornoLote>${items}</ListaMensagemRetornoLote>`
    : `<ListaMensagemRetorno>${items}</ListaMensagemRetorno>`;
}
