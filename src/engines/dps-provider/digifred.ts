import { escapeXmlText } from '../../xml/escape.ts';
import { childElements, descendantText, findDescendant, outerXml, text } from '../../xml/read.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { soapEnvelope } from '../kit/soap.ts';
import { checkDpsRequirements } from '../national/dps-builder.ts';
import { buildNationalDps, nationalCancellationMessage, requireAccessKey } from '../national/family.ts';
import type { CancellationRecord, IssuedDocument, Outcome } from '../types.ts';
import { buildNfseWrapper } from './nfse-wrapper.ts';
import { messagesOf, readStringAnswer, refusal } from './string-soap.ts';

/**
 * Digifred (registry provider `Digifred`, briefs/providers-own.md §4): SOAP 1.1 in
 * `http://www.sped.fazenda.gov.br/nfse/wsdl`, `<tns:GerarNfse><tns:param>CDATA</tns:param></tns:GerarNfse>` with
 * SOAPAction `GerarNfse`; `CancelarNfse` with the national pedRegEvento; mutual TLS; synchronous. Answers are XML
 * strings that may carry two XML declarations and CDATA (ACBr strips them; so does ./string-soap.ts).
 *
 * Conservative readings (the sandbox accepts only these):
 * - payload: the `NFSe` wrapper (./nfse-wrapper.ts) with **empty** `nNFSe`, `nDFSe` and **empty `Id` attributes**
 *   on `infNFSe` and `infDPS`, as Digifred requires; `cTribNac` is the national 6 digits;
 * - signature: an empty Id cannot be referenced (`URI="#"` is no reference), so the wrapper is signed as a whole
 *   document: one Reference `URI=""`, enveloped + C14N, the Signature last in `NFSe` (where NFSe_v1.01.xsd puts it,
 *   after `infNFSe`); a `#Id` reference or any non-empty Id is refused;
 * - no XSD before sending: the empty values break NFSe_v1.01.xsd by design (the DPS inside is the national
 *   builder's; the sandbox validates the document once it has filled in what Digifred assigns);
 * - answers: `GerarNfseResposta{ListaNfse/CompNfse/NFSe | ListaMensagemRetorno/MensagemRetorno{Codigo, Mensagem,
 *   Correcao}}` with the national rule codes (E0014 already processed, E0840 already cancelled);
 * - consultation (not in the brief: no WSDL is known): `ConsultarNfse` with `<ConsultarNfseEnvio>` holding `idDPS`
 *   or `chaveAcesso`; an answer without `NFSe` means none; a cancelled note's answer carries its `evento`.
 */
export const DIGIFRED_NAMESPACE = 'http://www.sped.fazenda.gov.br/nfse/wsdl';
export const DIGIFRED_APP_VERSION = 'nfse-service-1.0';

const url = (context: SendContext) => context.endpoints.url('emit', context.ambiente, context.municipality);

function call(operation: string, xml: string, context: SendContext): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: DIGIFRED_NAMESPACE,
    operation,
    parts: [{ name: 'param', value: xml, encoding: 'cdata', qualified: true }],
    soapAction: operation,
  });
  return { method: 'POST', url: url(context), headers, body };
}

function consultation(key: { idDPS: string } | { chaveAcesso: string }): string {
  const which =
    'idDPS' in key
      ? `<idDPS>${escapeXmlText(key.idDPS)}</idDPS>`
      : `<chaveAcesso>${escapeXmlText(key.chaveAcesso)}</chaveAcesso>`;
  return `<ConsultarNfseEnvio>${which}</ConsultarNfseEnvio>`;
}

/** The answer message, or the outcome of a refusal (ListaMensagemRetorno) / an unreadable answer. */
function messageOf(
  answer: HttpResponse,
  write: boolean,
): { ok: true; root: Element } | { ok: false; outcome: Outcome<never> } {
  const read = readStringAnswer(answer, write);
  if (read.kind === 'failure') return { ok: false, outcome: read.outcome };
  const lista = findDescendant(read.root, 'ListaMensagemRetorno');
  if (lista) {
    return { ok: false, outcome: refusal(messagesOf(lista), { Codigo: 'DIGIFRED', Descricao: 'Erro não detalhado' }) };
  }
  return { ok: true, root: read.root };
}

function issuedOf(root: Element, ambiente: 1 | 2): IssuedDocument | null {
  const nfse = findDescendant(root, 'NFSe');
  if (!nfse) return null;
  const inf = findDescendant(nfse, 'infNFSe');
  const chave = /^NFS(\d{50})$/.exec(inf?.getAttribute('Id') ?? '')?.[1] ?? null;
  const numero = text(inf, 'nNFSe');
  if (!chave || !numero) return null;
  const dhProc = text(inf, 'dhProc');
  return { chave, numero, emittedAt: dhProc ? new Date(dhProc) : new Date(), xml: outerXml(nfse), ambiente };
}

function cancellationOf(root: Element): CancellationRecord | null {
  const eventos = [root, ...childElements(root)].flatMap((e) => (e.localName === 'evento' ? [e] : []));
  const evento = eventos[0] ?? findDescendant(root, 'evento');
  if (!evento || !findDescendant(evento, 'e101101')) return null;
  const at = new Date(descendantText(evento, 'dhProc') ?? '');
  return { xml: outerXml(evento), cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at };
}

export const digifredFamily = defineFamily({
  id: 'dps-provider',
  provider: 'Digifred',
  layout: 'NFSe wrapper of DPS 1.01 with empty identifiers (Digifred, SOAP <param>)',
  transport: 'soap11',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  check: checkDpsRequirements,
  declaration: {
    build: (input) => buildNfseWrapper(buildNationalDps(input, DIGIFRED_APP_VERSION), input.project, 'empty'),
    signedElement: 'NFSe',
    signature: { reference: 'document' },
    schema: null,
    schemaErrorCode: 'NFSE_SCHEMA_INVALID',
  },
  operations: {
    emit: {
      request: (document, context) => call('GerarNfse', document.xml, context),
      parse(answer, _document, context): Outcome<IssuedDocument> {
        const message = messageOf(answer, true);
        if (!message.ok) return message.outcome;
        const issued = issuedOf(message.root, context.ambiente);
        return issued ? { kind: 'ok', value: issued } : { kind: 'unknown', reason: 'answer without the NFS-e' };
      },
    },
    query: {
      request: (document, context) => call('ConsultarNfse', consultation({ idDPS: document.id }), context),
      parse(answer, _document, context): Outcome<IssuedDocument | null> {
        const message = messageOf(answer, false);
        if (!message.ok) return message.outcome;
        if (!findDescendant(message.root, 'NFSe')) return { kind: 'ok', value: null };
        const issued = issuedOf(message.root, context.ambiente);
        return issued ? { kind: 'ok', value: issued } : { kind: 'transient', reason: 'NFS-e without key or number' };
      },
    },
    cancel: {
      message: nationalCancellationMessage(DIGIFRED_APP_VERSION, undefined, 'a Digifred'),
      operation: {
        request: ({ signed }, context) => call('CancelarNfse', signed, context),
        parse(answer): Outcome<CancellationRecord> {
          const message = messageOf(answer, true);
          if (!message.ok) return message.outcome;
          const record = cancellationOf(message.root);
          return record ? { kind: 'ok', value: record } : { kind: 'unknown', reason: 'answer without the evento' };
        },
      },
    },
    queryCancellation: {
      request: (issued, context) =>
        call('ConsultarNfse', consultation({ chaveAcesso: requireAccessKey(issued.chave, 'a Digifred') }), context),
      parse(answer): Outcome<CancellationRecord | null> {
        const message = messageOf(answer, false);
        if (!message.ok) return message.outcome;
        const evento = findDescendant(message.root, 'evento');
        return { kind: 'ok', value: evento ? cancellationOf(evento) : null };
      },
    },
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E0840'],
});
