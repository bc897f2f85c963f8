import type { Dispatcher } from 'undici';
import type { A1Certificate } from '../../certificates/pkcs12.ts';
import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import type { SchemaName } from '../../xml/xsd.ts';
import type { AuthKind, FamilyId, Transport } from '../routing/families.ts';
import type {
  CancellationRecord,
  EngineCapabilities,
  IssuedDocument,
  IssuedReference,
  Outcome,
  PreparedDocument,
  PrepareInput,
} from '../types.ts';
import type { ProjectCredentials } from './auth.ts';
import type { HttpAnswer, HttpResponse } from './http-client.ts';

/**
 * A family definition: everything that makes one engine family different, as data plus small hooks. The kit's
 * base (kit/engine.ts) runs the same sequence for every family and every operation:
 *
 *   check → build → sign → validate → send → parse
 *
 * - check: the family's layout rules on a normalised invoice (also run at the API edge, before a number is spent);
 * - build: the declaration (DPS, RPS, …) or the operation's message;
 * - sign: an XMLDSig enveloped signature on the element named by the signature profile (or none);
 * - validate: the official or provider XSD (a failure is a permanent rejection: nothing is sent);
 * - send: the operation's request (URL per environment, envelope, auth) over the shared HTTP client;
 * - parse: the provider's answer into an outcome (ok / rejected / transient / unknown / pending).
 *
 * A municipal family adds its transport idiom (kit/soap.ts), its auth kind (kit/auth.ts) and an operations table;
 * providers inside a family differ by the registry's parameters (routing/), never by copied code.
 */

/** Where a family's operations are sent, per environment (resolved from the registry or the settings). */
export interface Endpoints {
  /**
   * The base URL of an operation (`operation`: emit, query, cancel, …) for the environment and the municipality
   * (municipal providers have a URL per city); the operation appends its own path.
   */
  url(operation: OperationName, ambiente: 1 | 2, municipality: string | null): string;
}

/** An engine's URL is unknown for this municipality and environment (its registry entry has none): permanent. */
export class UnknownEndpointError extends Error {}

export type OperationName = 'emit' | 'poll' | 'query' | 'cancel' | 'queryCancellation' | 'pdf';

/** What an operation's request builder gets besides its own input. */
export interface SendContext {
  endpoints: Endpoints;
  ambiente: 1 | 2;
  /** the project's municipality (IBGE code): where per-city endpoints are looked up */
  municipality: string | null;
  /** the project's certificate (signing, and the TLS handshake when the family's auth is `mtls`) */
  certificate: A1Certificate;
  /** the project's engine credentials, for families whose auth is `body-credentials` (written into the message) */
  credentials?: ProjectCredentials;
}

/** One HTTP request of an operation, before auth is applied (kit/auth.ts adds headers or the TLS certificate). */
export interface OperationRequest {
  method: Dispatcher.HttpMethod;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** read the answer byte for byte (a PDF): its body is then a latin1 string, `Buffer.from(body, 'latin1')` */
  binary?: boolean;
  /** sent without the family's auth (no credential header, no TLS client certificate): a public link, or a message
   * that carries its credentials itself (IPM 1.00's form fields) */
  anonymous?: boolean;
}

/**
 * An operation: how its request is made from its input, and how the provider's answer is read. An operation that
 * needs more than one request (the national reconciliation asks for the DPS, then for its NFS-e) is written as an
 * exchange over `send`, which applies the family's auth like any other request.
 */
export type Operation<In, Out> =
  | {
      request(input: In, context: SendContext): OperationRequest;
      parse(answer: HttpResponse, input: In, context: SendContext): Outcome<Out>;
    }
  | {
      exchange(
        input: In,
        context: SendContext,
        send: (request: OperationRequest) => Promise<HttpAnswer>,
      ): Promise<Outcome<Out>>;
    };

/** An XML message that is built, signed and validated before it is sent (a declaration or an event). */
export interface SignedMessage<In> {
  build(input: In): { id: string; xml: string };
  /** the element that carries the `Id` the enveloped signature references; null when the layout is unsigned */
  signedElement: string | null;
  /** how the provider wants the signature made (default: inclusive C14N, after the signed element) */
  signature?: {
    canonicalization?: 'inclusive' | 'exclusive';
    placement?: 'after-element' | 'root-end';
    /**
     * `id` (default): the Reference is `#Id` of `signedElement`. `document`: the whole document (`URI=""`, the
     * Signature last in the root), for layouts whose signed element carries an empty Id (Digifred).
     */
    reference?: 'id' | 'document';
  };
  /** the XSD the signed message must satisfy before it is sent; null when the family ships none */
  schema: SchemaName | null;
  /**
   * The document the XSD validates, when the provider re-wraps an official layout (Betha: the national DPS in its
   * own namespace): maps the signed message back to the official one. Default: the signed message itself.
   */
  schemaView?(signedXml: string): string;
  /** the XSD of this particular message, when it depends on the message (a provider with a layout per city) */
  schemaFor?(signedXml: string): SchemaName | null;
  /** the code of a refusal by the schema (kept in the invoice's error) */
  schemaErrorCode: string;
}

export interface CancelInput {
  /** `codigoMunicipio` / `inscricaoMunicipal`: the project's, for layouts that identify the note by them (ABRASF) */
  issued: IssuedReference & {
    providerCnpj: string;
    codigoMunicipio?: string | null;
    inscricaoMunicipal?: string | null;
  };
  reason: string | null;
}

/** A cancellation message built from the issued note, signed and validated like the declaration. */
export interface CancelMessage extends SignedMessage<CancelInput & { certificate: A1Certificate }> {}

export interface FamilyDefinition {
  id: FamilyId;
  /** the ACBr provider this definition is for, within a municipal family (absent for the national environment) */
  provider?: string;
  /**
   * Whether this engine can issue in a municipality of its provider (a layout version it writes, a table it has, a
   * transport it speaks). Routing and the coverage lookup report the others as not implemented (422
   * ENGINE_NOT_AVAILABLE, never a guess). Default: every municipality of the provider.
   */
  serves?(municipality: string): boolean;
  /** the layout the family writes, e.g. "DPS 1.01 (Sefin Nacional)" */
  layout: string;
  transport: Transport;
  auth: AuthKind;
  capabilities: EngineCapabilities;
  /** The TLS client certificate is presented besides an HTTP credential (`auth` basic/bearer: ABase, Modernização). */
  presentsCertificate?: boolean;
  /**
   * Operations the provider's cities send to Sefin Nacional instead of the provider (ACBr `ServicosPadraoNacional`):
   * live, their URL is Sefin's; in sandbox mode the provider's sandbox answers them as the national view.
   */
  nationalOperations?: readonly OperationName[];
  /** The family's layout rules on a normalised invoice (field paths of the request in each entry). */
  check(project: ProjectFiscalProfile, invoice: NormalizedInvoice): { field: string; message: string }[];
  declaration: SignedMessage<PrepareInput>;
  operations: {
    emit: Operation<PreparedDocument, IssuedDocument>;
    /** asynchronous families: the result of a protocol (`pending` while it is processed) */
    poll?: Operation<{ protocol: string; document: PreparedDocument }, IssuedDocument>;
    /** the government's copy of a declaration, by its id: `ok(null)` when it has none (reconciliation) */
    query: Operation<PreparedDocument, IssuedDocument | null>;
    cancel?: {
      message: CancelMessage;
      operation: Operation<{ signed: string; input: CancelInput }, CancellationRecord>;
    };
    /** the cancellation the government holds for a note: `ok(null)` when none */
    queryCancellation?: Operation<IssuedReference, CancellationRecord | null>;
    /** spec 4.4: the provider's PDF of an issued note, downloaded from its link (GET /invoices/{id}/pdf → 200) */
    pdf?: Operation<IssuedReference, Buffer>;
  };
  /**
   * Engines whose PDF is the provider's (`capabilities.pdf = 'portal'`): the public link of an issued note, to
   * which GET /invoices/{id}/pdf redirects (spec 4.4); null when the link cannot be made for this note.
   */
  pdfLink?(issued: IssuedReference & { providerCnpj: string; inscricaoMunicipal: string | null }): string | null;
  /**
   * Government codes that mean "this was already processed" (national E0014, ABRASF E10, São Paulo 217): such a
   * refusal is an unknown outcome, reconciled with the query before anything else happens.
   */
  alreadyProcessedCodes: readonly string[];
  /**
   * Government codes of a cancellation refusal that may mean "already cancelled" (national E0840): the
   * cancellation query is asked before the refusal is believed.
   */
  alreadyCancelledCodes: readonly string[];
}

/** Typed identity for definitions (keeps literal types and checks the shape where the definition is written). */
export function defineFamily(definition: FamilyDefinition): FamilyDefinition {
  return definition;
}

export type { CancellationRecord };
