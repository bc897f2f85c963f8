import { descendantText, findDescendant, parseXml } from '../../xml/read.ts';
import { gunzipBase64, gzipBase64 } from '../../xml/transport-encoding.ts';
import { transportFailure } from '../kit/engine.ts';
import { type CancelMessage, defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { CancellationRecord, IssuedDocument, Outcome, PrepareInput } from '../types.ts';
import { buildDps, checkDpsRequirements } from './dps-builder.ts';
import { buildCancellationRequest, CANCELLATION_EVENT_TYPE } from './event-builder.ts';
import { classifyFailure, parseIssueResponse } from './responses.ts';

export const NATIONAL_APP_VERSION = 'nfse-service-1.0';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
const ACCEPT_JSON = { accept: 'application/json' };

/** Sefin Nacional's base URL of the environment (one service for every operation). */
const base = (context: SendContext) => context.endpoints.url('emit', context.ambiente, context.municipality);

const withXmlDeclaration = (xml: string) => `<?xml version="1.0" encoding="UTF-8"?>${xml}`;

/** The national DPS 1.01 of an invoice, as the builder writes it (shared by the families that send the national DPS). */
export function buildNationalDps(input: PrepareInput, verAplic: string): { id: string; xml: string } {
  return buildDps({
    project: input.project,
    invoice: input.invoice,
    serie: input.serie,
    nDPS: input.number,
    dhEmi: input.issuedAt,
    tpAmb: input.project.ambiente,
    verAplic,
  });
}

/**
 * The national cancellation event (e101101, pedRegEvento signed on infPedReg, pedRegEvento_v1.01.xsd), shared by the
 * families that cancel with it; `signature` carries a provider's signature profile (e.g. exclusive C14N).
 */
export function nationalCancellationMessage(
  verAplic: string,
  signature?: CancelMessage['signature'],
  who = 'a national',
): CancelMessage {
  return {
    build: ({ issued, reason }) =>
      buildCancellationRequest({
        chaveAcesso: requireAccessKey(issued.chave, who),
        tpAmb: issued.ambiente,
        author: { cnpj: issued.providerCnpj },
        motivo: reason,
        // Sefin refuses an event timed after its own clock (E0008-like): a minute of margin
        dhEvento: new Date(Date.now() - 60_000),
        verAplic,
      }),
    signedElement: 'infPedReg',
    ...(signature ? { signature } : {}),
    schema: 'pedRegEvento',
    schemaErrorCode: 'EVENT_SCHEMA_INVALID',
  };
}

/** A note cancelled or queried by its 50-digit access key (the job never does so without it). */
export function requireAccessKey(chave: string | null, who = 'a national'): string {
  if (!chave || !/^\d{50}$/.test(chave)) throw new Error(`${who} note without its access key`);
  return chave;
}

/**
 * The national environment (Sefin Nacional, SNNFSE): DPS 1.01 → signed on infDPS → DPS_v1.01.xsd → gzip+base64
 * JSON over mutual TLS → NFS-e, synchronous. Unknown outcomes are reconciled with GET /dps/{id} then
 * GET /nfse/{chave}; E0014 ("DPS already used") means a previous attempt went through. Cancellation is the
 * e101101 event (pedRegEvento, signed on infPedReg); E0840 ("an ending event is already linked") may mean it was
 * already cancelled, so the event query is asked before that refusal is believed.
 */
export const nationalFamily = defineFamily({
  id: 'national',
  layout: 'DPS 1.01 (Sefin Nacional, REST/JSON)',
  transport: 'rest-json',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: true,
    batch: false,
    mode: 'sync',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  check: checkDpsRequirements,
  declaration: {
    build: (input) => buildNationalDps(input, NATIONAL_APP_VERSION),
    signedElement: 'infDPS',
    schema: 'DPS',
    schemaErrorCode: 'DPS_SCHEMA_INVALID',
  },
  operations: {
    emit: {
      request: (document, context): OperationRequest => ({
        method: 'POST',
        url: `${base(context)}/nfse`,
        headers: JSON_HEADERS,
        body: JSON.stringify({ dpsXmlGZipB64: gzipBase64(withXmlDeclaration(document.xml)) }),
      }),
      parse: (answer, _document, context) => parseIssueResponse(answer, context.ambiente),
    },
    query: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument | null>> {
        const found = await send({ method: 'GET', url: `${base(context)}/dps/${document.id}`, headers: ACCEPT_JSON });
        if (found.kind !== 'response') return transportFailure(found);
        if (found.status === 404) return { kind: 'ok', value: null };
        if (found.status !== 200) return classifyFailure(found);
        const chave = keyOf(found.body);
        if (!chave) return { kind: 'transient', reason: 'GET /dps answered without a key' };
        const nfse = await send({ method: 'GET', url: `${base(context)}/nfse/${chave}`, headers: ACCEPT_JSON });
        const outcome = parseIssueResponse(nfse, context.ambiente);
        if (outcome.kind === 'rejected') return { kind: 'transient', reason: `GET /nfse: ${outcome.errorCode}` };
        return outcome;
      },
    },
    cancel: {
      message: nationalCancellationMessage(NATIONAL_APP_VERSION),
      operation: {
        request: ({ signed, input }, context): OperationRequest => ({
          method: 'POST',
          url: `${base(context)}/nfse/${requireAccessKey(input.issued.chave)}/eventos`,
          headers: JSON_HEADERS,
          body: JSON.stringify({ pedidoRegistroEventoXmlGZipB64: gzipBase64(withXmlDeclaration(signed)) }),
        }),
        parse(answer): Outcome<CancellationRecord> {
          if (answer.status !== 201 && answer.status !== 200) return classifyFailure(answer);
          const record = cancellationFromEventBody(answer.body);
          return record
            ? { kind: 'ok', value: record }
            : { kind: 'unknown', reason: 'cancellation answer without a readable event' };
        },
      },
    },
    queryCancellation: {
      // the first cancellation event (e101101, sequence 1) of the note, as registered by Sefin
      request: (issued, context): OperationRequest => ({
        method: 'GET',
        url: `${base(context)}/nfse/${requireAccessKey(issued.chave)}/eventos/${CANCELLATION_EVENT_TYPE}/1`,
        headers: ACCEPT_JSON,
      }),
      parse(answer): Outcome<CancellationRecord | null> {
        if (answer.status === 404) return { kind: 'ok', value: null };
        if (answer.status !== 200) return classifyFailure(answer);
        const record = cancellationFromEventBody(answer.body);
        return record
          ? { kind: 'ok', value: record }
          : { kind: 'transient', reason: 'GET eventos answered without a readable event' };
      },
    },
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E0840'],
});

function keyOf(text: string): string | null {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const chave = String(body.chaveAcesso ?? body.ChaveAcesso ?? '');
    return /^\d{50}$/.test(chave) ? chave : null;
  } catch {
    return null;
  }
}

/** The `evento` of an events answer (`eventoXmlGZipB64`) with its processing time, or null when unreadable. */
function cancellationFromEventBody(text: string): CancellationRecord | null {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const b64 = String(body.eventoXmlGZipB64 ?? body.EventoXmlGZipB64 ?? '');
    if (!b64) return null;
    const eventXml = gunzipBase64(b64);
    const parsed = parseXml(eventXml);
    const evento = parsed.ok ? findDescendant(parsed.root, 'evento') : null;
    if (!evento) return null;
    const dhProc = descendantText(evento, 'dhProc');
    const at = dhProc ? new Date(dhProc) : new Date();
    return { xml: eventXml, cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at };
  } catch {
    return null;
  }
}
