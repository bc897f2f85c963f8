import { createSign, type KeyObject } from 'node:crypto';
import type { NormalizedInvoice, PartyId } from '../../domain/invoice/normalized.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { escapeXmlText } from '../../xml/escape.ts';

/**
 * City of São Paulo (NF-e Paulistana) layout v02 messages (briefs/providers-own.md §1.4–1.5; manual
 * NFe_Web_Service v3.3.5, schemas-reformatributaria-v02-4): the Pedido roots in `http://www.prefeitura.sp.gov.br/nfe`
 * with unqualified children (`xmlns=""`, the schemas have no elementFormDefault), and the two signature strings.
 */
export const SP_NAMESPACE = 'http://www.prefeitura.sp.gov.br/nfe';
export const SP_VERSION = '2';
export const SAO_PAULO_IBGE = '3550308';

/** `tpValor`: decimal point, no leading zeros, "0" for zero (manual §3.4.4). */
export function spValue(value: number): string {
  const fixed = (Math.round(value * 100) / 100).toFixed(2);
  return fixed === '0.00' ? '0' : fixed;
}

const cents = (value: number, width: number) => String(Math.round(value * 100)).padStart(width, '0');
const digits = (value: string) => value.replace(/\D/g, '');

/** The tomador indicator and document of the RPS signature string (1 CPF, 2 CNPJ, 3 none, 4 NIF / NaoNIF). */
function takerOf(id: PartyId | null): { indicator: string; document: string; suffix: string } {
  if (!id) return { indicator: '3', document: '0'.repeat(14), suffix: '' };
  switch (id.kind) {
    case 'cpf':
      return { indicator: '1', document: id.cpf.padStart(14, '0'), suffix: '' };
    case 'cnpj':
      return { indicator: '2', document: id.cnpj.padStart(14, '0'), suffix: '' };
    case 'nif':
      return { indicator: '4', document: '0'.repeat(14), suffix: id.nif.trim().slice(0, 40) };
    default:
      return { indicator: '4', document: '0'.repeat(14), suffix: String(id.motivo) };
  }
}

export interface RpsSignatureFields {
  ccm: string;
  serie: string;
  numero: number | string;
  /** AAAA-MM-DD */
  dataEmissao: string;
  tributacao: string;
  status: 'N' | 'C';
  issRetido: boolean;
  valorFinalCobrado: number;
  valorDeducoes: number;
  codigoServico: string;
  tomador: PartyId | null;
}

/**
 * The v2 RPS signature string ([SP334] pp. 46–48): CCM 12, série 5 (space-padded right), number 12, AAAAMMDD,
 * TributacaoRPS, StatusRPS, ISS retido S/N, ValorFinalCobrado in cents 15, ValorDeducoes 15, CodigoServico 5, taker
 * indicator and document 14, then the NIF (trimmed) or the NaoNIF digit. 90 characters without NIF or intermediary.
 */
export function rpsSignatureString(f: RpsSignatureFields): string {
  const taker = takerOf(f.tomador);
  return (
    digits(f.ccm).padStart(12, '0') +
    f.serie.padEnd(5, ' ').slice(0, 5) +
    String(f.numero).padStart(12, '0') +
    f.dataEmissao.replaceAll('-', '') +
    f.tributacao +
    f.status +
    (f.issRetido ? 'S' : 'N') +
    cents(f.valorFinalCobrado, 15) +
    cents(f.valorDeducoes, 15) +
    f.codigoServico.padStart(5, '0') +
    taker.indicator +
    taker.document +
    taker.suffix
  );
}

/** The cancellation signature string ([SP335] §4.3.10): CCM 8 digits + NF-e number 12 digits. */
export function cancellationSignatureString(ccm: string, numeroNFe: string): string {
  return digits(ccm).padStart(8, '0') + digits(numeroNFe).padStart(12, '0');
}

/** RSA-SHA1 over the ASCII string, base64 (signed once, never hashed twice). */
export function signString(value: string, key: KeyObject): string {
  return createSign('RSA-SHA1').update(value, 'ascii').sign(key, 'base64');
}

export function remetente(cnpjOrCpf: string): string {
  const value = digits(cnpjOrCpf);
  return value.length === 11 ? `<CPF>${value}</CPF>` : `<CNPJ>${value.padStart(14, '0')}</CNPJ>`;
}

function partyXml(id: PartyId): string {
  switch (id.kind) {
    case 'cpf':
      return `<CPF>${id.cpf}</CPF>`;
    case 'cnpj':
      return `<CNPJ>${id.cnpj}</CNPJ>`;
    case 'nif':
      return `<NIF>${escapeXmlText(id.nif.trim().slice(0, 40))}</NIF>`;
    default:
      return `<NaoNIF>${id.motivo}</NaoNIF>`;
  }
}

/** The Brasília calendar date of an instant (AAAA-MM-DD). */
export function brasiliaDate(at: Date): string {
  return new Date(at.getTime() - 3 * 3_600_000).toISOString().slice(0, 10);
}

/** Only ASCII-safe text: SP refused non-ASCII dashes and "º" in Discriminacao (error 1001, [FIELD-SP]). */
function plain(value: string, max: number): string {
  const cleaned = value
    .replace(/[\u2010-\u2015]/g, '-')
    .replace(/[ºª°]/g, '.')
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return escapeXmlText(cleaned.slice(0, max));
}

export interface RpsInput {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  serie: string;
  numero: number;
  issuedAt: Date;
  privateKey: KeyObject;
  remetente: string;
}

/** The TributacaoRPS of an invoice: T (taxed in São Paulo) or F (taxed outside São Paulo). */
export function tributacaoOf(invoice: NormalizedInvoice): 'T' | 'F' {
  const local = invoice.servico.localPrestacao;
  return local.kind === 'municipio' && local.codigoMunicipio !== SAO_PAULO_IBGE ? 'F' : 'T';
}

/** `PedidoEnvioRPS` v2 (unsigned): one RPS with its signature string signed. */
export function buildPedidoEnvioRps(input: RpsInput): string {
  const { project, invoice } = input;
  const ccm = digits(project.inscricaoMunicipal ?? '');
  const dataEmissao = brasiliaDate(input.issuedAt);
  const tributacao = tributacaoOf(invoice);
  const codigoServico = invoice.servico.codigoServicoMunicipal ?? '';
  const tomador = invoice.tomador.id;
  const assinatura = signString(
    rpsSignatureString({
      ccm,
      serie: input.serie,
      numero: input.numero,
      dataEmissao,
      tributacao,
      status: 'N',
      issRetido: invoice.iss.retido,
      valorFinalCobrado: invoice.total,
      valorDeducoes: 0,
      codigoServico,
      tomador,
    }),
    input.privateKey,
  );
  const ibscbs = invoice.ibscbs;
  const local = invoice.servico.localPrestacao;
  const cLoc = local.kind === 'municipio' ? local.codigoMunicipio : SAO_PAULO_IBGE;
  const aliquota = Number((invoice.iss.aliquota / 100).toFixed(4));
  const rps =
    `<RPS xmlns=""><Assinatura>${assinatura}</Assinatura>` +
    `<ChaveRPS><InscricaoPrestador>${ccm}</InscricaoPrestador><SerieRPS>${escapeXmlText(input.serie)}</SerieRPS>` +
    `<NumeroRPS>${input.numero}</NumeroRPS></ChaveRPS><TipoRPS>RPS</TipoRPS><DataEmissao>${dataEmissao}</DataEmissao>` +
    `<StatusRPS>N</StatusRPS><TributacaoRPS>${tributacao}</TributacaoRPS><ValorDeducoes>0</ValorDeducoes>` +
    '<ValorPIS>0</ValorPIS><ValorCOFINS>0</ValorCOFINS><ValorINSS>0</ValorINSS><ValorIR>0</ValorIR><ValorCSLL>0</ValorCSLL>' +
    `<CodigoServico>${codigoServico}</CodigoServico><AliquotaServicos>${aliquota}</AliquotaServicos>` +
    `<ISSRetido>${invoice.iss.retido}</ISSRetido>` +
    `<CPFCNPJTomador>${partyXml(tomador)}</CPFCNPJTomador>` +
    `<RazaoSocialTomador>${plain(invoice.tomador.nome, 75)}</RazaoSocialTomador>` +
    (invoice.tomador.email ? `<EmailTomador>${plain(invoice.tomador.email, 75)}</EmailTomador>` : '') +
    `<Discriminacao>${plain(invoice.servico.descricao, 2000)}</Discriminacao>` +
    (tributacao === 'T' ? '' : `<MunicipioPrestacao>${cLoc}</MunicipioPrestacao>`) +
    `<ValorFinalCobrado>${spValue(invoice.total)}</ValorFinalCobrado>` +
    '<ValorIPI>0</ValorIPI><ExigibilidadeSuspensa>0</ExigibilidadeSuspensa>' +
    '<PagamentoParceladoAntecipado>0</PagamentoParceladoAntecipado>' +
    `<NBS>${ibscbs?.nbs ?? invoice.servico.nbs ?? ''}</NBS><cLocPrestacao>${cLoc}</cLocPrestacao>` +
    `<IBSCBS><finNFSe>0</finNFSe><indFinal>${ibscbs?.consumidorFinal ? 1 : 0}</indFinal>` +
    `<cIndOp>${ibscbs?.indicadorOperacao ?? ''}</cIndOp><indDest>${ibscbs?.indDest ?? 0}</indDest>` +
    `<valores><trib><gIBSCBS><cClassTrib>${ibscbs?.classificacaoTributaria ?? ''}</cClassTrib></gIBSCBS></trib></valores>` +
    '</IBSCBS></RPS>';
  return (
    `<PedidoEnvioRPS xmlns="${SP_NAMESPACE}"><Cabecalho xmlns="" Versao="${SP_VERSION}">` +
    `<CPFCNPJRemetente>${remetente(input.remetente)}</CPFCNPJRemetente></Cabecalho>${rps}</PedidoEnvioRPS>`
  );
}

export interface RpsKey {
  ccm: string;
  serie: string;
  numero: string;
}

/** The prepared document's id: the ChaveRPS as `ccm:serie:numero`. */
export const rpsKeyId = (key: RpsKey) => `${key.ccm}:${key.serie}:${key.numero}`;
export function rpsKeyOf(id: string): RpsKey {
  const [ccm = '', serie = '', numero = ''] = id.split(':');
  return { ccm, serie, numero };
}

/** `PedidoConsultaNFe` v2 (unsigned) for one RPS or one NF-e. */
export function buildPedidoConsultaNfe(
  sender: string,
  detail: { rps: RpsKey } | { nfe: { ccm: string; numero: string } },
): string {
  const chave =
    'rps' in detail
      ? `<ChaveRPS><InscricaoPrestador>${detail.rps.ccm}</InscricaoPrestador><SerieRPS>${escapeXmlText(detail.rps.serie)}</SerieRPS><NumeroRPS>${detail.rps.numero}</NumeroRPS></ChaveRPS>`
      : `<ChaveNFe><InscricaoPrestador>${detail.nfe.ccm}</InscricaoPrestador><NumeroNFe>${detail.nfe.numero}</NumeroNFe></ChaveNFe>`;
  return (
    `<PedidoConsultaNFe xmlns="${SP_NAMESPACE}"><Cabecalho xmlns="" Versao="${SP_VERSION}">` +
    `<CPFCNPJRemetente>${remetente(sender)}</CPFCNPJRemetente></Cabecalho><Detalhe xmlns="">${chave}</Detalhe></PedidoConsultaNFe>`
  );
}

/** `PedidoCancelamentoNFe` v2 (unsigned): one NF-e with its `AssinaturaCancelamento`. */
export function buildPedidoCancelamentoNfe(sender: string, ccm: string, numero: string, key: KeyObject): string {
  const assinatura = signString(cancellationSignatureString(ccm, numero), key);
  return (
    `<PedidoCancelamentoNFe xmlns="${SP_NAMESPACE}"><Cabecalho xmlns="" Versao="${SP_VERSION}">` +
    `<CPFCNPJRemetente>${remetente(sender)}</CPFCNPJRemetente><transacao>true</transacao></Cabecalho>` +
    `<Detalhe xmlns=""><ChaveNFe><InscricaoPrestador>${digits(ccm)}</InscricaoPrestador><NumeroNFe>${numero}</NumeroNFe></ChaveNFe>` +
    `<AssinaturaCancelamento>${assinatura}</AssinaturaCancelamento></Detalhe></PedidoCancelamentoNFe>`
  );
}

/**
 * `PedidoEnvioLoteRPS` of the asynchronous service (PedidoEnvioLoteRPSAsync_v02.xsd, §1.6) holding one RPS: the same
 * RPS (and its v2 signature string) as `PedidoEnvioRPS`, under the v2 lote header (§1.4): `transacao` true, `dtInicio`
 * = `dtFim` = the RPS's DataEmissao, `QtdRPS` 1 (no ValorTotal*: v1 only). Unsigned (the kit signs the whole root).
 */
export function buildPedidoEnvioLoteRpsAsync(input: RpsInput): string {
  const single = buildPedidoEnvioRps(input);
  const dia = brasiliaDate(input.issuedAt);
  return single
    .replace(/^<PedidoEnvioRPS /, '<PedidoEnvioLoteRPS ')
    .replace(/<\/PedidoEnvioRPS>$/, '</PedidoEnvioLoteRPS>')
    .replace(
      '</CPFCNPJRemetente></Cabecalho>',
      `</CPFCNPJRemetente><transacao>true</transacao><dtInicio>${dia}</dtInicio><dtFim>${dia}</dtFim><QtdRPS>1</QtdRPS></Cabecalho>`,
    );
}

/**
 * The signed async lote read as the `PedidoEnvioRPS` it wraps (its one RPS, its signature), so the engine validates
 * it against the official v02 RPS schema before sending; the sandbox validates the lote against the async XSD itself.
 */
export function loteAsSingleRps(signedLote: string): string {
  return signedLote
    .replace(/^(<\?xml[^>]*>)?<PedidoEnvioLoteRPS /, '<PedidoEnvioRPS ')
    .replace(/<\/PedidoEnvioLoteRPS>$/, '</PedidoEnvioRPS>')
    .replace(
      /<transacao>[^<]*<\/transacao><dtInicio>[^<]*<\/dtInicio><dtFim>[^<]*<\/dtFim><QtdRPS>[^<]*<\/QtdRPS>/,
      '',
    );
}

/** `PedidoConsultaSituacaoLote` (ConsultaSituacaoLoteAsync_v02.xsd: unsigned, no Cabecalho) for one protocol. */
export function buildPedidoConsultaSituacaoLote(sender: string, protocolo: string): string {
  return (
    `<PedidoConsultaSituacaoLote xmlns="${SP_NAMESPACE}"><CPFCNPJRemetente xmlns="">${remetente(sender)}</CPFCNPJRemetente>` +
    `<NumeroProtocolo xmlns="">${escapeXmlText(protocolo)}</NumeroProtocolo></PedidoConsultaSituacaoLote>`
  );
}
