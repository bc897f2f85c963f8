import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { formatDateTimeWithOffset } from '../../xml/datetime.ts';
import { escapeXmlAttr, escapeXmlText } from '../../xml/escape.ts';
import { tomadorXml } from '../abrasf-v1/messages.ts';
import type { PrepareInput } from '../types.ts';

/**
 * The GINFES "v3" (ABRASF 1.0) messages, in the element order of the nfephp 2020 schemas (schemas/ginfes/:
 * tipos_v03.xsd tcInfRps, tcDadosServico, tcValores, tcDadosTomador, tcLoteRps; the servico_*_envio_v03.xsd
 * message roots). Each message has its own target namespace; the types live in `tipos_v03.xsd` and are written
 * with the `tipos:` prefix (briefs/providers-own.md §3.2). Canonical text by construction.
 */
export const TIPOS_NS = 'http://www.ginfes.com.br/tipos_v03.xsd';
export const CABECALHO_NS = 'http://www.ginfes.com.br/cabecalho_v03.xsd';
export const messageNamespace = (service: string) => `http://www.ginfes.com.br/${service}_v03.xsd`;

const BRASILIA = -180;
const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');
const cut = (value: string | null | undefined, max: number) => (value ? value.trim().slice(0, max) : null);
const money = (value: number) => value.toFixed(2);

/** `<tipos:name>value</tipos:name>`, or nothing when the value is null/empty. */
export function t(name: string, value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  return `<tipos:${name}>${escapeXmlText(String(value))}</tipos:${name}>`;
}

/** The cabecalho of every V3 call (`arg0`). */
export function cabecalho(): string {
  return `<ns2:cabecalho versao="3" xmlns:ns2="${CABECALHO_NS}"><versaoDados>3</versaoDados></ns2:cabecalho>`;
}

/** The 7-digit CNAE of the invoice or the project (required for GINFES: spec 4.8). */
export function cnaeOf(project: ProjectFiscalProfile, invoice: NormalizedInvoice): string {
  return digits(invoice.servico.cnae ?? project.cnae).slice(0, 7);
}

/** ItemListaServico as `11.01` (the nfephp fixture's form; tsItemListaServico is at most 5 characters). */
export function itemListaServico(subitem: string): string {
  const [item = '', sub = ''] = subitem.split('.');
  return `${item.padStart(2, '0')}.${sub.padStart(2, '0')}`;
}

/**
 * NaturezaOperacao (tsNaturezaOperacao 1–6) from the national tribISSQN: taxable → 1 (in the municipality) or 2
 * (outside it); immune → 4; not levied → 3 (isenção, the closest ABRASF 1.0 meaning).
 */
function naturezaOperacao(project: ProjectFiscalProfile, invoice: NormalizedInvoice): string {
  const local = invoice.servico.localPrestacao;
  if (invoice.iss.tribISSQN === 2) return '4';
  if (invoice.iss.tribISSQN === 4) return '3';
  return local.kind === 'municipio' && local.codigoMunicipio !== project.codigoMunicipio ? '2' : '1';
}

function valores(invoice: NormalizedInvoice): string {
  const { iss, federal, total } = invoice;
  const pis = federal?.pisCofins?.tipoRetencao === 1 ? federal.pisCofins : null;
  const taxable = iss.tribISSQN === 1 && iss.aliquota > 0;
  const valorIss = taxable ? Math.round(total * iss.aliquota) / 100 : null;
  const positive = (value: number | null | undefined) => (value && value > 0 ? money(value) : null);
  return (
    t('ValorServicos', money(total)) +
    t('ValorPis', positive(pis?.valorPis)) +
    t('ValorCofins', positive(pis?.valorCofins)) +
    t('ValorInss', positive(federal?.retencaoCp)) +
    t('ValorIr', positive(federal?.retencaoIrrf)) +
    t('ValorCsll', positive(federal?.retencaoCsll)) +
    t('IssRetido', iss.retido ? '1' : '2') +
    t('ValorIss', valorIss === null ? null : money(valorIss)) +
    t('ValorIssRetido', iss.retido && valorIss !== null ? money(valorIss) : null) +
    t('BaseCalculo', money(total)) +
    // tsAliquota decimal(5,4): a fraction (5 % → 0.0500), as ACBr writes it for GINFES
    t('Aliquota', taxable ? (iss.aliquota / 100).toFixed(4) : null)
  );
}

export interface RpsIdentity {
  numero: string;
  serie: string;
  tipo: string;
}

/**
 * The lote of one RPS (EnviarLoteRpsEnvio), unsigned: the kit signs LoteRps@Id and puts the Signature last in
 * the root (brief §3.3; ACBr does not sign the RPS itself). NumeroLote is the RPS number, so a resend is the same
 * lote with the same bytes.
 */
export function buildLote(input: PrepareInput): { id: string; xml: string } {
  const { project, invoice } = input;
  const rps: RpsIdentity = { numero: String(input.number), serie: input.serie.trim(), tipo: '1' };
  const cnpj = digits(project.cnpj);
  const emissao = formatDateTimeWithOffset(input.issuedAt, BRASILIA).slice(0, 19);
  const local = invoice.servico.localPrestacao;
  const s = invoice.servico;
  const infRps =
    `<tipos:InfRps Id="${escapeXmlAttr(`RPS${rps.serie}N${rps.numero}`)}">` +
    identificacaoRps(rps) +
    t('DataEmissao', emissao) +
    t('NaturezaOperacao', naturezaOperacao(project, invoice)) +
    t('OptanteSimplesNacional', invoice.regime.simples ? '1' : '2') +
    t('IncentivadorCultural', '2') +
    t('Status', '1') +
    `<tipos:Servico><tipos:Valores>${valores(invoice)}</tipos:Valores>` +
    t('ItemListaServico', itemListaServico(s.subitem)) +
    t('CodigoCnae', cnaeOf(project, invoice)) +
    t('CodigoTributacaoMunicipio', cut(s.codigoTributacaoMunicipal, 20)) +
    t('Discriminacao', s.descricao.replace(/\r?\n/g, '|').slice(0, 2000)) +
    t('CodigoMunicipio', local.kind === 'municipio' ? local.codigoMunicipio : project.codigoMunicipio) +
    '</tipos:Servico>' +
    `<tipos:Prestador>${t('Cnpj', cnpj)}${t('InscricaoMunicipal', cut(project.inscricaoMunicipal, 15))}</tipos:Prestador>` +
    tomadorXml(invoice.tomador, 'tipos:') +
    '</tipos:InfRps>';
  const id = `LOTE${cnpj}N${rps.numero}`;
  const xml =
    `<EnviarLoteRpsEnvio xmlns="${messageNamespace('servico_enviar_lote_rps_envio')}" xmlns:tipos="${TIPOS_NS}">` +
    `<LoteRps Id="${id}">${t('NumeroLote', rps.numero)}${t('Cnpj', cnpj)}` +
    `${t('InscricaoMunicipal', cut(project.inscricaoMunicipal, 15))}${t('QuantidadeRps', '1')}` +
    `<tipos:ListaRps><tipos:Rps>${infRps}</tipos:Rps></tipos:ListaRps></LoteRps></EnviarLoteRpsEnvio>`;
  return { id, xml };
}

export function identificacaoRps(rps: RpsIdentity): string {
  return `<tipos:IdentificacaoRps>${t('Numero', rps.numero)}${t('Serie', rps.serie)}${t('Tipo', rps.tipo)}</tipos:IdentificacaoRps>`;
}

/** The RPS identification and the provider of a signed lote (read back from our own canonical text). */
export function loteFacts(loteXml: string): RpsIdentity & { cnpj: string; inscricaoMunicipal: string | null } {
  const ident =
    /<tipos:IdentificacaoRps><tipos:Numero>(\d+)<\/tipos:Numero><tipos:Serie>([^<]+)<\/tipos:Serie><tipos:Tipo>(\d)<\/tipos:Tipo>/.exec(
      loteXml,
    );
  const cnpj = /<tipos:NumeroLote>\d+<\/tipos:NumeroLote><tipos:Cnpj>(\d+)<\/tipos:Cnpj>/.exec(loteXml);
  const im = /<tipos:QuantidadeRps>/.test(loteXml)
    ? /<\/tipos:Cnpj><tipos:InscricaoMunicipal>([^<]+)<\/tipos:InscricaoMunicipal><tipos:QuantidadeRps>/.exec(loteXml)
    : null;
  return {
    numero: ident?.[1] ?? '',
    serie: ident?.[2] ?? '',
    tipo: ident?.[3] ?? '1',
    cnpj: cnpj?.[1] ?? '',
    inscricaoMunicipal: im?.[1] ?? null,
  };
}

const prestador = (cnpj: string, im: string | null) =>
  `<Prestador>${t('Cnpj', digits(cnpj))}${t('InscricaoMunicipal', im)}</Prestador>`;

/** ConsultarSituacaoLoteRpsEnvio / ConsultarLoteRpsEnvio (signed whole, `URI=""`, by the caller). */
export function buildProtocolQuery(
  service: 'servico_consultar_situacao_lote_rps_envio' | 'servico_consultar_lote_rps_envio',
  cnpj: string,
  im: string | null,
  protocolo: string,
): string {
  const root =
    service === 'servico_consultar_lote_rps_envio' ? 'ConsultarLoteRpsEnvio' : 'ConsultarSituacaoLoteRpsEnvio';
  return (
    `<${root} xmlns="${messageNamespace(service)}" xmlns:tipos="${TIPOS_NS}">${prestador(cnpj, im)}` +
    `<Protocolo>${escapeXmlText(protocolo)}</Protocolo></${root}>`
  );
}

/** ConsultarNfseRpsEnvio (ConsultarNfsePorRpsV3). */
export function buildQueryByRps(rps: RpsIdentity, cnpj: string, im: string | null): string {
  return (
    `<ConsultarNfseRpsEnvio xmlns="${messageNamespace('servico_consultar_nfse_rps_envio')}" xmlns:tipos="${TIPOS_NS}">` +
    `<IdentificacaoRps>${t('Numero', rps.numero)}${t('Serie', rps.serie)}${t('Tipo', rps.tipo)}</IdentificacaoRps>` +
    `${prestador(cnpj, im)}</ConsultarNfseRpsEnvio>`
  );
}

/** ConsultarNfseEnvio (ConsultarNfseV3) by the note's number. */
export function buildQueryByNumber(numero: string, cnpj: string): string {
  return (
    `<ConsultarNfseEnvio xmlns="${messageNamespace('servico_consultar_nfse_envio')}" xmlns:tipos="${TIPOS_NS}">` +
    `${prestador(cnpj, null)}<NumeroNfse>${escapeXmlText(numero)}</NumeroNfse></ConsultarNfseEnvio>`
  );
}

/** CodigoCancelamento, 4 digits as ACBr writes it: 0002 "serviço não prestado", 0004 duplicidade, else 0001. */
export function cancellationCode(reason: string | null): string {
  const text = (reason ?? '')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  if (/nao (foi )?prestado/.test(text)) return '0002';
  if (/duplicidade|duplicad/.test(text)) return '0004';
  return '0001';
}

/**
 * CancelarNfseEnvio V3: its schema is `elementFormDefault="unqualified"`, so the root is prefixed and `Pedido` is in
 * no namespace; the kit signs InfPedidoCancelamento@Id, the Signature after it inside Pedido (tcPedidoCancelamento).
 */
export function buildCancelamento(note: {
  numero: string;
  cnpj: string;
  inscricaoMunicipal: string | null;
  codigoMunicipio: string;
  code: string;
}): { id: string; xml: string } {
  const id = `CANC${digits(note.cnpj)}N${note.numero}`;
  const xml =
    `<ns3:CancelarNfseEnvio xmlns:ns3="${messageNamespace('servico_cancelar_nfse_envio')}" xmlns:tipos="${TIPOS_NS}">` +
    `<Pedido><tipos:InfPedidoCancelamento Id="${id}"><tipos:IdentificacaoNfse>${t('Numero', note.numero)}` +
    `${t('Cnpj', digits(note.cnpj))}${t('InscricaoMunicipal', note.inscricaoMunicipal)}${t('CodigoMunicipio', note.codigoMunicipio)}` +
    `</tipos:IdentificacaoNfse>${t('CodigoCancelamento', note.code)}</tipos:InfPedidoCancelamento></Pedido></ns3:CancelarNfseEnvio>`;
  return { id, xml };
}
