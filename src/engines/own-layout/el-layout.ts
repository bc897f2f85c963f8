import type { NormalizedAddress, NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { childElements, findDescendant, parseXml } from '../../xml/read.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import type { GovernmentError, IssuedDocument, Outcome } from '../types.ts';

/**
 * E&L's legacy own layout (`RpsServiceService`): the `LoteRps` builder (schemas/el/el-nfse-legacy.xsd) and the reader
 * of the service's `<return>` answers. Sources and readings: ./el.ts.
 */

export const EL_LOTE_NAMESPACE = 'http://www.el.com.br/nfse/xsd/el-nfse.xsd';
/** The service namespace of every RpsServiceService operation (the WSDL's targetNamespace). */
export const EL_SERVICE_NAMESPACE = 'http://des36.el.com.br:8080/el-issonline/';

const el = (name: string, value: string | null | undefined) =>
  value === null || value === undefined || value === '' ? '' : `<${name}>${escapeXmlText(value)}</${name}>`;

/** Decimal point, `places` fraction digits (the XSD's tsValor allows 4; money goes with 2). */
const decimal = (value: number, places = 2) => value.toFixed(places);

/** Brasília (UTC-3) local date-time `aaaa-mm-ddThh:mm:ss` (xsd:dateTime without offset, as ACBr writes it). */
export function brasiliaDateTime(at: Date): string {
  return new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 19);
}

/** Rps/Id: 15 characters, zero-padded number followed by the series (tsCodigoVerificacao: 13 to 32). */
export function rpsId(number: number, serie: string): string {
  return `${'0'.repeat(15)}${number}${serie}`.slice(-15);
}

/** The CPF/CNPJ of a party and its IndicacaoCpfCnpj (1 CPF, 2 CNPJ); null for a foreign party. */
function identity(id: NormalizedInvoice['tomador']['id']): { doc: string; kind: '1' | '2' } | null {
  if (id.kind === 'cnpj') return { doc: id.cnpj, kind: '2' };
  if (id.kind === 'cpf') return { doc: id.cpf, kind: '1' };
  return null;
}

function address(a: {
  logradouro: string | null;
  numero: string | null;
  complemento: string | null;
  bairro: string | null;
  codigoMunicipio: string;
  municipio: string;
  uf: string;
  cep: string | null;
}): string {
  return (
    '<Endereco>' +
    el('Logradouro', a.logradouro?.slice(0, 130)) +
    el('LogradouroNumero', a.numero?.slice(0, 10)) +
    el('LogradouroComplemento', a.complemento?.slice(0, 60)) +
    el('Bairro', a.bairro?.slice(0, 70)) +
    el('CodigoMunicipio', a.codigoMunicipio) +
    el('Municipio', a.municipio.slice(0, 100)) +
    el('Uf', a.uf) +
    el('Cep', a.cep?.replace(/\D/g, '') || null) +
    '</Endereco>'
  );
}

/** A national address with what tcEndereco requires (IBGE code, city name, UF), or null. */
export function takerAddress(a: NormalizedAddress | null): string | null {
  if (!a?.nacional || !a.codigoMunicipio || !a.cidade || !a.uf) return null;
  return address({ ...a, codigoMunicipio: a.codigoMunicipio, municipio: a.cidade, uf: a.uf });
}

/** NaturezaOperacao (ABRASF 1 codes): 1 taxed in the municipality, 2 taxed outside, 4 immune; null otherwise. */
export function naturezaOperacao(project: ProjectFiscalProfile, invoice: NormalizedInvoice): string | null {
  if (invoice.iss.tribISSQN === 2) return '4';
  if (invoice.iss.tribISSQN !== 1) return null;
  const incidence = invoice.servico.municipioIncidencia ?? project.codigoMunicipio;
  return incidence === project.codigoMunicipio ? '1' : '2';
}

/** RegimeEspecialTributacao (ACBr EL table): 0 none, 5 MEI, 6 ME/EPP of the Simples Nacional. */
const regimeEspecial = (invoice: NormalizedInvoice) => (invoice.regime.mei ? '5' : invoice.regime.simples ? '6' : '0');

/** The municipal service code: the request's municipal breakdown, else the LC 116 subitem digits. */
export const codigoServicoMunicipal = (invoice: NormalizedInvoice) =>
  invoice.servico.codigoTributacaoMunicipal ?? invoice.servico.subitem.replace('.', '');

export interface LoteInput {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  serie: string;
  number: number;
  issuedAt: Date;
}

/** `LoteRps` with one Rps (the XSD allows 5; one note per lote keeps the RPS ↔ protocol mapping simple). */
export function loteXml(input: LoteInput): string {
  const { project, invoice } = input;
  const s = invoice.servico;
  const prestador = `<CpfCnpj>${project.cnpj}</CpfCnpj><IndicacaoCpfCnpj>2</IndicacaoCpfCnpj>${el('InscricaoMunicipal', project.inscricaoMunicipal)}`;
  const local = s.localPrestacao.kind === 'municipio' ? s.localPrestacao.codigoMunicipio : null;
  const iss = Math.round(invoice.total * invoice.iss.aliquota) / 100;
  const projectAddress = project.endereco;
  const prestadorEndereco =
    projectAddress?.cidade && projectAddress.uf && project.codigoMunicipio
      ? address({
          ...projectAddress,
          codigoMunicipio: project.codigoMunicipio,
          municipio: projectAddress.cidade,
          uf: projectAddress.uf,
        })
      : '';
  const taker = invoice.tomador;
  const takerId = identity(taker.id);
  const retencoes =
    (invoice.federal?.retencaoIrrf ?? 0) + (invoice.federal?.retencaoCp ?? 0) + (invoice.federal?.retencaoCsll ?? 0);
  const retido = invoice.iss.retido ? iss : 0;
  const observacao = [s.informacoesComplementares, invoice.referencia ? `Ref.: ${invoice.referencia}` : null]
    .filter(Boolean)
    .join(' ')
    .slice(0, 1000);
  const rps =
    `<Rps>${el('Id', rpsId(input.number, input.serie))}` +
    el('LocalPrestacao', local === project.codigoMunicipio ? '2' : '1') +
    el('IssRetido', invoice.iss.retido ? '2' : '1') +
    el('DataEmissao', brasiliaDateTime(input.issuedAt)) +
    `<IdentificacaoRps>${el('Numero', String(input.number))}${el('Serie', input.serie)}<Tipo>1</Tipo></IdentificacaoRps>` +
    `<DadosPrestador><IdentificacaoPrestador>${prestador}</IdentificacaoPrestador>` +
    el('RazaoSocial', project.razaoSocial.slice(0, 120)) +
    el('IncentivadorCultural', '2') +
    el('OptanteSimplesNacional', invoice.regime.simples ? '1' : '2') +
    el('NaturezaOperacao', naturezaOperacao(project, invoice)) +
    el('RegimeEspecialTributacao', regimeEspecial(invoice)) +
    prestadorEndereco +
    `<Contato>${el('Telefone', project.telefone?.replace(/\D/g, '').slice(0, 15))}${el('Email', project.email)}</Contato>` +
    '</DadosPrestador>' +
    `<DadosTomador><IdentificacaoTomador>${el('CpfCnpj', takerId?.doc)}${el('IndicacaoCpfCnpj', takerId?.kind)}` +
    `${el('InscricaoMunicipal', taker.inscricaoMunicipal)}</IdentificacaoTomador>` +
    el('RazaoSocial', taker.nome.slice(0, 120)) +
    (takerAddress(taker.endereco) ?? '') +
    `<Contato>${el('Telefone', taker.telefone?.replace(/\D/g, '').slice(0, 15))}${el('Email', taker.email)}</Contato>` +
    '</DadosTomador>' +
    '<Servicos><Servico>' +
    el('CodigoCnae', s.cnae ?? project.cnae) +
    el('CodigoServico116', s.subitem) +
    el('CodigoServicoMunicipal', codigoServicoMunicipal(invoice)) +
    '<Quantidade>1.00</Quantidade><Unidade>UN</Unidade>' +
    el('Descricao', s.descricao.slice(0, 255)) +
    el('Aliquota', decimal(invoice.iss.aliquota / 100, 4)) +
    el('ValorServico', decimal(invoice.total)) +
    el('ValorIssqn', decimal(iss)) +
    '</Servico></Servicos>' +
    `<Valores>${el('ValorServicos', decimal(invoice.total))}` +
    el('ValorInss', decimal(invoice.federal?.retencaoCp ?? 0)) +
    el('ValorIr', decimal(invoice.federal?.retencaoIrrf ?? 0)) +
    el('ValorCsll', decimal(invoice.federal?.retencaoCsll ?? 0)) +
    el('ValorIss', decimal(iss)) +
    el('ValorLiquidoNfse', decimal(invoice.total - retencoes - retido)) +
    el('ValorIssRetido', decimal(retido)) +
    '</Valores>' +
    el('Observacao', observacao) +
    '<Status>1</Status>' +
    el('CodigoMunicipioPrestacao', local) +
    '</Rps>';
  return (
    `<LoteRps xmlns="${EL_LOTE_NAMESPACE}">${el('Id', String(input.number).padStart(13, '0'))}` +
    `${el('NumeroLote', String(input.number))}<QuantidadeRps>1</QuantidadeRps>` +
    `<IdentificacaoPrestador>${prestador}</IdentificacaoPrestador><ListaRps>${rps}</ListaRps></LoteRps>`
  );
}

/** A field of a message (any depth), trimmed; null when absent or empty. */
export function field(xml: string, name: string): string | null {
  const parsed = parseXml(xml);
  if (!parsed.ok) return null;
  return findDescendant(parsed.root, name)?.textContent?.trim() || null;
}

/** What a `<return>` carries: its element (null when the answer has none) and its `mensagens` as errors. */
export type ElReturn =
  | { kind: 'return'; element: Element | null; text: string; errors: GovernmentError[] }
  | { kind: 'failure'; outcome: Outcome<never> };

/** `mensagens` texts `CÓDIGO - descrição - correção` (ACBr EL ProcessarMensagemErros), one error each. */
function messagesOf(element: Element): GovernmentError[] {
  return childElements(element)
    .filter((e) => e.localName === 'mensagens')
    .map((e) => {
      const raw = (e.textContent ?? '').trim();
      const parts = raw.split(' - ');
      return parts.length >= 2
        ? {
            Codigo: parts[0]!.trim(),
            Descricao: parts[1]!.trim(),
            ...(parts[2] ? { Complemento: parts.slice(2).join(' - ') } : {}),
          }
        : { Codigo: 'EL', Descricao: raw || 'mensagem sem texto' };
    });
}

/**
 * Reads a RpsServiceService answer: `<S:Envelope><S:Body><ns2:<Op>Response><return>…</return>`. 5xx and 429 are
 * transient; a SOAP Fault is a refusal with its faultcode; a body without `return` is an empty answer.
 */
export function readReturn(answer: HttpResponse): ElReturn {
  if (answer.status === 429 || answer.status >= 500) {
    const fault = /<faultstring>([^<]*)</.exec(answer.body)?.[1];
    return {
      kind: 'failure',
      outcome: {
        kind: 'transient',
        reason: `HTTP ${answer.status}${fault ? `: ${fault}` : ''}`,
        httpStatus: answer.status,
      },
    };
  }
  const parsed = parseXml(answer.body);
  if (!parsed.ok)
    return { kind: 'failure', outcome: { kind: 'unknown', reason: `EL answer unreadable: ${parsed.message}` } };
  const fault = findDescendant(parsed.root, 'Fault');
  if (fault) {
    const code = findDescendant(fault, 'faultcode')?.textContent?.trim() ?? 'soap:Server';
    const reason = findDescendant(fault, 'faultstring')?.textContent?.trim() ?? '';
    return { kind: 'failure', outcome: rejected([{ Codigo: code, Descricao: reason }]) };
  }
  const element = findDescendant(parsed.root, 'return');
  if (!element) return { kind: 'return', element: null, text: '', errors: [] };
  const errors = messagesOf(element);
  const text = childElements(element).length === 0 ? (element.textContent ?? '').trim() : '';
  return { kind: 'return', element, text, errors };
}

export function rejected(errors: GovernmentError[]): Outcome<never> {
  const first = errors[0] ?? { Codigo: 'EL', Descricao: 'recusa sem mensagem' };
  return { kind: 'rejected', errorCode: first.Codigo, errorMessage: first.Descricao, errors };
}

/** The notes (`nfeRpsNotaFiscal`, or a `notasFiscais` carrying the fields itself) of a `return`. */
export function notesOf(element: Element): Element[] {
  const all: Element[] = [];
  const walk = (e: Element) => {
    for (const c of childElements(e)) {
      if (c.localName === 'nfeRpsNotaFiscal') all.push(c);
      else walk(c);
    }
  };
  walk(element);
  if (all.length > 0) return all;
  const lists = childElements(element).filter((e) => e.localName === 'notasFiscais');
  return lists.filter((e) => childElements(e).some((c) => c.localName === 'numero'));
}

/** A note of an answer as an issued document (idNota is the authenticity key of the city's portal). */
export function issuedOf(note: Element, xml: string, ambiente: 1 | 2, protocol: string | null): IssuedDocument | null {
  const get = (name: string) =>
    childElements(note)
      .find((e) => e.localName === name)
      ?.textContent?.trim() || null;
  const numero = get('numero');
  if (!numero) return null;
  const when = get('dataProcessamento');
  const emittedAt = when
    ? new Date(/[zZ]|[+-]\d{2}:\d{2}$/.test(when) ? when : `${when.slice(0, 19)}-03:00`)
    : new Date();
  return {
    chave: null,
    numero,
    verificationCode: get('idNota'),
    protocol,
    emittedAt: Number.isNaN(emittedAt.getTime()) ? new Date() : emittedAt,
    xml,
    ambiente,
  };
}

/** The RPS number of a note of an answer. */
export const rpsNumberOf = (note: Element) =>
  childElements(note)
    .find((e) => e.localName === 'rpsNumero')
    ?.textContent?.trim() ?? null;
