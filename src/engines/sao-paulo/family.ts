import { child, children, outerXml, parseXmlDocument, text } from '../../xml/read.ts';
import { signXml } from '../../xml/sign.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import { readSoapAnswer, soapEnvelope } from '../kit/soap.ts';
import type { HttpAnswer, HttpResponse } from '../kit/http-client.ts';
import type { CancellationRecord, IssuedDocument, Outcome, PreparedDocument } from '../types.ts';
import {
  buildPedidoCancelamentoNfe,
  buildPedidoConsultaNfe,
  buildPedidoConsultaSituacaoLote,
  buildPedidoEnvioLoteRpsAsync,
  buildPedidoEnvioRps,
  loteAsSingleRps,
  rpsKeyId,
  rpsKeyOf,
  SP_NAMESPACE,
} from './messages.ts';

/**
 * City of São Paulo, NF-e Paulistana layout v02 (registry provider `ISSSaoPaulo`, briefs/providers-own.md §1;
 * manual NFe_Web_Service v3.3.5; schemas-reformatributaria-v02-4 in schemas/sao-paulo/v02/). Synchronous
 * `lotenfe.asmx` (.NET ASMX document/literal, SOAP 1.1 with SOAPAction `http://www.prefeitura.sp.gov.br/nfe/ws/<op>`):
 * `<XRequest><VersaoSchema>2</VersaoSchema><MensagemXML>escaped XML</MensagemXML>`, answer
 * `<XResponse><RetornoXML>escaped XML</RetornoXML>`. mTLS with the ICP-Brasil certificate whose CNPJ is the
 * `CPFCNPJRemetente` (error 1100). Every Pedido is signed enveloped over the whole root (`URI=""`, RSA-SHA1, C14N).
 *
 * Emission mode (`defineSaoPaulo({ emission })`, one definition, the mode is data):
 * - `sync` (default, `saoPauloFamily`, the registry's `sao-paulo:isssaopaulo`): EnvioRPS, one RPS per message,
 *   answered with the note;
 * - `async` (`saoPauloAsyncFamily`, §1.6): EnvioLoteRpsAsync on `lotenfeasync.asmx` (beside `lotenfe.asmx`;
 *   parameter `versaoSchema`, RetornoXML as elements) with `PedidoEnvioLoteRPS` (PedidoEnvioLoteRPSAsync_v02.xsd: the
 *   same RPS and signature string, lote header transacao/dtInicio/dtFim/QtdRPS 1), answered with a 32-character
 *   protocol → `pending` (the kit records the protocol before anything else, and never resends a lote whose
 *   protocol it knows); the kit's poll job then asks ConsultaSituacaoLoteSync (unsigned PedidoConsultaSituacaoLote)
 *   until the lote is processed and reads the note from its ResultadoOperacao (a RetornoEnvioLoteRPS), ConsultaNFe
 *   by the ChaveRPS reconciling what the result does not show. The mode is chosen where the engine is chosen (the
 *   definitions map, index.ts) so that a project's whole history stays in one mode; only `sync` is registered today.
 *   Before a lote is sent, ConsultaNFe by the ChaveRPS: a note found is the answer (a re-sent RPS would be re-processed,
 *   alert 217, seen only after processing). Known limit: a lote whose answer was lost and that the city has not
 *   processed yet is invisible to ConsultaNFe, so an unknown emission must be reconciled after SP's processing time.
 *
 * Readings chosen for the brief's unknowns (§1.10) and open points (the sandbox accepts only these):
 * - amount: `ValorFinalCobrado` only (ValorInicialCobrado is refused with 640 by the live service, [FIELD-SP]); the
 *   RPS signature string is the manual's v2 string (CCM 12 digits, ValorFinalCobrado in cents; 90 characters
 *   without intermediary or NIF); a NaoNIF taker signs indicator 4 + 14 zeros + the NaoNIF digit (manual example);
 * - `MunicipioPrestacao` only when TributacaoRPS is F (error 1223 for T); TributacaoRPS T when the service is in
 *   São Paulo, F otherwise;
 * - the cancellation signature is CCM **8** digits + NF-e number 12 digits; a CCM with more than 8 significant
 *   digits is refused up front (how SP signs it is unknown, §1.10 item 4);
 * - codigoServico: `servico.codigoServico` or the project's `codigoServicoSp` (the table is unpublished, §1.9);
 * - alert 217 (RPS re-sent: the old note cancelled, a new one issued) → unknown, reconciled by ConsultaNFe on the
 *   ChaveRPS, which holds the note in force; 215 (duplicate RPS in one message) likewise; 1106 on a consultation
 *   → none; alert 1301 on a cancellation → "already cancelled", believed only once ConsultaNFe by ChaveNFe (CCM +
 *   number) shows the note with StatusNFe C (the cancellation query; DataCancelamento read as São Paulo time);
 * - PDF: the city portal (no official URL, §1.8): ACBr's `ProLinkURL` `nfe.aspx?ccm=&nf=&cod=`.
 */
const ACTION_BASE = 'http://www.prefeitura.sp.gov.br/nfe/ws/';
export const SP_PORTAL = 'https://nfe.prefeitura.sp.gov.br/nfe.aspx';

/**
 * The asynchronous service's URL: `lotenfeasync.asmx` beside the synchronous `lotenfe.asmx` of the municipality's
 * endpoint (§1.2: both on `nfews`), or under the endpoint when it names no `.asmx` (a sandbox's mount).
 */
export function asyncUrlOf(syncUrl: string): string {
  return /lotenfe\.asmx$/i.test(syncUrl)
    ? syncUrl.replace(/lotenfe\.asmx$/i, 'lotenfeasync.asmx')
    : `${syncUrl.replace(/\/+$/, '')}/lotenfeasync.asmx`;
}

function call(
  operation: string,
  action: string,
  xml: string,
  context: SendContext,
  service: 'sync' | 'async' = 'sync',
): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: SP_NAMESPACE,
    operation: `${operation}Request`,
    parts: [
      // the async WSDL names the version parameter `versaoSchema` (lower-case v, §1.3)
      { name: service === 'async' ? 'versaoSchema' : 'VersaoSchema', value: '2', encoding: 'escaped', qualified: true },
      { name: 'MensagemXML', value: xml, encoding: 'escaped', qualified: true },
    ],
    soapAction: `${ACTION_BASE}${action}`,
  });
  const url = context.endpoints.url('emit', context.ambiente, context.municipality);
  return { method: 'POST', url: service === 'async' ? asyncUrlOf(url) : url, headers, body };
}

function sign(xml: string, context: SendContext): string {
  return signXml(xml, {
    key: { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem },
    algorithm: 'rsa-sha1',
  });
}

const senderOf = (context: { certificate: { cnpj: string | null; cpf: string | null } }, fallback = '') =>
  context.certificate.cnpj ?? context.certificate.cpf ?? fallback;

interface Evento {
  Codigo: string;
  Descricao: string;
}

type Retorno = { kind: 'read'; root: Element; sucesso: boolean; erros: Evento[]; alertas: Evento[] };

/** The provider's Retorno (escaped string in RetornoXML), or the outcome of a fault / unreadable answer. */
function retornoOf(
  answer: { status: number; body: string },
  write: boolean,
  structured = false,
): Retorno | Outcome<never> {
  const lost = (reason: string): Outcome<never> =>
    write ? { kind: 'unknown', reason } : { kind: 'transient', reason };
  const soap = readSoapAnswer(answer.body);
  if (soap.kind === 'fault') {
    return answer.status >= 500 && /Server/.test(soap.code)
      ? { kind: 'transient', reason: `SOAP fault ${soap.code}: ${soap.reason}` }
      : lost(`SOAP fault ${soap.code}: ${soap.reason}`);
  }
  if (soap.kind !== 'body' || !soap.result) return lost(`HTTP ${answer.status}: unreadable answer`);
  let root: Element | null;
  try {
    // the async service answers RetornoXML as elements (§1.3): read them under one root
    const xml = structured ? `<RetornoXML>${soap.result}</RetornoXML>` : soap.result;
    root = parseXmlDocument(xml, () => undefined).documentElement;
  } catch {
    return lost('RetornoXML is not XML');
  }
  if (!root) return lost('empty RetornoXML');
  const eventos = (name: string) =>
    children(root, name).map((e) => ({ Codigo: text(e, 'Codigo') ?? '', Descricao: text(e, 'Descricao') ?? '' }));
  return {
    kind: 'read',
    root,
    sucesso: (text(root, 'Cabecalho/Sucesso') ?? text(root, 'Sucesso')) === 'true',
    erros: eventos('Erro'),
    alertas: eventos('Alerta'),
  };
}

function refused(retorno: Retorno): Outcome<never> {
  const errors = [...retorno.erros, ...retorno.alertas];
  const first = retorno.erros[0] ?? retorno.alertas[0];
  return {
    kind: 'rejected',
    errorCode: first?.Codigo || 'SP',
    errorMessage: first?.Descricao || 'Pedido recusado pela Prefeitura de São Paulo',
    errors,
  };
}

/** The note of a `ChaveNFe` (EnvioRPS answer) or of a `tpNFe` (consultation). */
/** `DataCancelamento` (São Paulo local time when it carries no offset), or now when absent or unreadable. */
function cancelledAtOf(value: string | null): Date {
  if (!value) return new Date();
  const at = new Date(/(Z|[+-]\d{2}:\d{2})$/.test(value) ? value : `${value}-03:00`);
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

function issuedOf(chaveNfe: Element | null, xml: string, ambiente: 1 | 2, at: string | null): IssuedDocument | null {
  const numero = text(chaveNfe, 'NumeroNFe');
  if (!numero) return null;
  const emitted = new Date(at ?? Date.now());
  return {
    chave: text(chaveNfe, 'ChaveNotaNacional'),
    numero,
    verificationCode: text(chaveNfe, 'CodigoVerificacao'),
    emittedAt: Number.isNaN(emitted.getTime()) ? new Date() : emitted,
    xml,
    ambiente,
  };
}

/** The note of our RPS among the `ChaveNFeRPS` of a `RetornoEnvioLoteRPS` (the lote result, §1.6 step 4). */
function noteOfLote(root: Element, document: { id: string }): Element | null {
  const key = rpsKeyOf(document.id);
  return (
    children(root, 'ChaveNFeRPS').find(
      (c) =>
        text(c, 'ChaveRPS/NumeroRPS') === key.numero &&
        (text(c, 'ChaveRPS/SerieRPS') ?? '') === key.serie &&
        Number(text(c, 'ChaveRPS/InscricaoPrestador')) === Number(key.ccm),
    ) ?? null
  );
}

/**
 * `EnvioLoteRpsAsync`, after ConsultaNFe by the ChaveRPS: a lote is sent only for an RPS the city holds no note of.
 * A re-sent RPS is re-processed by the city (a different content cancels the note in force and issues another,
 * alert 217), and in the async flow that would only be seen once the lote is processed; so the note found is the
 * answer (`ok`), a query that fails sends nothing (`transient`), and only then the lote goes. Received, it answers
 * its 32-character protocol → `pending` (the kit records it first); refused at reception, its Erros → rejected.
 */
const emitAsync = {
  async exchange(
    document: PreparedDocument,
    context: SendContext,
    send: (request: OperationRequest) => Promise<HttpAnswer>,
  ): Promise<Outcome<IssuedDocument>> {
    const held = await send(queryByRps(document, context));
    // not sent → transient; lost → unknown, which the kit resolves by the same ConsultaNFe before anything is sent
    if (held.kind !== 'response') return transportFailure(held);
    const found = parseQuery(held, context);
    if (found.kind === 'ok' && found.value) return { kind: 'ok', value: found.value };
    if (found.kind !== 'ok') return { kind: 'transient', reason: 'ConsultaNFe before the lote did not answer' };
    const answer = await send(call('EnvioLoteRPS', 'envioLoteRPSAsync', document.xml, context, 'async'));
    if (answer.kind !== 'response') return transportFailure(answer);
    const retorno = retornoOf(answer, true, true);
    if (retorno.kind !== 'read') return retorno;
    if (!retorno.sucesso) return refused(retorno);
    const protocol = text(retorno.root, 'Cabecalho/InformacoesLote/NumeroProtocolo');
    if (!protocol) return { kind: 'unknown', reason: 'EnvioLoteRpsAsync succeeded without NumeroProtocolo' };
    return { kind: 'pending', protocol };
  },
};

/**
 * `ConsultaSituacaoLoteSync` until the lote is processed (§1.6): Situacao 0 enviado / 2 verificado and error 1110
 * ("try again") → pending; 1 invalidado, 1111 (nothing to issue) and 1112 (lote discarded) → rejected with the
 * city's codes; 3 processado → the note read from `ResultadoOperacao` (a `RetornoEnvioLoteRPS`, whose errors,
 * alerts 217/215 included, are read as the synchronous answer's), or, when the result does not hold our RPS, ConsultaNFe
 * by the ChaveRPS (reconciliation). Any other answer → unknown, which the kit reconciles by ConsultaNFe: the lote,
 * whose protocol is known, is never sent again.
 */
const pollAsync = {
  async exchange(
    { protocol, document }: { protocol: string; document: PreparedDocument },
    context: SendContext,
    send: (request: OperationRequest) => Promise<HttpAnswer>,
  ): Promise<Outcome<IssuedDocument>> {
    const pedido = buildPedidoConsultaSituacaoLote(senderOf(context), protocol);
    const answer = await send(call('ConsultaSituacaoLote', 'consultaSituacaoLote', pedido, context, 'async'));
    // a poll that did not get through: ask again later (the protocol is known, nothing is resent)
    if (answer.kind !== 'response') return { kind: 'pending', protocol };
    const retorno = retornoOf(answer, false, true);
    // a fault or an unreadable answer to a read: ask again later (never a reason to resend the lote)
    if (retorno.kind !== 'read') return retorno.kind === 'transient' ? { kind: 'pending', protocol } : retorno;
    const codes = retorno.erros.map((e) => e.Codigo);
    if (codes.includes('1110')) return { kind: 'pending', protocol };
    if (codes.includes('1111') || codes.includes('1112')) return refused(retorno);
    if (!retorno.sucesso) {
      return { kind: 'unknown', reason: `ConsultaSituacaoLote ${codes.join(',') || 'without Sucesso'}` };
    }
    const situacao = text(retorno.root, 'Situacao');
    if (situacao === '0' || situacao === '2') return { kind: 'pending', protocol };
    const resultado = text(retorno.root, 'ResultadoOperacao');
    const lote = resultado ? retornoOf({ status: 200, body: soapOf(resultado) }, true) : null;
    if (situacao === '1') return lote?.kind === 'read' && lote.erros.length > 0 ? refused(lote) : refused(retorno);
    if (situacao !== '3') return { kind: 'unknown', reason: `lote ${protocol} in situation ${situacao ?? 'absent'}` };
    if (lote && lote.kind === 'read') {
      const lostCodes = [...lote.erros, ...lote.alertas].map((e) => e.Codigo);
      if (lostCodes.includes('217') || lostCodes.includes('215')) return refused({ ...lote, erros: lote.alertas });
      if (!lote.sucesso) return refused(lote);
      const mine = noteOfLote(lote.root, document);
      const issued = mine ? issuedOf(child(mine, 'ChaveNFe'), outerXml(lote.root), context.ambiente, null) : null;
      if (issued) return { kind: 'ok', value: { ...issued, protocol } };
    }
    // processed, but the result does not name our note: ask for the RPS itself
    const found = await send(queryByRps(document, context));
    const read: Outcome<IssuedDocument | null> =
      found.kind === 'response' ? parseQuery(found, context) : { kind: 'transient', reason: found.reason };
    if (read.kind === 'ok' && read.value) return { kind: 'ok', value: { ...read.value, protocol } };
    return { kind: 'unknown', reason: `lote ${protocol} processed without our NF-e` };
  },
};

/** A RetornoXML string read by `retornoOf` (which reads a SOAP body). */
const soapOf = (xml: string) =>
  `<Envelope><Body><R><RetornoXML>${xml.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</RetornoXML></R></Body></Envelope>`;

/** ConsultaNFe by ChaveRPS (the reconciliation query). */
function queryByRps(document: { id: string }, context: SendContext): OperationRequest {
  return call(
    'ConsultaNFe',
    'consultaNFe',
    sign(buildPedidoConsultaNfe(senderOf(context), { rps: rpsKeyOf(document.id) }), context),
    context,
  );
}

function parseQuery(answer: HttpResponse, context: SendContext): Outcome<IssuedDocument | null> {
  const retorno = retornoOf(answer, false);
  if (retorno.kind !== 'read') return retorno;
  if (retorno.erros.some((e) => e.Codigo === '1106')) return { kind: 'ok', value: null };
  if (!retorno.sucesso) return refused(retorno);
  const nfe = children(retorno.root, 'NFe')[0];
  if (!nfe) return { kind: 'ok', value: null };
  const issued = issuedOf(child(nfe, 'ChaveNFe'), outerXml(nfe), context.ambiente, text(nfe, 'DataEmissaoNFe'));
  return issued ? { kind: 'ok', value: issued } : { kind: 'transient', reason: 'NFe without NumeroNFe' };
}

/** How São Paulo's notes are issued (see the definition's header). */
export interface SaoPauloOptions {
  emission: 'sync' | 'async';
}

/** The São Paulo definition in one emission mode; `saoPauloFamily` (sync) is the registry's. */
export function defineSaoPaulo(options: SaoPauloOptions = { emission: 'sync' }) {
  const lote = options.emission === 'async';
  return defineFamily({
    id: 'sao-paulo',
    provider: 'ISSSaoPaulo',
    layout: lote
      ? 'NF-e Paulistana v02 (PedidoEnvioLoteRPS async, SOAP ASMX)'
      : 'NF-e Paulistana v02 (PedidoEnvioRPS, SOAP ASMX)',
    transport: 'soap11',
    auth: 'mtls',
    capabilities: {
      cancel: true,
      substitution: false,
      batch: false,
      mode: lote ? 'async' : 'sync',
      pdf: 'portal',
      homologation: false,
      reconcile: true,
    },
    check(project, invoice) {
      const errors: { field: string; message: string }[] = [];
      const ccm = (project.inscricaoMunicipal ?? '').replace(/\D/g, '');
      if (!/^\d{1,12}$/.test(ccm) || ccm.replace(/^0+/, '').length > 8) {
        errors.push({
          field: 'project.inscricaoMunicipal',
          message: 'the CCM (up to 8 significant digits: the cancellation signature takes 8) is required by São Paulo',
        });
      }
      if (!/^\d{4,5}$/.test(invoice.servico.codigoServicoMunicipal ?? '')) {
        errors.push({
          field: 'servico.codigoServico',
          message: "São Paulo's service code (4 or 5 digits) is required: send it or set the project's codigoServicoSp",
        });
      }
      if (!invoice.ibscbs && !invoice.servico.nbs) {
        errors.push({ field: 'servico.nbs', message: 'required by São Paulo v2 (NBS, error 286)' });
      }
      if (!invoice.ibscbs) {
        errors.push({
          field: 'ibscbs',
          message: 'São Paulo v2 requires the IBS/CBS group (indicadorOperacao, classificacaoTributaria)',
        });
      }
      if (invoice.servico.localPrestacao.kind === 'pais' || invoice.exportacao) {
        errors.push({ field: 'servico.localPrestacao', message: 'services abroad are not sent to São Paulo yet' });
      }
      return errors;
    },
    declaration: {
      build: (input) => {
        const ccm = (input.project.inscricaoMunicipal ?? '').replace(/\D/g, '');
        const build = lote ? buildPedidoEnvioLoteRpsAsync : buildPedidoEnvioRps;
        return {
          id: rpsKeyId({ ccm, serie: input.serie, numero: String(input.number) }),
          xml: build({
            project: input.project,
            invoice: input.invoice,
            serie: input.serie,
            numero: input.number,
            issuedAt: input.issuedAt,
            privateKey: input.certificate.privateKey,
            remetente: senderOf(input, input.project.cnpj),
          }),
        };
      },
      signedElement: lote ? 'PedidoEnvioLoteRPS' : 'PedidoEnvioRPS',
      signature: { reference: 'document', placement: 'root-end' },
      schema: 'spEnvioRps',
      ...(lote ? { schemaView: loteAsSingleRps } : {}),
      schemaErrorCode: 'NFSE_SCHEMA_INVALID',
    },
    operations: {
      ...(lote ? { poll: pollAsync } : {}),
      emit: lote
        ? emitAsync
        : {
            request: (document, context) => call('EnvioRPS', 'envioRPS', document.xml, context),
            parse(answer, _document, context): Outcome<IssuedDocument> {
              const retorno = retornoOf(answer, true);
              if (retorno.kind !== 'read') return retorno;
              const codes = [...retorno.erros, ...retorno.alertas].map((e) => e.Codigo);
              // 217: the RPS was re-sent (the old note cancelled, a new one issued); 215: duplicate: reconcile
              if (codes.includes('217') || codes.includes('215'))
                return refused({ ...retorno, erros: retorno.alertas });
              if (!retorno.sucesso) return refused(retorno);
              const issued = issuedOf(
                child(retorno.root, 'ChaveNFeRPS/ChaveNFe'),
                outerXml(retorno.root),
                context.ambiente,
                null,
              );
              return issued
                ? { kind: 'ok', value: issued }
                : { kind: 'unknown', reason: 'RetornoEnvioRPS without ChaveNFe' };
            },
          },
      query: {
        request: (document, context) => queryByRps(document, context),
        parse: (answer, _document, context) => parseQuery(answer, context),
      },
      cancel: {
        message: {
          build: ({ issued, certificate }) => ({
            id: issued.numero ?? '',
            xml: buildPedidoCancelamentoNfe(
              certificate.cnpj ?? certificate.cpf ?? issued.providerCnpj,
              issued.inscricaoMunicipal ?? '',
              issued.numero ?? '',
              certificate.privateKey,
            ),
          }),
          signedElement: 'PedidoCancelamentoNFe',
          signature: { reference: 'document', placement: 'root-end' },
          schema: 'spCancelamentoNfe',
          schemaErrorCode: 'EVENT_SCHEMA_INVALID',
        },
        operation: {
          request: ({ signed }, context) => call('CancelamentoNFe', 'cancelamentoNFe', signed, context),
          parse(answer): Outcome<CancellationRecord> {
            const retorno = retornoOf(answer, true);
            if (retorno.kind !== 'read') return retorno;
            // alert 1301: "NF-e já cancelada em <data>"
            if (retorno.alertas.some((a) => a.Codigo === '1301'))
              return refused({ ...retorno, erros: retorno.alertas });
            if (!retorno.sucesso) return refused(retorno);
            return { kind: 'ok', value: { xml: outerXml(retorno.root), cancelledAt: new Date() } };
          },
        },
      },
      queryCancellation: {
        // ConsultaNFe by ChaveNFe (CCM + number): the note with StatusNFe C and its DataCancelamento
        request: (issued, context) =>
          call(
            'ConsultaNFe',
            'consultaNFe',
            sign(
              buildPedidoConsultaNfe(senderOf(context), {
                nfe: { ccm: (issued.inscricaoMunicipal ?? '').replace(/\D/g, ''), numero: issued.numero ?? '' },
              }),
              context,
            ),
            context,
          ),
        parse(answer): Outcome<CancellationRecord | null> {
          const retorno = retornoOf(answer, false);
          if (retorno.kind !== 'read') return retorno;
          if (retorno.erros.some((e) => e.Codigo === '1106')) return { kind: 'ok', value: null };
          if (!retorno.sucesso) return refused(retorno);
          const nfe = children(retorno.root, 'NFe')[0];
          if (!nfe || text(nfe, 'StatusNFe') !== 'C') return { kind: 'ok', value: null };
          return {
            kind: 'ok',
            value: { cancelledAt: cancelledAtOf(text(nfe, 'DataCancelamento')), xml: outerXml(nfe) },
          };
        },
      },
    },
    pdfLink: (issued) =>
      issued.inscricaoMunicipal && issued.numero && issued.verificationCode
        ? `${SP_PORTAL}?ccm=${issued.inscricaoMunicipal.replace(/\D/g, '')}&nf=${issued.numero}&cod=${issued.verificationCode}`
        : null,
    alreadyProcessedCodes: ['217', '215'],
    alreadyCancelledCodes: ['1301'],
  });
}

/** Synchronous `EnvioRPS` (the default, and the registry's `sao-paulo:isssaopaulo`). */
export const saoPauloFamily = defineSaoPaulo();
/** The asynchronous lote flow of §1.6 (`lotenfeasync.asmx`), the same definition in the `async` emission mode. */
export const saoPauloAsyncFamily = defineSaoPaulo({ emission: 'async' });
