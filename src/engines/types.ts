import type { A1Certificate } from '../certificates/pkcs12.ts';
import type { NormalizedInvoice } from '../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../domain/project-profile.ts';

/**
 * Expected failures are values. Every government interaction ends in one of these kinds:
 * - `ok`: done, with its result;
 * - `rejected`: permanent (schema or business rule): never retried, the government's codes are kept;
 * - `transient`: the request certainly had no effect (refused connection, timeout before sending, 5xx
 *   answered without processing, 429): retried with backoff;
 * - `unknown`: the request may have been processed (timeout or connection lost after sending): the next
 *   attempt reconciles with the government (query by DPS/RPS) before anything is resent.
 */
export type GovernmentError = { Codigo: string; Descricao: string; Complemento?: string | null };

export type Outcome<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'rejected'; errorCode: string; errorMessage: string; errors: GovernmentError[]; httpStatus?: number }
  | { kind: 'transient'; reason: string; httpStatus?: number; retryAfterMs?: number }
  | { kind: 'unknown'; reason: string };

export interface IssuedDocument {
  /** access key (national: 50 digits) or the municipal verification code */
  chave: string;
  numero: string;
  emittedAt: Date;
  /** the document as the government returned it */
  xml: string;
  ambiente: 1 | 2;
}

export interface CancellationRecord {
  cancelledAt: Date;
  /** the event / cancellation receipt XML as returned */
  xml: string;
}

/** What a government call needs: the project's certificate (mTLS and signing) and where to call. */
export interface Connection {
  certificate: A1Certificate;
  ambiente: 1 | 2;
}

export interface PrepareInput {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  serie: string;
  number: number;
  issuedAt: Date;
  certificate: A1Certificate;
}

/** A built, signed and validated document, stored before sending so every retry sends the same bytes. */
export interface PreparedDocument {
  /** the government's identifier of the declaration (national: DPS Id) used to reconcile */
  id: string;
  xml: string;
}

export interface EngineCapabilities {
  cancel: boolean;
  /** how the PDF is produced: rendered locally from the XML, fetched from a portal, or not available */
  pdf: 'local' | 'portal' | 'none';
  /** the government can be asked whether a declaration was processed (needed for unknown outcomes) */
  reconcile: boolean;
}

/** One engine family (national, ABRASF provider, São Paulo, …) behind the same operations. */
export interface EngineFamily {
  readonly id: string;
  readonly capabilities: EngineCapabilities;
  /**
   * The engine's own requirements on a valid invoice (layout rules the builder cannot satisfy by itself),
   * checked at the API edge so a request the government would refuse is a 400 before a number is spent.
   */
  checkRequest(project: ProjectFiscalProfile, invoice: NormalizedInvoice): { field: string; message: string }[];
  /** build → sign → validate; a validation failure is a permanent rejection (never sent) */
  prepare(input: PrepareInput): Outcome<PreparedDocument>;
  /** send → parse */
  issue(document: PreparedDocument, connection: Connection): Promise<Outcome<IssuedDocument>>;
  /** Was this declaration already processed? `ok(null)` when the government has no document for it. */
  reconcile(document: PreparedDocument, connection: Connection): Promise<Outcome<IssuedDocument | null>>;
  cancel(
    issued: { chave: string; ambiente: 1 | 2; providerCnpj: string },
    reason: string | null,
    connection: Connection,
  ): Promise<Outcome<CancellationRecord>>;
  /**
   * Was this note already cancelled by its emitter (a previous attempt whose answer was lost, or another
   * channel)? `ok(null)` when the government has no cancellation event for it.
   */
  reconcileCancellation(
    issued: { chave: string; ambiente: 1 | 2 },
    connection: Connection,
  ): Promise<Outcome<CancellationRecord | null>>;
}
