import type { NormalizedInvoice, NormalizedParty } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { childElements, findDescendant, parseXml } from '../../xml/read.ts';
import type { GovernmentError, IssuedDocument, Outcome } from '../types.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { IPM_TOM_BY_IBGE } from './tom-codes.ts';

/**
 * IPM's own XML layout (Atende.Net "Eletron", ACBr IPM 1.01; briefs/providers-own.md §2.3–2.5): the message
 * builders and the `<retorno>` reader. The conservative readings are listed in ./definition.ts.
 */

/** The Receita "TOM" code of a municipality (IBGE code), from the shipped table; null when unknown. */
export function tomOf(ibge: string | null | undefined): string | null {
  return ibge ? (IPM_TOM_BY_IBGE[ibge] ?? null) : null;
}

/**
 * Element text, ASCII only: XML-escaped, every non-ASCII character as a numeric character reference. The bytes are
 * then the same in ISO-8859-1 (the samples' encoding) and UTF-8, whatever the server decodes them as.
 */
export function asciiText(value: string): string {
  return escapeXmlText(value).replace(/[^\x20-\x7e\t\n]/g, (c) => `&#${c.codePointAt(0)};`);
}

export const el = (name: string, value: string | null | undefined) =>
  value === null || value === undefined || value === '' ? '' : `<${name}>${asciiText(value)}</${name}>`;

/** Decimal comma, two places (`100,00`). */
export const money = (value: number) => value.toFixed(2).replace('.', ',');

/** Brasília (UTC-3) date `dd/mm/aaaa` and time `hh:mm:ss` of an instant. */
export function brasilia(at: Date): { date: string; time: string } {
  const local = new Date(at.getTime() - 3 * 3600_000).toISOString();
  return { date: `${local.slice(8, 10)}/${local.slice(5, 7)}/${local.slice(0, 4)}`, time: local.slice(11, 19) };
}

/** LC 116 subitem `07.02` → IPM `702`, `14.01` → `1401` (ACBr IPM.GravarXml; manual samples `706`). */
export const itemLista = (subitem: string) => subitem.replace('.', '').replace(/^0+(?=\d)/, '');

/** situacao_tributaria (manual §6.1): 0 TI, 1 TIRF (ISS withheld by the taker), 7 imune. */
export function situacaoTributaria(invoice: NormalizedInvoice): string | null {
  if (invoice.iss.tribISSQN === 1) return invoice.iss.retido ? '1' : '0';
  if (invoice.iss.tribISSQN === 2) return '7';
  return null;
}

export const XML_DECLARATION = '<?xml version="1.0" encoding="ISO-8859-1"?>';

function tomador(party: NormalizedParty): string {
  const id = party.id;
  const tipo = id.kind === 'cnpj' ? 'J' : 'F';
  const cpfcnpj = id.kind === 'cnpj' ? id.cnpj : id.kind === 'cpf' ? id.cpf : '';
  const address = party.endereco;
  const cidade = tomOf(address?.codigoMunicipio);
  const informed = address !== null && cidade !== null;
  return (
    `<tomador>${el('endereco_informado', informed ? 'S' : 'N')}${el('tipo', tipo)}${el('cpfcnpj', cpfcnpj)}` +
    el('nome_razao_social', party.nome.slice(0, 100)) +
    el('email', party.email) +
    (informed
      ? el('logradouro', address.logradouro) +
        el('numero_residencia', address.numero) +
        el('complemento', address.complemento) +
        el('bairro', address.bairro) +
        el('cidade', cidade) +
        el('cep', address.cep)
      : '') +
    '</tomador>'
  );
}

/** The emission message: one note per XML, `<identificador>` the idempotency key. */
export function emissionXml(input: {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  identificador: string;
  serie: string;
  number: number;
  issuedAt: Date;
}): string {
  const { project, invoice } = input;
  const when = brasilia(input.issuedAt);
  const s = invoice.servico;
  const local = s.localPrestacao.kind === 'municipio' ? s.localPrestacao.codigoMunicipio : project.codigoMunicipio;
  const incidence = invoice.iss.retido ? null : (s.municipioIncidencia ?? project.codigoMunicipio);
  const federal = invoice.federal;
  const issrf = invoice.iss.retido ? (invoice.total * invoice.iss.aliquota) / 100 : 0;
  const observacao = [s.informacoesComplementares, invoice.referencia ? `Ref.: ${invoice.referencia}` : null]
    .filter(Boolean)
    .join(' ');
  return (
    `${XML_DECLARATION}<nfse>${el('identificador', input.identificador)}` +
    `<rps>${el('nro_recibo_provisorio', String(input.number))}${el('serie_recibo_provisorio', input.serie)}` +
    `${el('data_emissao_recibo_provisorio', when.date)}${el('hora_emissao_recibo_provisorio', when.time)}</rps>` +
    `<nf>${el('data_fato_gerador', when.date)}${el('valor_total', money(invoice.total))}` +
    `${el('valor_desconto', money(0))}${el('valor_ir', money(federal?.retencaoIrrf ?? 0))}` +
    `${el('valor_inss', money(federal?.retencaoCp ?? 0))}` +
    `${el('valor_contribuicao_social', money(federal?.retencaoCsll ?? 0))}${el('valor_rps', money(0))}` +
    `${el('valor_pis', money(0))}${el('valor_cofins', money(0))}${el('observacao', observacao.slice(0, 1000))}</nf>` +
    `<prestador>${el('cpfcnpj', project.cnpj)}${el('cidade', tomOf(project.codigoMunicipio))}</prestador>` +
    tomador(invoice.tomador) +
    '<itens><lista>' +
    el('tributa_municipio_prestador', incidence === null || incidence === project.codigoMunicipio ? 'S' : 'N') +
    el('codigo_local_prestacao_servico', tomOf(local)) +
    el('codigo_item_lista_servico', itemLista(s.subitem)) +
    el('codigo_atividade', s.cnae) +
    el('codigo_nbs', s.nbs) +
    el('descritivo', s.descricao.slice(0, 2000)) +
    el('aliquota_item_lista_servico', money(invoice.iss.aliquota)) +
    el('situacao_tributaria', situacaoTributaria(invoice)) +
    el('valor_tributavel', money(invoice.total)) +
    el('valor_deducao', money(0)) +
    el('valor_issrf', money(issrf)) +
    '</lista></itens></nfse>'
  );
}

/** A field of a message or an answer (any depth), trimmed; null when absent or empty. */
export function field(xml: string, name: string): string | null {
  const parsed = parseXml(xml);
  if (!parsed.ok) return null;
  return findDescendant(parsed.root, name)?.textContent?.trim() || null;
}

/** `NNNNN - texto` messages of a `<retorno>` (`mensagem/codigo`, one or more). */
export function messagesOf(root: Element): GovernmentError[] {
  const mensagem = findDescendant(root, 'mensagem');
  if (!mensagem) return [];
  return childElements(mensagem)
    .filter((e) => e.localName === 'codigo')
    .map((e) => {
      const raw = e.textContent?.trim() ?? '';
      const found = /^(?:XSD Error\s+)?(\d{1,5})\s*-?\s*(.*)$/s.exec(raw);
      return found
        ? { Codigo: found[1].padStart(5, '0'), Descricao: found[2] || raw }
        : { Codigo: 'IPM', Descricao: raw || 'mensagem sem código' };
    });
}

/** 00000 and 00001 are informative (ACBr treats them as alerts); any other code is an error. */
const INFORMATIVE = new Set(['00000', '00001']);

export type Retorno =
  | { kind: 'note'; root: Element; alerts: GovernmentError[] }
  | { kind: 'errors'; errors: GovernmentError[] }
  | { kind: 'failure'; outcome: Outcome<never> };

/** Reads an answer: transport-level refusals, JSON errors, a body with no XML (error 999), or a `<retorno>`. */
export function readRetorno(answer: HttpResponse): Retorno {
  const status = answer.status;
  if (status === 429 || status >= 500) {
    return { kind: 'failure', outcome: { kind: 'transient', reason: `HTTP ${status}`, httpStatus: status } };
  }
  const body = answer.body.trim();
  if (!body.includes('<')) {
    try {
      const json = JSON.parse(body) as { retorno?: { code?: unknown; msg?: unknown } };
      if (json.retorno) {
        return {
          kind: 'errors',
          errors: [{ Codigo: String(json.retorno.code ?? 'IPM'), Descricao: String(json.retorno.msg ?? '') }],
        };
      }
    } catch {
      // not JSON: error 999 below
    }
    return { kind: 'errors', errors: [{ Codigo: '999', Descricao: body.slice(0, 500) || `HTTP ${status} sem corpo` }] };
  }
  const parsed = parseXml(body);
  if (!parsed.ok) return { kind: 'errors', errors: [{ Codigo: '999', Descricao: parsed.message }] };
  const messages = messagesOf(parsed.root);
  const errors = messages.filter((m) => !INFORMATIVE.has(m.Codigo));
  if (errors.length > 0 || status >= 400) {
    return {
      kind: 'errors',
      errors: errors.length > 0 ? errors : [{ Codigo: `HTTP${status}`, Descricao: body.slice(0, 500) }],
    };
  }
  return { kind: 'note', root: parsed.root, alerts: messages };
}

export function rejected(errors: GovernmentError[]): Outcome<never> {
  const first = errors[0] ?? { Codigo: 'IPM', Descricao: 'recusa sem mensagem' };
  return { kind: 'rejected', errorCode: first.Codigo, errorMessage: first.Descricao, errors };
}

/** The note of a `<retorno>` (or a newer answer echoing `<nfse>`): null when it carries no number. */
export function issuedOf(root: Element, xml: string, ambiente: 1 | 2): IssuedDocument | null {
  const get = (name: string) => findDescendant(root, name)?.textContent?.trim() || null;
  const numero = get('numero_nfse') ?? get('numero');
  if (!numero) return null;
  const date = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(get('data_nfse') ?? '');
  const time = get('hora_nfse') ?? '00:00:00';
  const emittedAt = date ? new Date(`${date[3]}-${date[2]}-${date[1]}T${time}-03:00`) : new Date();
  return {
    chave: null,
    numero,
    verificationCode: get('cod_verificador_autenticidade') ?? get('codigo_autenticidade'),
    emittedAt: Number.isNaN(emittedAt.getTime()) ? new Date() : emittedAt,
    xml,
    ambiente,
  };
}
