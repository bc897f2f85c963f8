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
import { buildDps } from './dps-builder.ts';
import { buildCancellationRequest } from './event-builder.ts';
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

    prepare(input: PrepareInput): Outcome<PreparedDocument> {
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
      try {
        const body = JSON.parse(res.body) as Record<string, unknown>;
        const b64 = String(body.eventoXmlGZipB64 ?? body.EventoXmlGZipB64 ?? '');
        const eventXml = gunzipBase64(b64);
        const dhProc = /<dhProc>([^<]+)<\/dhProc>/.exec(eventXml)?.[1];
        return { kind: 'ok', value: { xml: eventXml, cancelledAt: dhProc ? new Date(dhProc) : new Date() } };
      } catch {
        return { kind: 'unknown', reason: 'cancellation answer without a readable event' };
      }
    },
  };
}
