import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { childElements, outerXml, parseXml } from '../../xml/read.ts';
import { signXml } from '../../xml/sign.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpAnswer, HttpResponse } from '../kit/http-client.ts';
import { readSoapAnswer, soapEnvelope } from '../kit/soap.ts';
import { municipalityRegistry } from '../routing/municipality-registry.ts';
import type { CancellationRecord, GovernmentError, IssuedDocument, Outcome } from '../types.ts';

/**
 * Equiplano "e-SNFS" (26 cities of Paraná), own layout over SOAP 1.1 (Axis2, `http://services.enfsws.es`): every
 * message signed as a whole document (XML-DSig, `URI=""`, the Signature last in the root), the A1 certificate in the
 * TLS handshake, asynchronous lots. Engine key `own-layout:equiplano`. Sources (facts only, no code taken):
 * - ACBr `Fontes/ACBrDFe/ACBrNFSeX/Provedores/Equiplano.Provider.pas` (edsontmarques/ACBr 187abf1): operations
 *   `esRecepcionarLoteRps`, `esConsultarSituacaoLoteRps`, `esConsultarLoteRps`, `esConsultarNfsePorRps`,
 *   `esConsultarNfse`, `esCancelarNfse` (SOAPAction `urn:<op>`, parameters `nrVersaoXml` = 1 and `xml` as an escaped
 *   string, the answer in `return`), the messages' fields (`prestador` with `idEntidade` = the registry's
 *   `CodigoCidade`), answers (`protocolo/nrProtocolo`, `stLote` 1 not processed, 2 error, 3 success, 4 warnings,
 *   `nfse` with `nrNfse`, `cdAutenticacao`, `dtEmissaoNfs`, `nrRps`, `cancelamento`), errors
 *   `mensagemRetorno/listaErros/erro/{cdMensagem, dsMensagem}`, every message signed;
 * - ACBr `Equiplano.GravarXml.pas` (2c66e2d): the `rps` fields, their order and sizes;
 * - Equiplano's sample lot with its "obrigatório" notes and value lists (stRps, tpTributacao, isIssRetido,
 *   tpDocumento), as reproduced in public integrations; OpenAC.Net.NFSe ProviderEquiplano (the signature on the
 *   root without Id, `cancelamento` in the query answer); a public Node client for Toledo (rsa-sha1, C14N, `URI=""`,
 *   `vlAliquota` in percent, the client certificate on TLS).
 *
 * Conservative readings (the sandbox, src/sandbox/own-layout/equiplano.ts, accepts only these):
 * - one RPS per lot, `nrLote` = `nrRps` = the platform's number, `nrEmissorRps` = the one-digit series;
 * - `vlAliquota` in percent; `vlIssServico` = base × rate / 100; decimals with `.`;
 * - taxable (tpTributacao 1 here, 2 elsewhere) and immune/exempt (3) services; export and non-incidence are refused;
 * - a refused lot, a lot processed with errors and a refused cancellation are checked against the government's copy
 *   (the note by RPS, the note by number) before they are believed: a resend of a processed RPS is that note, and a
 *   cancellation refused for a cancelled note comes back `EQUIPLANO_JA_CANCELADA` (Equiplano's own code table is
 *   not in the sources);
 * - a query answer with no note and a "não encontrado" message is "none".
 */

export const EQUIPLANO_NS = 'http://www.equiplano.com.br/esnfs';
export const EQUIPLANO_SERVICE_NS = 'http://services.enfsws.es';
export const EQUIPLANO_ALREADY_CANCELLED = 'EQUIPLANO_JA_CANCELADA';

/** The provider's `idEntidade` of a municipality (the registry's `CodigoCidade`), null when unknown. */
export function idEntidadeOf(ibge: string | null | undefined): string | null {
  if (!ibge) return null;
  const value = municipalityRegistry().find(ibge)?.parameters?.options?.CodigoCidade;
  return typeof value === 'string' && /^\d+$/.test(value) ? value : null;
}

const el = (name: string, value: string | null | undefined) =>
  value === null || value === undefined || value === '' ? '' : `<${name}>${escapeXmlText(value)}</${name}>`;
/** ACBr writes some members even when empty (occurrence 1, minimum 0). */
const always = (name: string, value: string | null | undefined) => (value ? el(name, value) : `<${name}></${name}>`);
const de2 = (value: number) => (Math.round(value * 100) / 100).toFixed(2);
const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');

/** Brasília (UTC-3) `aaaa-mm-ddThh:mm:ss` of an instant. */
const brasilia = (at: Date) => new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 19);

function tpTributacao(project: ProjectFiscalProfile, invoice: NormalizedInvoice): string | null {
  if (invoice.iss.tribISSQN === 2) return '3';
  if (invoice.iss.tribISSQN !== 1) return null;
  const incidence = invoice.servico.municipioIncidencia ?? project.codigoMunicipio;
  return incidence === project.codigoMunicipio ? '1' : '2';
}

function prestador(project: ProjectFiscalProfile, cnpjTag: 'cnpj' | 'nrCnpj', simples?: boolean): string {
  return (
    '<prestador>' +
    (cnpjTag === 'nrCnpj'
      ? `${el('nrCnpj', project.cnpj)}${el('nrInscricaoMunicipal', digits(project.inscricaoMunicipal))}` +
        el('isOptanteSimplesNacional', simples ? '1' : '2')
      : `${el('nrInscricaoMunicipal', digits(project.inscricaoMunicipal))}${el('cnpj', project.cnpj)}`) +
    `${el('idEntidade', idEntidadeOf(project.codigoMunicipio))}</prestador>`
  );
}

function tomadorXml(invoice: NormalizedInvoice): string {
  const party = invoice.tomador;
  const id = party.id;
  const document = id.kind === 'cnpj' ? id.cnpj : id.kind === 'cpf' ? id.cpf : '';
  const address = party.endereco;
  return (
    '<tomador><documento>' +
    `${el('nrDocumento', document)}${el('tpDocumento', id.kind === 'cnpj' ? '2' : '1')}` +
    `${always('dsDocumentoEstrangeiro', null)}</documento>` +
    el('nmTomador', party.nome.slice(0, 80)) +
    el('dsEmail', party.email?.slice(0, 80)) +
    el('nrInscricaoMunicipal', party.inscricaoMunicipal?.slice(0, 20)) +
    el('dsEndereco', address?.logradouro?.slice(0, 40)) +
    always('nrEndereco', address?.numero?.slice(0, 10)) +
    always('dsComplemento', address?.complemento?.slice(0, 60)) +
    always('nmBairro', address?.bairro?.slice(0, 25)) +
    always('nrCidadeIbge', address?.codigoMunicipio) +
    always('nmUf', address?.uf) +
    el('nmPais', 'Brasil') +
    always('nrCep', digits(address?.cep)) +
    always('nrTelefone', digits(party.telefone).slice(0, 20)) +
    '</tomador>'
  );
}

/** The lot `enviarLoteRpsEnvio` with its one RPS (unsigned). */
export function loteXml(input: {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  serie: string;
  number: number;
  issuedAt: Date;
}): string {
  const { project, invoice } = input;
  const [item, subitem] = invoice.servico.subitem.split('.').map((part) => String(Number(part)));
  const iss = (invoice.total * invoice.iss.aliquota) / 100;
  const federal = invoice.federal;
  const withheld =
    (invoice.iss.retido ? Number(de2(iss)) : 0) +
    (federal?.retencaoIrrf ?? 0) +
    (federal?.retencaoCp ?? 0) +
    (federal?.retencaoCsll ?? 0);
  const local = invoice.servico.localPrestacao;
  const description = [invoice.servico.descricao, invoice.servico.informacoesComplementares].filter(Boolean).join(' ');
  return (
    `<es:enviarLoteRpsEnvio xmlns:es="${EQUIPLANO_NS}"><lote>` +
    `${el('nrLote', String(input.number))}<qtRps>1</qtRps><nrVersaoXml>1</nrVersaoXml>` +
    prestador(project, 'nrCnpj', invoice.regime.simples) +
    '<listaRps><rps>' +
    `${el('nrRps', String(input.number))}${el('nrEmissorRps', input.serie)}` +
    `${el('dtEmissaoRps', brasilia(input.issuedAt))}<stRps>1</stRps>` +
    el('tpTributacao', tpTributacao(project, invoice)) +
    (local.kind === 'municipio' ? el('nrCidadeIbgeServico', local.codigoMunicipio) : '') +
    el('isIssRetido', invoice.iss.retido ? '1' : '2') +
    tomadorXml(invoice) +
    '<listaServicos><servico>' +
    `${el('nrServicoItem', item)}${el('nrServicoSubItem', subitem)}` +
    `${el('vlServico', de2(invoice.total))}${el('vlAliquota', de2(invoice.iss.aliquota))}` +
    `${el('vlBaseCalculo', de2(invoice.total))}${el('vlIssServico', de2(iss))}` +
    el('dsDiscriminacaoServico', description.slice(0, 1024)) +
    '</servico></listaServicos>' +
    `${el('vlTotalRps', de2(invoice.total))}${el('vlLiquidoRps', de2(invoice.total - withheld))}` +
    '<retencoes>' +
    `${el('vlCofins', de2(0))}${el('vlCsll', de2(federal?.retencaoCsll ?? 0))}` +
    `${el('vlInss', de2(federal?.retencaoCp ?? 0))}${el('vlIrrf', de2(federal?.retencaoIrrf ?? 0))}` +
    `${el('vlPis', de2(0))}${el('vlIss', de2(invoice.iss.retido ? iss : 0))}` +
    `${el('vlAliquotaCofins', de2(0))}${el('vlAliquotaCsll', de2(0))}${el('vlAliquotaInss', de2(0))}` +
    `${el('vlAliquotaIrrf', de2(0))}${el('vlAliquotaPis', de2(0))}` +
    '</retencoes></rps></listaRps></lote></es:enviarLoteRpsEnvio>'
  );
}

/** A field of the lot (first occurrence), for the messages that identify it. */
const fieldOf = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? '';

/** The prestador of a lot, rewritten as the query messages carry it (`nrInscricaoMunicipal`, `cnpj`, `idEntidade`). */
const queryPrestador = (lote: string) =>
  `<prestador>${el('nrInscricaoMunicipal', fieldOf(lote, 'nrInscricaoMunicipal'))}` +
  `${el('cnpj', fieldOf(lote, 'nrCnpj'))}${el('idEntidade', fieldOf(lote, 'idEntidade'))}</prestador>`;

/** One SOAP call: `<ser:op><ser:nrVersaoXml>1</…><ser:xml>escaped</…></ser:op>`. */
function call(context: SendContext, operation: string, xml: string): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: EQUIPLANO_SERVICE_NS,
    operation,
    soapAction: `urn:${operation}`,
    parts: [
      { name: 'nrVersaoXml', value: '1', encoding: 'xml', qualified: true },
      { name: 'xml', value: xml, encoding: 'escaped', qualified: true },
    ],
  });
  return {
    method: 'POST',
    url: context.endpoints.url(
      operation === 'esCancelarNfse' ? 'cancel' : 'emit',
      context.ambiente,
      context.municipality,
    ),
    headers,
    body,
  };
}

/** A query message signed as the lot is (whole document, Signature last in the root). */
function signed(xml: string, context: SendContext): string {
  return signXml(xml, {
    key: { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem },
    algorithm: 'rsa-sha1',
  });
}

type Answer =
  | { kind: 'answer'; root: Element; errors: GovernmentError[] }
  | { kind: 'failure'; outcome: Outcome<never> };

/** The provider's message inside `return`, and its errors. */
function answerOf(answer: HttpResponse): Answer {
  const soap = readSoapAnswer(answer.body);
  const clientFault = soap.kind === 'fault' && /(^|:)Client(\.|$)/i.test(soap.code);
  if (!clientFault && (answer.status === 429 || answer.status >= 500)) {
    const detail = soap.kind === 'fault' ? ` ${soap.code} ${soap.reason}` : '';
    return {
      kind: 'failure',
      outcome: { kind: 'transient', reason: `HTTP ${answer.status}${detail}`, httpStatus: answer.status },
    };
  }
  if (soap.kind === 'fault')
    return { kind: 'failure', outcome: rejected([{ Codigo: soap.code, Descricao: soap.reason }]) };
  if (soap.kind === 'unreadable' || !soap.result) {
    const reason = soap.kind === 'unreadable' ? soap.reason : 'empty return';
    return { kind: 'failure', outcome: { kind: 'unknown', reason: `HTTP ${answer.status}: ${reason}` } };
  }
  const parsed = parseXml(soap.result);
  if (!parsed.ok) return { kind: 'failure', outcome: { kind: 'unknown', reason: parsed.message } };
  const errors = descendants(parsed.root, 'erro').map((e) => ({
    Codigo: text(e, 'cdMensagem') ?? 'EQUIPLANO',
    Descricao: text(e, 'dsMensagem') ?? 'erro sem descrição',
  }));
  return { kind: 'answer', root: parsed.root, errors };
}

function descendants(el: Element, name: string, out: Element[] = []): Element[] {
  for (const c of childElements(el)) {
    if (c.localName === name) out.push(c);
    descendants(c, name, out);
  }
  return out;
}
const first = (el: Element, name: string) => (el.localName === name ? el : (descendants(el, name)[0] ?? null));
const text = (el: Element | null, name: string) => {
  const found = el ? childElements(el).find((c) => c.localName === name) : undefined;
  return found?.textContent?.trim() || null;
};

function rejected(errors: GovernmentError[]): Outcome<never> {
  const head = errors[0] ?? { Codigo: 'EQUIPLANO', Descricao: 'recusa sem mensagem' };
  return { kind: 'rejected', errorCode: head.Codigo, errorMessage: head.Descricao, errors };
}

function noteOf(root: Element, xml: string, ambiente: 1 | 2): IssuedDocument | null {
  const nfse = first(root, 'nfse');
  const numero = text(nfse, 'nrNfse');
  if (!nfse || !numero) return null;
  const at = new Date(`${text(nfse, 'dtEmissaoNfs') ?? ''}-03:00`);
  return {
    chave: null,
    numero,
    verificationCode: text(nfse, 'cdAutenticacao'),
    emittedAt: Number.isNaN(at.getTime()) ? new Date() : at,
    xml,
    ambiente,
  };
}

const NOT_FOUND = /n[aã]o\s+(foi\s+)?(encontrad|localizad)|inexistente/i;
type Send = (request: OperationRequest) => Promise<HttpAnswer>;

/** The note the provider holds for the lot's RPS (`esConsultarNfsePorRps`): null when none. */
async function queryByRps(lote: string, context: SendContext, send: Send): Promise<Outcome<IssuedDocument | null>> {
  const message =
    `<es:esConsultarNfsePorRpsEnvio xmlns:es="${EQUIPLANO_NS}"><rps>${el('nrRps', fieldOf(lote, 'nrRps'))}` +
    `${el('nrEmissorRps', fieldOf(lote, 'nrEmissorRps'))}</rps>${queryPrestador(lote)}</es:esConsultarNfsePorRpsEnvio>`;
  const answer = await send(call(context, 'esConsultarNfsePorRps', signed(message, context)));
  if (answer.kind !== 'response') return transportFailure(answer);
  const read = answerOf(answer);
  if (read.kind === 'failure') return read.outcome;
  const note = noteOf(read.root, answer.body, context.ambiente);
  if (note) return { kind: 'ok', value: note };
  return read.errors.length === 0 || read.errors.every((e) => NOT_FOUND.test(e.Descricao))
    ? { kind: 'ok', value: null }
    : rejected(read.errors);
}

/** A refusal of the lot, unless the provider holds a note for its RPS (a resend after a lost answer). */
async function refusalOrHeld(
  errors: GovernmentError[],
  lote: string,
  context: SendContext,
  send: Send,
): Promise<Outcome<IssuedDocument>> {
  const held = await queryByRps(lote, context, send);
  if (held.kind === 'ok') return held.value ? { kind: 'ok', value: held.value } : rejected(errors);
  if (held.kind === 'rejected') return rejected(errors);
  return { kind: 'unknown', reason: `Equiplano refused the lot (${errors[0]?.Codigo}); its RPS query failed` };
}

/** The note by its number (`esConsultarNfse`), with its `cancelamento` when cancelled. */
async function queryByNumber(
  numero: string,
  project: { cnpj: string; inscricaoMunicipal: string; idEntidade: string },
  context: SendContext,
  send: Send,
): Promise<Outcome<Element | null>> {
  const message =
    `<es:esConsultarNfseEnvio xmlns:es="${EQUIPLANO_NS}"><prestador>` +
    `${el('nrInscricaoMunicipal', project.inscricaoMunicipal)}${el('cnpj', project.cnpj)}` +
    `${el('idEntidade', project.idEntidade)}</prestador>${el('nrNfse', numero)}</es:esConsultarNfseEnvio>`;
  const answer = await send(call(context, 'esConsultarNfse', signed(message, context)));
  if (answer.kind !== 'response') return transportFailure(answer);
  const read = answerOf(answer);
  if (read.kind === 'failure') return read.outcome;
  const nfse = first(read.root, 'nfse');
  if (nfse && text(nfse, 'nrNfse') === numero) return { kind: 'ok', value: nfse };
  return read.errors.length === 0 || read.errors.every((e) => NOT_FOUND.test(e.Descricao))
    ? { kind: 'ok', value: null }
    : rejected(read.errors);
}

const cancellationOf = (nfse: Element, xml: string): CancellationRecord | null => {
  const cancelamento = first(nfse, 'cancelamento');
  if (!cancelamento) return null;
  const at = new Date(`${text(cancelamento, 'dtCancelamento') ?? ''}-03:00`);
  return { cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at, xml };
};

/** The prestador a cancellation or its query names: the issued note's, from the project. */
function noteOwner(issued: {
  providerCnpj: string;
  codigoMunicipio?: string | null;
  inscricaoMunicipal?: string | null;
}) {
  return {
    cnpj: issued.providerCnpj,
    inscricaoMunicipal: digits(issued.inscricaoMunicipal),
    idEntidade: idEntidadeOf(issued.codigoMunicipio) ?? '',
  };
}

/** The cancellation message's parts (`nrNfse` and the owner), read back from the signed message. */
const cancelTarget = (xml: string) => ({
  numero: fieldOf(xml, 'nrNfse'),
  owner: {
    cnpj: fieldOf(xml, 'cnpj'),
    inscricaoMunicipal: fieldOf(xml, 'nrInscricaoMunicipal'),
    idEntidade: fieldOf(xml, 'idEntidade'),
  },
});

export const equiplanoDefinition = defineFamily({
  id: 'own-layout',
  provider: 'Equiplano',
  // only the cities whose idEntidade (CodigoCidade) the registry holds can be written
  serves: (municipality) => idEntidadeOf(municipality) !== null,
  layout: 'Equiplano e-SNFS own layout (SOAP 1.1, signed lots, mTLS)',
  transport: 'soap11',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'async',
    pdf: 'none',
    homologation: true,
    reconcile: true,
  },
  check(project, invoice) {
    const unmet: { field: string; message: string }[] = [];
    if (!idEntidadeOf(project.codigoMunicipio)) {
      unmet.push({ field: 'project.codigoMunicipio', message: 'Equiplano: no idEntidade is known for this city' });
    }
    if (!digits(project.inscricaoMunicipal)) {
      unmet.push({ field: 'project.inscricaoMunicipal', message: 'Equiplano: the municipal registration is required' });
    }
    if (!/^\d$/.test(project.serieNfse)) {
      unmet.push({ field: 'project.serieNfse', message: 'Equiplano: the RPS series (nrEmissorRps) is one digit' });
    }
    if (tpTributacao(project, invoice) === null) {
      unmet.push({
        field: 'valores.tributacaoIss',
        message: 'Equiplano: only taxable, immune or exempt services have a tpTributacao',
      });
    }
    const id = invoice.tomador.id.kind;
    const address = invoice.tomador.endereco;
    if (invoice.tomador.estrangeiro || (id !== 'cnpj' && id !== 'cpf')) {
      unmet.push({ field: 'tomador', message: 'Equiplano: the taker must be Brazilian, with CPF or CNPJ' });
    } else if (!address?.logradouro) {
      unmet.push({ field: 'tomador.endereco', message: 'Equiplano: the taker address (dsEndereco) is required' });
    }
    if (!/^\d{1,2}\.\d{1,2}$/.test(invoice.servico.subitem)) {
      unmet.push({ field: 'servico', message: 'Equiplano: the LC 116 subitem (item.subitem) is required' });
    }
    return unmet;
  },
  declaration: {
    build(input) {
      return { id: String(input.number), xml: loteXml(input) };
    },
    // the whole document is signed (`URI=""`); the root is named as written, prefix included
    signedElement: 'es:enviarLoteRpsEnvio',
    signature: { reference: 'document' },
    schema: null,
    schemaErrorCode: 'EQUIPLANO_LAYOUT',
  },
  operations: {
    emit: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument>> {
        const answer = await send(call(context, 'esRecepcionarLoteRps', document.xml));
        if (answer.kind !== 'response') return transportFailure(answer);
        const read = answerOf(answer);
        if (read.kind === 'failure') return read.outcome;
        if (read.errors.length > 0) return refusalOrHeld(read.errors, document.xml, context, send);
        const protocol = text(first(read.root, 'protocolo'), 'nrProtocolo');
        return protocol
          ? { kind: 'pending', protocol }
          : { kind: 'unknown', reason: 'Equiplano accepted the lot without a protocol' };
      },
    },
    poll: {
      async exchange({ protocol, document }, context, send): Promise<Outcome<IssuedDocument>> {
        const situacao =
          `<es:esConsultarSituacaoLoteRpsEnvio xmlns:es="${EQUIPLANO_NS}">${queryPrestador(document.xml)}` +
          `${el('nrProtocolo', protocol)}</es:esConsultarSituacaoLoteRpsEnvio>`;
        const state = await send(call(context, 'esConsultarSituacaoLoteRps', signed(situacao, context)));
        if (state.kind !== 'response') return transportFailure(state);
        const read = answerOf(state);
        if (read.kind === 'failure') return read.outcome;
        if (read.errors.length > 0) return { kind: 'transient', reason: `lot state: ${read.errors[0]!.Codigo}` };
        const stLote = text(first(read.root, 'esConsultarSituacaoLoteRpsResposta') ?? read.root, 'stLote');
        if (stLote === '1') return { kind: 'pending', protocol };
        const lote =
          `<es:esConsultarLoteRpsEnvio xmlns:es="${EQUIPLANO_NS}">${queryPrestador(document.xml)}` +
          `${el('nrProtocolo', protocol)}</es:esConsultarLoteRpsEnvio>`;
        const answer = await send(call(context, 'esConsultarLoteRps', signed(lote, context)));
        if (answer.kind !== 'response') return transportFailure(answer);
        const result = answerOf(answer);
        if (result.kind === 'failure') return result.outcome;
        const note = noteOf(result.root, answer.body, context.ambiente);
        if (note && result.errors.length === 0) return { kind: 'ok', value: note };
        if (result.errors.length > 0) return refusalOrHeld(result.errors, document.xml, context, send);
        return { kind: 'unknown', reason: `Equiplano lot ${protocol} in state ${stLote} without a note` };
      },
    },
    query: {
      exchange: (document, context, send) => queryByRps(document.xml, context, send),
    },
    cancel: {
      message: {
        build({ issued, reason }) {
          const owner = noteOwner(issued);
          const xml =
            `<es:esCancelarNfseEnvio xmlns:es="${EQUIPLANO_NS}"><prestador>` +
            `${el('nrInscricaoMunicipal', owner.inscricaoMunicipal)}${el('cnpj', owner.cnpj)}` +
            `${el('idEntidade', owner.idEntidade)}</prestador>${el('nrNfse', issued.numero)}` +
            `${el('dsMotivoCancelamento', (reason ?? 'Cancelamento solicitado pelo prestador').slice(0, 255))}` +
            '</es:esCancelarNfseEnvio>';
          return { id: `cancel-${issued.numero}`, xml };
        },
        signedElement: 'es:esCancelarNfseEnvio',
        signature: { reference: 'document' },
        schema: null,
        schemaErrorCode: 'EQUIPLANO_LAYOUT',
      },
      operation: {
        async exchange({ signed: message }, context, send): Promise<Outcome<CancellationRecord>> {
          const answer = await send(call(context, 'esCancelarNfse', message));
          if (answer.kind !== 'response') return transportFailure(answer);
          const read = answerOf(answer);
          if (read.kind === 'failure') return read.outcome;
          if (read.errors.length === 0) {
            const ok = text(first(read.root, 'esCancelarNfseResposta') ?? read.root, 'sucesso');
            return ok === 'false'
              ? { kind: 'unknown', reason: 'Equiplano cancellation answered sucesso=false without errors' }
              : { kind: 'ok', value: { cancelledAt: new Date(), xml: answer.body } };
          }
          // a refused cancellation of a note the government holds as cancelled: "already cancelled"
          const target = cancelTarget(message);
          const held = await queryByNumber(target.numero, target.owner, context, send);
          if (held.kind === 'ok' && held.value && cancellationOf(held.value, '')) {
            const head = read.errors[0]!;
            return rejected([{ ...head, Codigo: EQUIPLANO_ALREADY_CANCELLED }, ...read.errors]);
          }
          return rejected(read.errors);
        },
      },
    },
    queryCancellation: {
      async exchange(issued, context, send): Promise<Outcome<CancellationRecord | null>> {
        // the reference carries no prestador: the certificate's CNPJ and the project's city name it (ACBr's
        // nrInscricaoMunicipal is left out, as OpenAC.Net sends this query)
        const cnpj = context.certificate.cnpj;
        const idEntidade = idEntidadeOf(context.municipality);
        if (!issued.numero || !cnpj || !idEntidade) return { kind: 'ok', value: null };
        const held = await queryByNumber(issued.numero, { cnpj, inscricaoMunicipal: '', idEntidade }, context, send);
        if (held.kind !== 'ok') return held;
        return { kind: 'ok', value: held.value ? cancellationOf(held.value, outerXml(held.value)) : null };
      },
    },
  },
  alreadyProcessedCodes: [],
  alreadyCancelledCodes: [EQUIPLANO_ALREADY_CANCELLED],
});
