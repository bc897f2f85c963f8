import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { childElements, parseXml } from '../../xml/read.ts';
import { MissingCredentialError } from '../kit/auth.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpAnswer, HttpResponse } from '../kit/http-client.ts';
import { readSoapAnswer, soapEnvelope } from '../kit/soap.ts';
import type { CancellationRecord, GovernmentError, IssuedDocument, Outcome } from '../types.ts';

/**
 * eGoverneISS (Osasco/SP, 3534401, "Eissnfe" WCF service), own layout over SOAP 1.1. Engine key
 * `own-layout:egoverneiss`. Sources (read for facts, no code taken):
 * - ACBr `Fontes/ACBrDFe/ACBrNFSeX/Provedores/eGoverneISS.Provider.pas` (edsontmarques/ACBr d4bb59b): operations
 *   `RTC_EmitirNFE` (unitary), `RTC_ConsultarNFE` (by `NumeroReciboUnico`), `Cancelar` (by `NumeroNota`, with
 *   `Homologacao`), SOAPAction `http://tempuri.org/INotaFiscalEletronicaServico/<op>`, the `tem:request` wrapper, the
 *   data-contract namespaces, answers `<op>Result` with `Erro` (boolean), `Mensagem`, `MensagemErro`,
 *   `NotaFiscalGerada` (`Numero`, `Autenticador`, `Link`) and `NotasGeradas/NotaFiscalConsultaDTO` (`Numero`,
 *   `CodigoAutenticidade`, `LinkNFE`, `MensagemErro`); no certificate, the access key `ChaveAutenticacao`
 *   (ACBr `WSChaveAcesso`) in the message;
 * - ACBr `eGoverneISS.GravarXml.pas` (b440fc5): the `NotaFiscal` fields, their order (the WCF data-contract order,
 *   alphabetical), sizes, and what fills them; `eGoverneISS.LerXml.pas` (8dde0b1);
 * - ACBrNFSeXServicos.ini (municipalities.json): the URLs `…/EissnfeWebServices/NotaFiscalEletronica.svc`.
 *
 * Conservative readings (the sandbox, src/sandbox/own-layout/egoverneiss.ts, accepts only these):
 * - the access key is the project's `accessToken` credential; it is written into the message when it is sent (the
 *   stored declaration never holds it), right before `CidadePrestacaoServico` as the field order requires;
 * - `NumeroRecibo` is the platform's RPS number and the layout has no series: reconciliation asks `RTC_ConsultarNFE`
 *   by that number; a refused emission is checked the same way before it is believed (a resend of a processed
 *   receipt comes back ok with the note already issued, whatever the provider's wording of the refusal);
 * - the provider's refusals carry messages, no codes: they come back with code `EGOVERNEISS` (and
 *   `EGOVERNEISS_CANCELADA` when a cancellation refusal says the note is already cancelled; the layout has no
 *   cancellation query);
 * - `Atividade` is the LC 116 subitem as written (`01.01`); `Aliquota` the ISS rate in percent, 4 decimals, `.`;
 * - only taxable services (tribISSQN 1) for Brazilian takers identified by CPF/CNPJ with a full address: the layout
 *   has no immunity/exemption field, and ACBr's `SemIncidenciaISS`/`TomadorEstrangeiro` are only for foreign takers;
 * - the reform groups (IBS/CBS) of the `_RTC` operations are not sent: ACBr writes none for this provider.
 */

export const EGOVERNE_NS = {
  tem: 'http://tempuri.org/',
  eis: 'http://schemas.datacontract.org/2004/07/Eissnfe.Negocio.WebServices.Mensagem',
  eis1: 'http://schemas.datacontract.org/2004/07/Eissnfe.Dominio.DataTransferObject.Prestador',
  eis2: 'http://schemas.datacontract.org/2004/07/Eissnfe.Dominio.DataTransferObject.Contribuinte',
} as const;
export const EGOVERNE_ACTION = 'http://tempuri.org/INotaFiscalEletronicaServico/';
export const EGOVERNE_ERROR = 'EGOVERNEISS';
export const EGOVERNE_ALREADY_CANCELLED = 'EGOVERNEISS_CANCELADA';

const NS_DECLARATIONS =
  `xmlns:eis="${EGOVERNE_NS.eis}" xmlns:eis1="${EGOVERNE_NS.eis1}" ` + `xmlns:eis2="${EGOVERNE_NS.eis2}"`;

const el = (prefix: string, name: string, value: string | null | undefined) =>
  value === null || value === undefined || value === ''
    ? ''
    : `<${prefix}:${name}>${escapeXmlText(value)}</${prefix}:${name}>`;
const de2 = (value: number) => value.toFixed(2);
const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');

/** Brasília (UTC-3) calendar date `aaaa-mm-dd` of an instant (ACBr `tcDat`). */
function brasiliaDate(at: Date): string {
  return new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 10);
}

function tomadorXml(invoice: NormalizedInvoice): string {
  const party = invoice.tomador;
  const id = party.id;
  const address = party.endereco;
  const phone = digits(party.telefone);
  const ddd = phone.length === 11 ? phone.slice(0, 3) : phone.length === 10 ? phone.slice(0, 2) : '';
  return (
    '<eis1:Tomador>' +
    (id.kind === 'cnpj' ? el('eis2', 'CNPJ', id.cnpj) : id.kind === 'cpf' ? el('eis2', 'CPF', id.cpf) : '') +
    el('eis2', 'DDD', ddd) +
    el('eis2', 'Email', party.email?.slice(0, 120)) +
    '<eis2:Endereco>' +
    el('eis2', 'Bairro', address?.bairro?.slice(0, 50)) +
    el('eis2', 'CEP', digits(address?.cep)) +
    el('eis2', 'Cidade', address?.cidade?.slice(0, 50)) +
    el('eis2', 'Complemento', address?.complemento?.slice(0, 30)) +
    el('eis2', 'Estado', address?.uf) +
    el('eis2', 'Logradouro', address?.logradouro?.slice(0, 50)) +
    el('eis2', 'Numero', address?.numero?.slice(0, 9)) +
    el('eis2', 'Pais', 'BRASIL') +
    '</eis2:Endereco>' +
    el('eis2', 'InscricaoMunicipal', party.inscricaoMunicipal?.slice(0, 11)) +
    el('eis2', 'Nome', party.nome.slice(0, 120)) +
    el('eis2', 'Telefone', phone ? phone.slice(-8) : null) +
    '</eis1:Tomador>'
  );
}

/** The emission's `NotaFiscal_RTC` (without `ChaveAutenticacao`, added when sent). */
export function notaFiscalXml(input: {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  number: number;
  issuedAt: Date;
}): string {
  const { project, invoice } = input;
  const address = invoice.tomador.endereco;
  const federal = invoice.federal;
  const info = [invoice.servico.informacoesComplementares, invoice.referencia ? `Ref.: ${invoice.referencia}` : null]
    .filter(Boolean)
    .join(' ');
  return (
    `<eis:NotaFiscal_RTC ${NS_DECLARATIONS}>` +
    el('eis1', 'Aliquota', invoice.iss.aliquota.toFixed(4)) +
    el('eis1', 'Atividade', invoice.servico.subitem) +
    el('eis1', 'CEPPrestacaoServico', digits(address?.cep)) +
    el('eis1', 'CidadePrestacaoServico', address?.cidade?.slice(0, 36)) +
    el('eis1', 'DataRecibo', brasiliaDate(input.issuedAt)) +
    el('eis1', 'EnderecoPrestacaoServico', address?.logradouro?.slice(0, 36)) +
    el('eis1', 'EstadoPrestacaoServico', address?.uf) +
    el('eis1', 'Homologacao', project.ambiente === 1 ? 'false' : 'true') +
    el('eis1', 'InformacoesAdicionais', `${invoice.servico.descricao} ${info}`.trim().slice(0, 2300)) +
    el('eis1', 'NotificarTomadorPorEmail', invoice.tomador.email ? 'true' : 'false') +
    el('eis1', 'NumeroRecibo', String(input.number)) +
    el('eis1', 'SemIncidenciaISS', 'false') +
    el('eis1', 'SimplesNacional', invoice.regime.simples ? 'true' : 'false') +
    el('eis1', 'SubstituicaoTributaria', invoice.iss.retido ? 'true' : 'false') +
    tomadorXml(invoice) +
    el('eis1', 'TomadorEstrangeiro', 'false') +
    el('eis1', 'Valor', de2(invoice.total)) +
    (federal?.retencaoCsll ? el('eis1', 'ValorCSLL', de2(federal.retencaoCsll)) : '') +
    el('eis1', 'ValorDeducao', de2(0)) +
    (federal?.retencaoCp ? el('eis1', 'ValorINSS', de2(federal.retencaoCp)) : '') +
    (federal?.retencaoIrrf ? el('eis1', 'ValorIR', de2(federal.retencaoIrrf)) : '') +
    '</eis:NotaFiscal_RTC>'
  );
}

function accessKey(context: SendContext): string {
  const key = context.credentials?.accessToken;
  if (!key) throw new MissingCredentialError('accessToken');
  return key;
}

/** One SOAP 1.1 call of the service: `<tem:op><tem:request>…</tem:request></tem:op>`. */
function call(context: SendContext, operation: string, request: string): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: EGOVERNE_NS.tem,
    operation,
    soapAction: `${EGOVERNE_ACTION}${operation}`,
    parts: [{ name: 'request', value: request, encoding: 'xml', qualified: true }],
  });
  return {
    method: 'POST',
    url: context.endpoints.url(operation === 'Cancelar' ? 'cancel' : 'emit', context.ambiente, context.municipality),
    headers,
    body,
  };
}

/** The access key written into the stored emission, at its place in the data-contract order. */
export function withAccessKey(xml: string, key: string): string {
  const at = xml.indexOf('<eis1:CidadePrestacaoServico>');
  const tag = el('eis1', 'ChaveAutenticacao', key);
  return at < 0
    ? xml.replace(/(<\/eis1:CEPPrestacaoServico>)/, `$1${tag}`)
    : `${xml.slice(0, at)}${tag}${xml.slice(at)}`;
}

const consulta = (context: SendContext, numeroRecibo: string) =>
  call(
    context,
    'RTC_ConsultarNFE',
    `<eis:ChaveAutenticacao xmlns:eis="${EGOVERNE_NS.eis}">${escapeXmlText(accessKey(context))}</eis:ChaveAutenticacao>` +
      `<eis:NumeroReciboUnico xmlns:eis="${EGOVERNE_NS.eis}">${escapeXmlText(numeroRecibo)}</eis:NumeroReciboUnico>`,
  );

type Result = { kind: 'result'; root: Element } | { kind: 'failure'; outcome: Outcome<never> };

/** The `<op>Result` element of an answer, or how the answer failed. */
function resultOf(answer: HttpResponse, name: string): Result {
  const soap = readSoapAnswer(answer.body);
  const clientFault = soap.kind === 'fault' && /(^|:)Client(\.|$)/i.test(soap.code);
  if (!clientFault && (answer.status === 429 || answer.status >= 500)) {
    const detail = soap.kind === 'fault' ? ` ${soap.code} ${soap.reason}` : '';
    return {
      kind: 'failure',
      outcome: { kind: 'transient', reason: `HTTP ${answer.status}${detail}`, httpStatus: answer.status },
    };
  }
  if (soap.kind === 'fault') {
    const error = { Codigo: soap.code, Descricao: soap.reason || 'SOAP Fault' };
    return { kind: 'failure', outcome: rejected([error]) };
  }
  if (soap.kind === 'unreadable') {
    return { kind: 'failure', outcome: { kind: 'unknown', reason: `HTTP ${answer.status}: ${soap.reason}` } };
  }
  const parsed = parseXml(answer.body);
  const result = parsed.ok ? find(parsed.root, name) : null;
  if (!result) return { kind: 'failure', outcome: { kind: 'unknown', reason: `eGoverneISS answer without ${name}` } };
  return { kind: 'result', root: result };
}

function find(el: Element, name: string): Element | null {
  if (el.localName === name) return el;
  for (const c of childElements(el)) {
    const found = find(c, name);
    if (found) return found;
  }
  return null;
}

const textOf = (el: Element | null, name: string) => {
  const found = el ? childElements(el).find((c) => c.localName === name) : undefined;
  return found?.textContent?.trim() || null;
};

/** The refusal of a result (`Erro` true), its message as the error; null when the result is not an error. */
function refusalOf(result: Element, code = EGOVERNE_ERROR): GovernmentError[] | null {
  if (textOf(result, 'Erro') !== 'true') return null;
  const message = textOf(result, 'MensagemErro') ?? textOf(result, 'Mensagem') ?? 'Erro sem mensagem do provedor';
  return [{ Codigo: code, Descricao: message }];
}

function rejected(errors: GovernmentError[]): Outcome<never> {
  const first = errors[0] ?? { Codigo: EGOVERNE_ERROR, Descricao: 'recusa sem mensagem' };
  return { kind: 'rejected', errorCode: first.Codigo, errorMessage: first.Descricao, errors };
}

function noteOf(note: Element, xml: string, ambiente: 1 | 2, code: string): IssuedDocument | null {
  const numero = textOf(note, 'Numero');
  if (!numero) return null;
  return { chave: null, numero, verificationCode: textOf(note, code), emittedAt: new Date(), xml, ambiente };
}

/** The note a `RTC_ConsultarNFE` answer holds for a receipt number: null when none. */
async function queryByReceipt(
  numeroRecibo: string,
  context: SendContext,
  send: (request: OperationRequest) => Promise<HttpAnswer>,
): Promise<Outcome<IssuedDocument | null>> {
  const answer = await send(consulta(context, numeroRecibo));
  if (answer.kind !== 'response') return transportFailure(answer);
  const result = resultOf(answer, 'RTC_ConsultarNFEResult');
  if (result.kind === 'failure') return result.outcome;
  const notes = childElements(find(result.root, 'NotasGeradas') ?? result.root).filter(
    (e) => e.localName === 'NotaFiscalConsultaDTO' && !textOf(e, 'MensagemErro') && textOf(e, 'Numero'),
  );
  if (notes.length > 0)
    return { kind: 'ok', value: noteOf(notes[0]!, answer.body, context.ambiente, 'CodigoAutenticidade') };
  const refusal = refusalOf(result.root);
  // "receipt not found" is an Erro too: with no note, the answer is "none"; any other reading would be a guess
  return refusal && !/n[aã]o\s+(foi\s+)?encontrad|inexistente/i.test(refusal[0]!.Descricao)
    ? rejected(refusal)
    : { kind: 'ok', value: null };
}

const receiptOf = (xml: string) => /<eis1:NumeroRecibo>(\d+)<\/eis1:NumeroRecibo>/.exec(xml)?.[1] ?? '';
const isTakerComplete = (invoice: NormalizedInvoice) => {
  const a = invoice.tomador.endereco;
  return Boolean(a?.nacional && a.cep && a.cidade && a.uf && a.logradouro && a.numero && a.bairro);
};

export const eGoverneIssDefinition = defineFamily({
  id: 'own-layout',
  provider: 'eGoverneISS',
  layout: 'eGoverneISS own layout (Eissnfe WCF, SOAP 1.1, access key in the message)',
  transport: 'soap11',
  auth: 'body-credentials',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'none',
    homologation: true,
    reconcile: true,
  },
  check(_project, invoice) {
    const unmet: { field: string; message: string }[] = [];
    if (invoice.iss.tribISSQN !== 1) {
      unmet.push({
        field: 'valores.tributacaoIss',
        message: 'eGoverneISS: the layout has no immunity or exemption field; only taxable services can be issued',
      });
    }
    const id = invoice.tomador.id.kind;
    if (invoice.tomador.estrangeiro || (id !== 'cnpj' && id !== 'cpf')) {
      unmet.push({ field: 'tomador', message: 'eGoverneISS: the taker must be Brazilian, with CPF or CNPJ' });
    } else if (!isTakerComplete(invoice)) {
      unmet.push({
        field: 'tomador.endereco',
        message: 'eGoverneISS: the taker address (logradouro, número, bairro, cidade, UF, CEP) is required',
      });
    }
    if (invoice.servico.localPrestacao.kind === 'pais') {
      unmet.push({ field: 'servico.localPrestacao', message: 'eGoverneISS: services abroad are not supported' });
    }
    return unmet;
  },
  declaration: {
    build(input) {
      return { id: String(input.number), xml: notaFiscalXml(input) };
    },
    signedElement: null,
    schema: null,
    schemaErrorCode: 'EGOVERNEISS_LAYOUT',
  },
  operations: {
    emit: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument>> {
        const answer = await send(call(context, 'RTC_EmitirNFE', withAccessKey(document.xml, accessKey(context))));
        if (answer.kind !== 'response') return transportFailure(answer);
        const result = resultOf(answer, 'RTC_EmitirNFEResult');
        if (result.kind === 'failure') return result.outcome;
        const refusal = refusalOf(result.root);
        if (refusal) {
          // a refused receipt that the provider holds already (a resend after a lost answer) is that note
          const held = await queryByReceipt(receiptOf(document.xml), context, send);
          if (held.kind === 'ok') return held.value ? { kind: 'ok', value: held.value } : rejected(refusal);
          return { kind: 'unknown', reason: `eGoverneISS refused (${refusal[0]!.Descricao}); its query failed` };
        }
        const note = childElements(result.root).find((e) => e.localName === 'NotaFiscalGerada');
        const issued = note ? noteOf(note, answer.body, context.ambiente, 'Autenticador') : null;
        return issued
          ? { kind: 'ok', value: issued }
          : { kind: 'unknown', reason: 'eGoverneISS answer without a note' };
      },
    },
    query: {
      exchange: (document, context, send) => queryByReceipt(receiptOf(document.xml), context, send),
    },
    cancel: {
      message: {
        build({ issued }) {
          return { id: `cancel-${issued.numero}`, xml: issued.numero ?? '' };
        },
        signedElement: null,
        schema: null,
        schemaErrorCode: 'EGOVERNEISS_LAYOUT',
      },
      operation: {
        request({ signed }, context) {
          const eis = (name: string, value: string) =>
            `<eis:${name} xmlns:eis="${EGOVERNE_NS.eis}">${escapeXmlText(value)}</eis:${name}>`;
          return call(
            context,
            'Cancelar',
            eis('ChaveAutenticacao', accessKey(context)) +
              eis('Homologacao', context.ambiente === 1 ? 'false' : 'true') +
              eis('NumeroNota', signed),
          );
        },
        parse(answer): Outcome<CancellationRecord> {
          const result = resultOf(answer, 'CancelarResult');
          if (result.kind === 'failure') return result.outcome;
          const refusal = refusalOf(result.root);
          if (refusal) {
            const already = /j[aá]\s+(est[aá]\s+)?cancelad/i.test(refusal[0]!.Descricao);
            return rejected(already ? [{ ...refusal[0]!, Codigo: EGOVERNE_ALREADY_CANCELLED }] : refusal);
          }
          return { kind: 'ok', value: { cancelledAt: new Date(), xml: answer.body } };
        },
      },
    },
  },
  alreadyProcessedCodes: [],
  alreadyCancelledCodes: [EGOVERNE_ALREADY_CANCELLED],
});
