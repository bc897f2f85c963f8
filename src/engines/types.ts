import type { A1Certificate } from '../certificates/pkcs12.ts';
import type { NormalizedInvoice } from '../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../domain/project-profile.ts';
import type { ProjectCredentials } from './kit/auth.ts';
import type { Capabilities, FamilyId } from './routing/families.ts';

/**
 * Expected failures are values. Every government interaction ends in one of these kinds:
 * - `ok`: done, with its result;
 * - `rejected`: permanent (schema or business rule): never retried, the government's codes are kept;
 * - `transient`: the request certainly had no effect (refused connection, timeout before sending, 5xx
 *   answered without processing, 429): retried with backoff;
 * - `unknown`: the request may have been processed (timeout or connection lost after sending): the next
 *   attempt reconciles with the government (query by DPS/RPS) before anything is resent;
 * - `pending`: accepted for processing with a protocol (asynchronous lots): the protocol is recorded at once and
 *   polled (`invoice.poll`); a declaration whose protocol is known is never sent again.
 */
export type GovernmentError = { Codigo: string; Descricao: string; Complemento?: string | null };

export type Outcome<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'rejected'; errorCode: string; errorMessage: string; errors: GovernmentError[]; httpStatus?: number }
  | { kind: 'transient'; reason: string; httpStatus?: number; retryAfterMs?: number }
  | { kind: 'unknown'; reason: string }
  | { kind: 'pending'; protocol: string; retryAfterMs?: number };

/** An outcome that is not `ok`: what a job records or retries. */
export type Failure = Exclude<Outcome<never>, { kind: 'ok' }>;

/** Whether a refusal carries one of these government codes (as its code or among its errors). */
export function hasGovernmentCode(outcome: Outcome<unknown>, codes: readonly string[]): boolean {
  return (
    outcome.kind === 'rejected' &&
    (codes.includes(outcome.errorCode) || outcome.errors.some((e) => codes.includes(e.Codigo)))
  );
}

/** One line for logs and error messages. */
export function describeFailure(outcome: Failure): string {
  switch (outcome.kind) {
    case 'rejected':
      return `${outcome.errorCode} ${outcome.errorMessage}`;
    case 'pending':
      return `pending under protocol ${outcome.protocol}`;
    default:
      return outcome.reason;
  }
}

export interface IssuedDocument {
  /** the national access key (50 digits); null for a municipal note, which is known by number and code */
  chave: string | null;
  numero: string;
  /** the municipal verification code (ABRASF CodigoVerificacao, São Paulo CodigoVerificacao); null when none */
  verificationCode?: string | null;
  /** the provider's protocol of the lot that carried the note, when it was asynchronous */
  protocol?: string | null;
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

/**
 * What a government call needs: the project's certificate (mTLS and signing), the environment, and the project's
 * engine credentials (Basic, Bearer, a header token: spec 2.1 `basicAuthUsuario`/`basicAuthSenha`, `cscToken`),
 * opened from their sealed columns by the job that sends and never stored elsewhere.
 */
export interface Connection {
  certificate: A1Certificate;
  ambiente: 1 | 2;
  credentials?: ProjectCredentials;
  /** the project's municipality (IBGE code): municipal engines send to that city's URL */
  municipality?: string | null;
  /** spec 4.8.3: the project's own base URL for its municipal engine, before the registry's and the sandbox's */
  endpointOverride?: string | null;
}

/** Where a note's public PDF link is asked: no certificate, no credentials (spec 4.4). */
export type PdfTarget = Omit<Connection, 'certificate' | 'credentials'>;

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

/** The family's capabilities (routing/families.ts) and whether an unknown outcome can be reconciled. */
export interface EngineCapabilities extends Capabilities {
  /** the government can be asked whether a declaration was processed (needed for unknown outcomes) */
  reconcile: boolean;
}

/** The issued note as the jobs know it: what a cancellation or a query needs. */
export interface IssuedReference {
  chave: string | null;
  numero: string | null;
  verificationCode: string | null;
  ambiente: 1 | 2;
  /** the provider's municipal registration (São Paulo's CCM keys a note: ChaveNFe), when the job knows it */
  inscricaoMunicipal?: string | null;
}

/**
 * One engine family (national, ABRASF provider, São Paulo, …) behind the same operations: what the jobs call.
 * Built by the engine kit (kit/engine.ts) from a family definition; never written by hand.
 */
export interface EngineFamily {
  readonly id: FamilyId;
  readonly capabilities: EngineCapabilities;
  /** Government codes of a cancellation refusal that may mean "already cancelled": the job asks before believing. */
  readonly alreadyCancelledCodes: readonly string[];
  /**
   * Whether the government can be asked for a note's cancellation. Without it (Tinus), an "already cancelled" refusal
   * is the government's own statement that the note is cancelled, and is taken as such.
   */
  readonly queriesCancellation: boolean;
  /**
   * The engine's own requirements on a valid invoice (layout rules the builder cannot satisfy by itself),
   * checked at the API edge so a request the government would refuse is a 400 before a number is spent.
   */
  checkRequest(project: ProjectFiscalProfile, invoice: NormalizedInvoice): { field: string; message: string }[];
  /** build → sign → validate; a validation failure is a permanent rejection (never sent) */
  prepare(input: PrepareInput): Outcome<PreparedDocument>;
  /** send → parse; `pending` when the provider answered with a protocol to poll */
  issue(document: PreparedDocument, connection: Connection): Promise<Outcome<IssuedDocument>>;
  /** The provider's public link of an issued note's PDF (`capabilities.pdf = 'portal'`); null when none. */
  pdfLink(issued: IssuedReference & { providerCnpj: string; inscricaoMunicipal: string | null }): string | null;
  /**
   * spec 4.4: the provider's PDF of an issued note, downloaded from its link (engines whose `operations.pdf` exists):
   * GET /invoices/{id}/pdf answers it 200 inline instead of redirecting to `pdfLink`.
   */
  fetchPdf?(issued: IssuedReference, target: PdfTarget): Promise<Outcome<Buffer>>;
  /** Asks for the result of a protocol: `pending` while the provider is still processing it. */
  poll(protocol: string, document: PreparedDocument, connection: Connection): Promise<Outcome<IssuedDocument>>;
  /** Was this declaration already processed? `ok(null)` when the government has no document for it. */
  reconcile(document: PreparedDocument, connection: Connection): Promise<Outcome<IssuedDocument | null>>;
  cancel(
    issued: IssuedReference & {
      providerCnpj: string;
      codigoMunicipio?: string | null;
      inscricaoMunicipal?: string | null;
    },
    reason: string | null,
    connection: Connection,
  ): Promise<Outcome<CancellationRecord>>;
  /**
   * Was this note already cancelled by its emitter (a previous attempt whose answer was lost, or another
   * channel)? `ok(null)` when the government has no cancellation event for it.
   */
  reconcileCancellation(issued: IssuedReference, connection: Connection): Promise<Outcome<CancellationRecord | null>>;
}
