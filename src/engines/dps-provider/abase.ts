import { findDescendant, parseXml } from '../../xml/read.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { nationalFamily } from '../national/family.ts';
import type { CancellationRecord, IssuedDocument, Outcome } from '../types.ts';
import { embeddedNfse, nationalCancellationQuery, xmlErrors } from './raw-xml.ts';

/**
 * ABase (34 municipalities in RS; briefs/providers-own.md §4): the national DPS 1.01, signed on infDPS by the national
 * builder and signer, POSTed raw (`application/xml`) to the provider's REST API with `Authorization: Bearer
 * <WSChaveAcesso>` (the project's `cscToken`) AND the A1 certificate in the TLS handshake. Asynchronous:
 *
 *   POST /recepcionardps (raw signed DPS)          → {Protocolo, DataHoraRecebimento}     → `pending`
 *   GET  /consultarlotedps/{protocolo}             → {Situacao} while processing; {StatusProcessamento, ChaveAcesso,
 *                                                    NFSe} once processed                 → `pending` / `ok`
 *   GET  /consultarnfsedps/{nDPS}                  → the same processed shape (reconciliation)
 *   POST /CancelarNfse (signed pedRegEvento XML)    → <CancelarNfseResponse>
 *   errors: Erros/Erro{Codigo, Descricao, Correcao}, or a bare <Erro>text</Erro> (code ERRO)
 *
 * The cancellation query goes to Sefin Nacional (ACBr `ServicosPadraoNacional: ConsultarEvento`, the e101101 event).
 *
 * Conservative readings of what the brief leaves open (the sandbox, src/sandbox/raw-xml/, accepts only these):
 * - the request bodies are the signed XML with an XML declaration, `content-type: application/xml`;
 * - answer root names are not documented: the fields are read by name at any depth, whatever the root;
 * - `NFSe` is the signed national NFS-e embedded as an element (escaped text is read too);
 * - the processed answer counts as issued only with a readable national NFS-e (key and number); `Erros` in a 200
 *   answer to a poll is a refusal of the declaration; any other 200 answer (a `Situacao`, a status without NFS-e)
 *   is still pending;
 * - a poll refused by HTTP (4xx/5xx) is never a refusal of the declaration: the protocol is asked again (after 24 h
 *   the job ends it PROTOCOL_UNRESOLVED, never resending);
 * - the reception checks the schema, signature and business rules before answering and refuses with national codes
 *   (E0014 "already processed" → reconciled; E0840 "already cancelled" → the cancellation query decides);
 * - `consultarnfsedps/{nDPS}` is scoped by the credential (one taxpayer): 404 means no note for that number; a note
 *   whose embedded DPS is not ours (another series) is "none" too;
 * - a cancellation is done when the answer is 2xx, has no `Erros` and its root is `CancelarNfseResponse`; the
 *   embedded national `evento` is kept as the cancellation XML when present.
 */

const XML_HEADERS = { 'content-type': 'application/xml; charset=utf-8', accept: 'application/xml' };
const ACCEPT_XML = { accept: 'application/xml' };

const withXmlDeclaration = (xml: string) => `<?xml version="1.0" encoding="UTF-8"?>${xml}`;
const base = (context: SendContext) => context.endpoints.url('emit', context.ambiente, context.municipality);

/** The DPS number of a DPS Id (`DPS` + cMun 7 + tpInsc 1 + inscription 14 + serie 5 + nDPS 15), without zeros. */
export function dpsNumberOf(id: string): string {
  return id.slice(-15).replace(/^0+(?=.)/, '');
}

function field(body: string, name: string): string | null {
  const parsed = parseXml(body);
  if (!parsed.ok) return null;
  return findDescendant(parsed.root, name)?.textContent?.trim() || null;
}

/** A refusal of the provider (4xx): its `Erros`, else the HTTP status; 429/5xx are transient. */
function refusal(answer: HttpResponse): Outcome<never> {
  const errors = xmlErrors(answer.body);
  const first = errors[0];
  if (answer.status === 429 || answer.status >= 500) {
    return {
      kind: 'transient',
      reason: `HTTP ${answer.status}${first ? ` ${first.Codigo} ${first.Descricao}` : ''}`,
      httpStatus: answer.status,
    };
  }
  const error = first ?? { Codigo: `HTTP${answer.status}`, Descricao: answer.body.slice(0, 500) || 'sem corpo' };
  return {
    kind: 'rejected',
    errorCode: error.Codigo,
    errorMessage: error.Descricao,
    errors: errors.length > 0 ? errors : [error],
    httpStatus: answer.status,
  };
}

const ok2xx = (answer: HttpResponse) => answer.status >= 200 && answer.status < 300;

export const abaseDefinition = defineFamily({
  id: 'dps-provider',
  provider: 'ABase',
  layout: 'DPS 1.01 (ABase API nacional, raw XML + Bearer)',
  transport: 'rest-json',
  auth: 'bearer',
  presentsCertificate: true,
  nationalOperations: ['queryCancellation'],
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'async',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  check: nationalFamily.check,
  declaration: nationalFamily.declaration,
  operations: {
    emit: {
      request: (document, context): OperationRequest => ({
        method: 'POST',
        url: `${base(context)}/recepcionardps`,
        headers: XML_HEADERS,
        body: withXmlDeclaration(document.xml),
      }),
      parse(answer): Outcome<IssuedDocument> {
        if (!ok2xx(answer)) return refusal(answer);
        const errors = xmlErrors(answer.body);
        if (errors.length > 0) return refusal({ ...answer, status: 400 });
        const protocol = field(answer.body, 'Protocolo');
        return protocol
          ? { kind: 'pending', protocol }
          : { kind: 'unknown', reason: 'reception answer without Protocolo' };
      },
    },
    poll: {
      request: ({ protocol }, context): OperationRequest => ({
        method: 'GET',
        url: `${base(context)}/consultarlotedps/${encodeURIComponent(protocol)}`,
        headers: ACCEPT_XML,
      }),
      parse(answer, { protocol }, context): Outcome<IssuedDocument> {
        if (!ok2xx(answer)) {
          const outcome = refusal(answer);
          return outcome.kind === 'rejected'
            ? { kind: 'transient', reason: `consultarlotedps: ${outcome.errorCode} ${outcome.errorMessage}` }
            : outcome;
        }
        const errors = xmlErrors(answer.body);
        if (errors.length > 0) return refusal({ ...answer, status: 400 });
        const issued = embeddedNfse(answer.body, context.ambiente);
        if (issued) return { kind: 'ok', value: { ...issued, protocol } };
        return { kind: 'pending', protocol };
      },
    },
    query: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument | null>> {
        const answer = await send({
          method: 'GET',
          url: `${base(context)}/consultarnfsedps/${dpsNumberOf(document.id)}`,
          headers: ACCEPT_XML,
        });
        if (answer.kind !== 'response') return transportFailure(answer);
        if (answer.status === 404) return { kind: 'ok', value: null };
        if (!ok2xx(answer)) return refusal(answer);
        const issued = embeddedNfse(answer.body, context.ambiente);
        if (!issued) return { kind: 'transient', reason: 'consultarnfsedps answered without an NFS-e (processing)' };
        if (!issued.xml.includes(`Id="${document.id}"`)) return { kind: 'ok', value: null };
        return { kind: 'ok', value: issued };
      },
    },
    cancel: {
      message: nationalFamily.operations.cancel!.message,
      operation: {
        request: ({ signed }, context): OperationRequest => ({
          method: 'POST',
          url: `${base(context)}/CancelarNfse`,
          headers: XML_HEADERS,
          body: withXmlDeclaration(signed),
        }),
        parse(answer): Outcome<CancellationRecord> {
          if (!ok2xx(answer)) return refusal(answer);
          if (xmlErrors(answer.body).length > 0) return refusal({ ...answer, status: 400 });
          const parsed = parseXml(answer.body);
          if (!parsed.ok || parsed.root.localName !== 'CancelarNfseResponse') {
            return { kind: 'unknown', reason: 'cancellation answer without CancelarNfseResponse' };
          }
          const start = answer.body.indexOf('<evento ');
          const end = answer.body.lastIndexOf('</evento>');
          const eventXml = start >= 0 && end > start ? answer.body.slice(start, end + '</evento>'.length) : null;
          const dhProc = field(answer.body, 'dhProc');
          const at = dhProc ? new Date(dhProc) : new Date();
          return {
            kind: 'ok',
            value: { xml: eventXml ?? answer.body, cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at },
          };
        },
      },
    },
    queryCancellation: nationalCancellationQuery(),
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E0840'],
});
