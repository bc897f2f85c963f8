import type { SignatureAlgorithm } from '../../xml/sign.ts';
import { signXml } from '../../xml/sign.ts';
import { gunzipBase64, gzipBase64 } from '../../xml/transport-encoding.ts';
import { validateXml } from '../../xml/xsd.ts';
import type { MtlsClientPool } from '../transport/mtls.ts';
import type {
  CancellationRecord,
  Connection,
  EngineFamily,
  IssuedDocument,
  Outcome,
  PreparedDocument,
  PrepareInput,
} from '../types.ts';
import { buildDps, checkDpsRequirements } from './dps-builder.ts';
import { buildCancellationRequest, CANCELLATION_EVENT_TYPE } from './event-builder.ts';
import { classifyFailure, parseIssueResponse, transportFailure } from './responses.ts';

export const NATIONAL_APP_VERSION = 'nfse-service-1.0';

export interface NationalEngineOptions {
  clients: MtlsClientPool;
  /** base URL of Sefin Nacional per ambiente, e.g. https://sefin.nfse.gov.br/SefinNacional */
  baseUrl: (ambiente: 1 | 2) => string;
  signatureAlgorithm: SignatureAlgorithm;
  validateBeforeSend: boolean;
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/**
 * The national environment (Sefin Nacional, SNNFSE): DPS 1.01 → signed → XSD-validated → gzip+base64 JSON
 * over mutual TLS → NFS-e. Unknown outcomes are reconciled with GET /dps/{id} then GET /nfse/{chave}.
 */
export function createNationalEngine(options: NationalEngineOptions): EngineFamily {
  const { clients } = options;
  return {
    id: 'national',
    capabilities: { cancel: true, pdf: 'local', reconcile: true },

    checkRequest(project, invoice) {
      return checkDpsRequirements(project, invoice);
    },

    prepare(input: PrepareInput): Outcome<PreparedDocument> {
      const unmet = checkDpsRequirements(input.project, input.invoice);
      if (unmet.length > 0) {
        return {
          kind: 'rejected',
          errorCode: 'VALIDATION_FAILED',
          errorMessage: unmet.map((e) => `${e.field}: ${e.message}`).join('; '),
          errors: unmet.map((e) => ({ Codigo: 'VALIDATION_FAILED', Descricao: e.message, Complemento: e.field })),
        };
      }
      const { xml, id } = buildDps({
        project: input.project,
        invoice: input.invoice,
        serie: input.serie,
        nDPS: input.number,
        dhEmi: input.issuedAt,
        tpAmb: input.project.ambiente,
        verAplic: NATIONAL_APP_VERSION,
      });
      const signed = signXml(xml, {
        elementName: 'infDPS',
        key: { privateKey: input.certificate.privateKey, certificatePem: input.certificate.certPem },
        algorithm: options.signatureAlgorithm,
      });
      if (options.validateBeforeSend) {
        const result = validateXml('DPS', signed);
        if (!result.ok) {
          return {
            kind: 'rejected',
            errorCode: 'DPS_SCHEMA_INVALID',
            errorMessage: 'The DPS built from this invoice does not validate against the official schema DPS_v1.01.xsd',
            errors: result.errors.slice(0, 20).map((e) => ({ Codigo: 'XSD', Descricao: e })),
          };
        }
      }
      return { kind: 'ok', value: { id, xml: signed } };
    },

    async issue(document: PreparedDocument, connection: Connection): Promise<Outcome<IssuedDocument>> {
      const res = await clients.send(connection.certificate, 'POST', `${options.baseUrl(connection.ambiente)}/nfse`, {
        headers: JSON_HEADERS,
        body: JSON.stringify({ dpsXmlGZipB64: gzipBase64(`<?xml version="1.0" encoding="UTF-8"?>${document.xml}`) }),
      });
      const outcome = parseIssueResponse(res, connection.ambiente);
      // E0014: this DPS (series + number) was already used: a previous attempt went through
      if (outcome.kind === 'rejected' && outcome.errors.some((e) => e.Codigo === 'E0014')) {
        return { kind: 'unknown', reason: 'E0014: DPS already used; reconciling' };
      }
      return outcome;
    },

    async reconcile(document: PreparedDocument, connection: Connection): Promise<Outcome<IssuedDocument | null>> {
      const base = options.baseUrl(connection.ambiente);
      const found = await clients.send(connection.certificate, 'GET', `${base}/dps/${document.id}`, {
        headers: { accept: 'application/json' },
      });
      if (found.kind !== 'response') return transportFailure(found);
      if (found.status === 404) return { kind: 'ok', value: null };
      if (found.status !== 200) return classifyFailure(found);
      let chave: string | null = null;
      try {
        const body = JSON.parse(found.body) as Record<string, unknown>;
        chave = String(body.chaveAcesso ?? body.ChaveAcesso ?? '');
      } catch {
        chave = null;
      }
      if (!chave || !/^\d{50}$/.test(chave)) return { kind: 'transient', reason: 'GET /dps answered without a key' };
      const nfse = await clients.send(connection.certificate, 'GET', `${base}/nfse/${chave}`, {
        headers: { accept: 'application/json' },
      });
      const outcome = parseIssueResponse(nfse, connection.ambiente);
      if (outcome.kind === 'rejected') return { kind: 'transient', reason: `GET /nfse: ${outcome.errorCode}` };
      return outcome;
    },

    async cancel(issued, reason, connection): Promise<Outcome<CancellationRecord>> {
      const { xml } = buildCancellationRequest({
        chaveAcesso: issued.chave,
        tpAmb: issued.ambiente,
        author: { cnpj: issued.providerCnpj },
        motivo: reason,
        dhEvento: new Date(Date.now() - 60_000),
        verAplic: NATIONAL_APP_VERSION,
      });
      const signed = signXml(xml, {
        elementName: 'infPedReg',
        key: { privateKey: connection.certificate.privateKey, certificatePem: connection.certificate.certPem },
        algorithm: options.signatureAlgorithm,
      });
      if (options.validateBeforeSend) {
        const result = validateXml('pedRegEvento', signed);
        if (!result.ok) {
          return {
            kind: 'rejected',
            errorCode: 'EVENT_SCHEMA_INVALID',
            errorMessage: 'The cancellation request does not validate against pedRegEvento_v1.01.xsd',
            errors: result.errors.slice(0, 20).map((e) => ({ Codigo: 'XSD', Descricao: e })),
          };
        }
      }
      const res = await clients.send(
        connection.certificate,
        'POST',
        `${options.baseUrl(connection.ambiente)}/nfse/${issued.chave}/eventos`,
        {
          headers: JSON_HEADERS,
          body: JSON.stringify({
            pedidoRegistroEventoXmlGZipB64: gzipBase64(`<?xml version="1.0" encoding="UTF-8"?>${signed}`),
          }),
        },
      );
      if (res.kind !== 'response') return transportFailure(res);
      if (res.status !== 201 && res.status !== 200) return classifyFailure(res);
      const record = cancellationFromEventBody(res.body);
      return record
        ? { kind: 'ok', value: record }
        : { kind: 'unknown', reason: 'cancellation answer without a readable event' };
    },

    async reconcileCancellation(issued, connection): Promise<Outcome<CancellationRecord | null>> {
      // the first cancellation event (e101101, sequence 1) of the note, as registered by Sefin
      const res = await clients.send(
        connection.certificate,
        'GET',
        `${options.baseUrl(connection.ambiente)}/nfse/${issued.chave}/eventos/${CANCELLATION_EVENT_TYPE}/1`,
        { headers: { accept: 'application/json' } },
      );
      if (res.kind !== 'response') return transportFailure(res);
      if (res.status === 404) return { kind: 'ok', value: null };
      if (res.status !== 200) {
        const failure = classifyFailure(res);
        // a query never changes anything: any refusal of it is worth asking again later
        return failure.kind === 'rejected'
          ? { kind: 'transient', reason: `GET eventos: ${failure.errorCode}` }
          : failure;
      }
      const record = cancellationFromEventBody(res.body);
      return record
        ? { kind: 'ok', value: record }
        : { kind: 'transient', reason: 'GET eventos answered without a readable event' };
    },
  };
}

/** The `evento` of an events answer (`eventoXmlGZipB64`) with its processing time, or null when unreadable. */
function cancellationFromEventBody(text: string): CancellationRecord | null {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const b64 = String(body.eventoXmlGZipB64 ?? body.EventoXmlGZipB64 ?? '');
    if (!b64) return null;
    const eventXml = gunzipBase64(b64);
    if (!/<evento[\s>]/.test(eventXml)) return null;
    const dhProc = /<dhProc>([^<]+)<\/dhProc>/.exec(eventXml)?.[1];
    const at = dhProc ? new Date(dhProc) : new Date();
    return { xml: eventXml, cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at };
  } catch {
    return null;
  }
}
