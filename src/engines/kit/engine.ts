import { type SignatureAlgorithm, signXml } from '../../xml/sign.ts';
import { validateXml } from '../../xml/xsd.ts';
import {
  type CancellationRecord,
  type Connection,
  type EngineFamily,
  hasGovernmentCode,
  type IssuedDocument,
  type IssuedReference,
  type Outcome,
  type PdfTarget,
  type PreparedDocument,
  type PrepareInput,
} from '../types.ts';
import { authorize, MissingCredentialError } from './auth.ts';
import {
  type Endpoints,
  type FamilyDefinition,
  type Operation,
  type OperationName,
  type OperationRequest,
  type SendContext,
  type SignedMessage,
  UnknownEndpointError,
} from './family.ts';
import type { GovernmentHttpClient, HttpAnswer } from './http-client.ts';

export interface EngineDependencies {
  http: GovernmentHttpClient;
  endpoints: Endpoints;
  signatureAlgorithm: SignatureAlgorithm;
  /** validate every signed message against its XSD before sending (always on outside benchmarks) */
  validateBeforeSend: boolean;
}

/** The certificate of a PDF download: none (the provider's link is public; its request is `anonymous`). */
const NO_CERTIFICATE = null as unknown as Connection['certificate'];

/** A transport failure as an outcome: nothing sent is transient; a request that may have arrived is unknown. */
export function transportFailure(answer: Exclude<HttpAnswer, { kind: 'response' }>): Outcome<never> {
  return answer.kind === 'not-sent'
    ? { kind: 'transient', reason: answer.reason }
    : { kind: 'unknown', reason: answer.reason };
}

/** A query never changes anything: any refusal of it is worth asking again later, never a final answer. */
function queryRefusalIsTransient<T>(outcome: Outcome<T>, what: string): Outcome<T> {
  return outcome.kind === 'rejected' ? { kind: 'transient', reason: `${what}: ${outcome.errorCode}` } : outcome;
}

/**
 * Builds the engine of a family from its definition: the one implementation of check → build → sign → validate →
 * send → parse that every family shares. A family never writes these steps itself; it declares them.
 */
export function createEngine(definition: FamilyDefinition, deps: EngineDependencies): EngineFamily {
  /** build → sign → validate: a message the schema refuses is a permanent rejection and is never sent */
  function signAndValidate<In>(message: SignedMessage<In>, input: In, certificate: Connection['certificate']) {
    const { id, xml } = message.build(input);
    const { reference, ...signing } = message.signature ?? {};
    const signed = message.signedElement
      ? signXml(xml, {
          ...(reference === 'document' ? {} : { elementName: message.signedElement }),
          key: { privateKey: certificate.privateKey, certificatePem: certificate.certPem },
          algorithm: deps.signatureAlgorithm,
          ...signing,
        })
      : xml;
    const schema = message.schemaFor?.(signed) ?? message.schema;
    if (deps.validateBeforeSend && schema) {
      const result = validateXml(schema, message.schemaView ? message.schemaView(signed) : signed);
      if (!result.ok) {
        return {
          kind: 'rejected' as const,
          errorCode: message.schemaErrorCode,
          errorMessage: `The message built for ${definition.id} does not validate against its schema (${schema})`,
          errors: result.errors.slice(0, 20).map((e) => ({ Codigo: 'XSD', Descricao: e })),
        };
      }
    }
    return { kind: 'ok' as const, value: { id, xml: signed } };
  }

  /** send → parse, with the family's auth applied and transport failures classified */
  async function run<In, Out>(
    operation: Operation<In, Out>,
    input: In,
    connection: Connection,
    name?: OperationName,
  ): Promise<Outcome<Out>> {
    // an operation sent to Sefin Nacional (`nationalOperations`) goes with the certificate only, never the
    // provider's credentials
    const national = name !== undefined && (definition.nationalOperations ?? []).includes(name);
    // spec 4.8.3: a project's endpoint override takes absolute precedence (municipal engines only)
    const override = definition.id === 'national' ? null : (connection.endpointOverride ?? null);
    const context: SendContext = {
      endpoints: override ? { url: () => override } : deps.endpoints,
      ambiente: connection.ambiente,
      municipality: connection.municipality ?? null,
      certificate: connection.certificate,
      ...(national ? {} : { credentials: connection.credentials ?? {} }),
    };
    const credentials = connection.credentials ?? {};
    const send = (request: OperationRequest): Promise<HttpAnswer> => {
      // a public link (`anonymous`) goes without credentials and without the TLS client certificate
      const kind = request.anonymous ? 'signature' : national ? 'mtls' : definition.auth;
      const authorized = authorize(request, kind, connection.certificate, credentials, {
        presentCertificate: definition.presentsCertificate === true && !request.anonymous,
      });
      return deps.http.send(authorized.certificate, authorized.method, authorized.url, {
        headers: authorized.headers,
        ...(authorized.body !== undefined ? { body: authorized.body } : {}),
        ...(request.binary ? { binary: true } : {}),
      });
    };
    try {
      if ('exchange' in operation) return await operation.exchange(input, context, send);
      const answer = await send(operation.request(input, context));
      if (answer.kind !== 'response') return transportFailure(answer);
      return operation.parse(answer, input, context);
    } catch (err) {
      if (err instanceof MissingCredentialError) {
        return { kind: 'rejected', errorCode: 'ENGINE_CREDENTIALS_MISSING', errorMessage: err.message, errors: [] };
      }
      if (err instanceof UnknownEndpointError) {
        return { kind: 'rejected', errorCode: 'ENGINE_ENDPOINT_UNKNOWN', errorMessage: err.message, errors: [] };
      }
      throw err;
    }
  }

  const { operations } = definition;
  const pdfOperation = operations.pdf;
  return {
    id: definition.id,
    capabilities: definition.capabilities,
    alreadyCancelledCodes: definition.alreadyCancelledCodes,
    queriesCancellation: definition.operations.queryCancellation !== undefined,

    checkRequest: (project, invoice) => definition.check(project, invoice),

    pdfLink: (issued) => definition.pdfLink?.(issued) ?? null,

    ...(pdfOperation
      ? {
          // a public link: no certificate and no credentials are needed (the request is `anonymous`)
          fetchPdf: (issued: IssuedReference, target: PdfTarget) =>
            run(pdfOperation, issued, { ...target, certificate: NO_CERTIFICATE }, 'pdf'),
        }
      : {}),

    prepare(input: PrepareInput): Outcome<PreparedDocument> {
      const unmet = definition.check(input.project, input.invoice);
      if (unmet.length > 0) {
        return {
          kind: 'rejected',
          errorCode: 'VALIDATION_FAILED',
          errorMessage: unmet.map((e) => `${e.field}: ${e.message}`).join('; '),
          errors: unmet.map((e) => ({ Codigo: 'VALIDATION_FAILED', Descricao: e.message, Complemento: e.field })),
        };
      }
      return signAndValidate(definition.declaration, input, input.certificate);
    },

    async issue(document, connection): Promise<Outcome<IssuedDocument>> {
      const outcome = await run(operations.emit, document, connection);
      // "already processed": a previous attempt went through; the job reconciles before anything else
      if (hasGovernmentCode(outcome, definition.alreadyProcessedCodes)) {
        const code = outcome.kind === 'rejected' ? outcome.errorCode : '';
        return { kind: 'unknown', reason: `${code}: the declaration was already processed; reconciling` };
      }
      return outcome;
    },

    async poll(protocol, document, connection): Promise<Outcome<IssuedDocument>> {
      if (!operations.poll) return { kind: 'transient', reason: `${definition.id} has no protocol query` };
      return run(operations.poll, { protocol, document }, connection);
    },

    async reconcile(document, connection): Promise<Outcome<IssuedDocument | null>> {
      return queryRefusalIsTransient(await run(operations.query, document, connection, 'query'), 'query');
    },

    async cancel(issued, reason, connection): Promise<Outcome<CancellationRecord>> {
      const cancel = operations.cancel;
      if (!cancel || !definition.capabilities.cancel) {
        return {
          kind: 'rejected',
          errorCode: 'CANCEL_NOT_SUPPORTED',
          errorMessage: `${definition.id} does not cancel notes through its web service`,
          errors: [],
        };
      }
      const input = { issued, reason };
      const signed = signAndValidate(
        cancel.message,
        { ...input, certificate: connection.certificate },
        connection.certificate,
      );
      if (signed.kind !== 'ok') return signed;
      return run(cancel.operation, { signed: signed.value.xml, input }, connection);
    },

    async reconcileCancellation(issued, connection): Promise<Outcome<CancellationRecord | null>> {
      if (!operations.queryCancellation) return { kind: 'ok', value: null };
      return queryRefusalIsTransient(
        await run(operations.queryCancellation, issued, connection, 'queryCancellation'),
        'cancellation query',
      );
    },
  };
}
