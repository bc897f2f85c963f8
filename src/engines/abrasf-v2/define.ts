import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { signXml } from '../../xml/sign.ts';
import { defineFamily, type FamilyDefinition, type Operation, type SendContext } from '../kit/family.ts';
import type { CancellationRecord, IssuedDocument, Outcome, PreparedDocument } from '../types.ts';
import { type AbrasfProviderConfig, isSupported, messageOf } from './config.ts';
import { perCityDataNamespace } from './city-namespace.ts';
import { codesOf } from './errors.ts';
import { keyOf, perCityLayouts, signRps200 } from './layouts.ts';
import {
  buildCancelamento,
  buildConsultarFaixa,
  buildConsultarLote,
  buildConsultarPorRps,
  buildLote,
  buildRps,
  cancellationCode,
  nsAttr,
  officialIds,
  rpsFacts,
  rpsSchemaView,
} from './messages.ts';
import {
  type AbrasfAnswer,
  abrasfRequest,
  child,
  compNfseOf,
  hasClass,
  outerXml,
  readAbrasfAnswer,
  rejectedBy,
  text,
} from './transport.ts';

/**
 * The generic ABRASF 2.0x family: `defineAbrasfProvider(config)` yields the FamilyDefinition of one provider
 * (id `abrasf-v2`, provider = the ACBr name), run by the engine kit like every other family.
 *
 * - declaration: the RPS (tcDeclaracaoPrestacaoServico) built from the normalised invoice, signed on
 *   InfDeclaracaoPrestacaoServico@Id (Signature inside Rps) and validated, inside GerarNfseEnvio, against the
 *   provider's XSD. The stored document is the signed RPS: every emission mode wraps the same bytes.
 * - emit: `emitSingle` (GerarNfse → the NFS-e), `emitSyncBatch` (RecepcionarLoteRpsSincrono → the NFS-e) or
 *   `emitAsyncBatch` (RecepcionarLoteRps → `pending` with the Protocolo). A lote holds the one RPS; its NumeroLote is
 *   the RPS number and it is signed on LoteRps@Id when sent (RSA-SHA1 PKCS#1 v1.5 is deterministic: a resend carries
 *   the same bytes).
 * - poll: ConsultarLoteRps by Protocolo: Situacao 1/2 or E178/E92 → still pending; 3 → rejected with the lote's
 *   messages; 4 → the NFS-e. A lote whose protocol is known is only polled, never resent (the kit's contract).
 * - query: ConsultarNfsePorRps (E4/E89/E212 → none). queryCancellation: ConsultarNfsePorFaixa on the note's number
 *   (the CompNfse's NfseCancelamento). cancel: CancelarNfseEnvio signed on InfPedidoCancelamento@Id.
 */

/** The engine's layout rules: what an ABRASF 2.0x RPS cannot carry is refused before a number is spent. */
export function checkAbrasf(
  project: ProjectFiscalProfile,
  invoice: NormalizedInvoice,
): { field: string; message: string }[] {
  const errors: { field: string; message: string }[] = [];
  if (!project.inscricaoMunicipal) {
    errors.push({ field: 'project.inscricaoMunicipal', message: 'required by ABRASF providers (Prestador)' });
  }
  if (!project.codigoMunicipio) errors.push({ field: 'project.codigoMunicipio', message: 'required' });
  const kind = invoice.tomador.id.kind;
  if (kind === 'nif' || kind === 'semNif' || invoice.tomador.estrangeiro) {
    errors.push({
      field: 'tomador',
      message: 'a taker abroad cannot be written in this ABRASF 2.0x layout yet (no NIF field, BACEN country codes)',
    });
  }
  if (invoice.servico.localPrestacao.kind === 'pais' || invoice.exportacao) {
    errors.push({
      field: 'servico.localPrestacao',
      message: 'services abroad (exports) are not sent to ABRASF providers yet',
    });
  }
  return errors;
}

const SIGNATURE_ALGORITHM = 'rsa-sha1';

/**
 * The note of a CompNfse: the ABRASF InfNfse, or the national-layout infNFSe some providers return inside
 * `CompNfse/Nfse` (Tinus: nNFSe, dhProc, the 50-digit key in infNFSe@Id after `NFS`).
 */
export function noteOf(comp: Element): {
  numero: string | null;
  chave: string | null;
  code: string | null;
  at: string | null;
} {
  const national = child(comp, 'Nfse/infNFSe');
  if (national) {
    const id = national.getAttribute('Id') ?? '';
    return {
      numero: text(national, 'nNFSe'),
      chave: id.replace(/^NFS/, '') || null,
      code: null,
      at: text(national, 'dhProc'),
    };
  }
  const inf = child(comp, 'Nfse/InfNfse');
  return {
    numero: text(inf, 'Numero'),
    chave: text(inf, 'ChaveAcesso'),
    code: text(inf, 'CodigoVerificacao'),
    at: text(inf, 'DataEmissao'),
  };
}

function issuedOf(comp: Element, ambiente: 1 | 2, protocol?: string): IssuedDocument {
  const note = noteOf(comp);
  const emitted = new Date(note.at ?? Date.now());
  return {
    chave: note.chave,
    numero: note.numero ?? '',
    verificationCode: note.code,
    ...(protocol ? { protocol } : {}),
    emittedAt: Number.isNaN(emitted.getTime()) ? new Date() : emitted,
    xml: outerXml(comp),
    ambiente,
  };
}

/** The CompNfse of our RPS in an answer (by RPS number and série; a single one otherwise). */
function ourNfse(root: Element, document: PreparedDocument): Element | null {
  const facts = rpsFacts(document.xml);
  const all = compNfseOf(root);
  const mine = all.find((c) => c.numero === facts.numero && (c.serie === null || c.serie === facts.serie));
  return mine?.comp ?? (all.length === 1 ? all[0]!.comp : null);
}

export function defineAbrasfProvider(config: AbrasfProviderConfig): FamilyDefinition {
  if (config.layouts) return perCityLayouts(config, defineAbrasfProvider);
  if (config.cityDataNamespace) return perCityDataNamespace(config, defineAbrasfProvider);
  /** the official 2.00 layout: the RPS is signed on its inner Rps@Id (layouts.ts), not by the kit */
  const layout200 = config.version === '2.00' && config.signature.rps && !config.hooks?.buildRps;
  const emission = messageOf(config, config.emission);
  const async = config.emission === 'emitAsyncBatch';
  /** `URI=""` signatures over the element holding the Signature (ISSNet) instead of `#Id` */
  const byDocument = config.signature.reference === 'document';
  const documentSignature = byDocument ? { signature: { reference: 'document' as const } } : {};

  /** the signed RPS in the emission message of the provider's mode */
  function emissionMessage(document: PreparedDocument, certificate: Parameters<typeof signXml>[1]['key']): string {
    if (config.emission === 'emitSingle') {
      return `<${emission.requestRoot}${nsAttr(config)}>${document.xml}</${emission.requestRoot}>`;
    }
    const lote = buildLote(config, emission.requestRoot, document.xml);
    if (!config.signature.lote) return lote.xml;
    return signXml(lote.xml, {
      ...(byDocument ? {} : { elementName: 'LoteRps' }),
      key: certificate,
      algorithm: SIGNATURE_ALGORITHM,
    });
  }

  /** a query message, signed (URI="", Signature last in its root) when the provider signs queries */
  function queryMessage(xml: string, context: SendContext): string {
    if (!config.signature.queries) return xml;
    const key = { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem };
    return signXml(xml, { key, algorithm: SIGNATURE_ALGORITHM });
  }

  const read = (answer: Parameters<typeof readAbrasfAnswer>[0], operation: Parameters<typeof messageOf>[1]) =>
    readAbrasfAnswer(
      answer,
      messageOf(config, operation).responseRoots,
      config.answerMessages,
      config.answerString,
      config.body.style === 'json',
    );
  const isOutcome = (value: Outcome<never> | AbrasfAnswer): value is Outcome<never> => 'kind' in value;

  const emit: Operation<PreparedDocument, IssuedDocument> = {
    request: (document, context) =>
      abrasfRequest(
        config,
        config.emission,
        emissionMessage(document, {
          privateKey: context.certificate.privateKey,
          certificatePem: context.certificate.certPem,
        }),
        context,
        'emit',
      ),
    parse(answer, document, context): Outcome<IssuedDocument> {
      const got = read(answer, config.emission);
      if (isOutcome(got)) return got;
      if (got.errors.length > 0) return rejectedBy(got.errors, got.httpStatus);
      if (async) {
        const protocol = text(got.root, config.pollBy ?? 'Protocolo');
        return protocol
          ? { kind: 'pending', protocol }
          : { kind: 'unknown', reason: 'lote accepted without a Protocolo' };
      }
      const comp = ourNfse(got.root, document);
      return comp
        ? { kind: 'ok', value: issuedOf(comp, context.ambiente) }
        : { kind: 'unknown', reason: 'answer without the NFS-e' };
    },
  };

  const queryBatchRoot = messageOf(config, 'queryBatch').requestRoot;
  const poll: Operation<{ protocol: string; document: PreparedDocument }, IssuedDocument> = {
    request: ({ protocol, document }, context) =>
      abrasfRequest(
        config,
        'queryBatch',
        config.signature.pollQuery
          ? queryMessage(buildConsultarLote(config, queryBatchRoot, document.xml, protocol), context)
          : buildConsultarLote(config, queryBatchRoot, document.xml, protocol),
        context,
        'poll',
      ),
    parse(answer, { protocol, document }, context): Outcome<IssuedDocument> {
      const got = read(answer, 'queryBatch');
      if (isOutcome(got))
        return got.kind === 'rejected' ? { kind: 'transient', reason: `poll: ${got.errorCode}` } : got;
      const situacao = text(got.root, 'Situacao');
      if (hasClass(config, got.errors, 'stillProcessing') || situacao === '1' || situacao === '2') {
        return { kind: 'pending', protocol };
      }
      if (hasClass(config, got.errors, 'protocolUnknown')) {
        return { kind: 'transient', reason: `protocol ${protocol} unknown to the provider (${got.errors[0]?.Codigo})` };
      }
      if (hasClass(config, got.errors, 'alreadyProcessed')) {
        return { kind: 'unknown', reason: `${got.errors[0]?.Codigo}: the RPS was already processed; reconciling` };
      }
      if (got.errors.length > 0) return rejectedBy(got.errors, got.httpStatus);
      const comp = ourNfse(got.root, document);
      if (situacao === '4' && comp) return { kind: 'ok', value: issuedOf(comp, context.ambiente, protocol) };
      return { kind: 'transient', reason: `lote ${protocol}: Situacao ${situacao ?? '(none)'} without the NFS-e` };
    },
  };

  const queryRoot = messageOf(config, 'queryByRps').requestRoot;
  const query: Operation<PreparedDocument, IssuedDocument | null> = {
    request: (document, context) =>
      abrasfRequest(
        config,
        'queryByRps',
        queryMessage(buildConsultarPorRps(config, queryRoot, document.xml), context),
        context,
        'query',
      ),
    parse(answer, document, context): Outcome<IssuedDocument | null> {
      const got = read(answer, 'queryByRps');
      if (isOutcome(got)) return got;
      const comp = ourNfse(got.root, document);
      if (comp) return { kind: 'ok', value: issuedOf(comp, context.ambiente) };
      if (hasClass(config, got.errors, 'stillProcessing'))
        return { kind: 'transient', reason: 'RPS not yet converted' };
      if (got.errors.length === 0 || hasClass(config, got.errors, 'notFound')) return { kind: 'ok', value: null };
      return rejectedBy(got.errors, got.httpStatus);
    },
  };

  const cancelRoot = messageOf(config, 'cancel').requestRoot;
  /** URI="": the Pedido is signed as a document of its own, then put in the cancellation message */
  const pedidoOf = (built: { id: string; xml: string }) => {
    if (!byDocument) return built;
    const pedido = /<Pedido>[\s\S]*<\/Pedido>/.exec(built.xml)?.[0] ?? built.xml;
    return { id: built.id, xml: pedido.replace('<Pedido>', `<Pedido${nsAttr(config)}>`) };
  };
  const cancelView = (signed: string) =>
    byDocument ? `<${cancelRoot}${nsAttr(config)}>${signed}</${cancelRoot}>` : signed;
  const cancelOperation: Operation<{ signed: string }, CancellationRecord> = {
    request: ({ signed }, context) => abrasfRequest(config, 'cancel', cancelView(signed), context, 'cancel'),
    parse(answer): Outcome<CancellationRecord> {
      const got = read(answer, 'cancel');
      if (isOutcome(got)) return got;
      if (got.errors.length > 0) return rejectedBy(got.errors, got.httpStatus);
      const paths = config.cancelAnswer ?? { ret: 'RetCancelamento', confirmacao: 'NfseCancelamento/Confirmacao' };
      const ret = child(got.root, paths.ret);
      if (!ret) return { kind: 'unknown', reason: `cancellation answer without ${paths.ret}` };
      const at = new Date(text(child(ret, paths.confirmacao), 'DataHora') ?? Date.now());
      return { kind: 'ok', value: { cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at, xml: outerXml(ret) } };
    },
  };

  const rangeRoot = messageOf(config, 'queryRange').requestRoot;
  const queryCancellation: FamilyDefinition['operations']['queryCancellation'] = {
    request: (issued, context) =>
      abrasfRequest(
        config,
        'queryRange',
        queryMessage(
          buildConsultarFaixa(
            config,
            rangeRoot,
            context.certificate.cnpj ?? context.certificate.cpf ?? '',
            issued.numero ?? '',
          ),
          context,
        ),
        context,
        'queryCancellation',
      ),
    parse(answer, issued): Outcome<CancellationRecord | null> {
      const got = read(answer, 'queryRange');
      if (isOutcome(got)) return got;
      const comp = compNfseOf(got.root).find((c) => noteOf(c.comp).numero === issued.numero);
      const cancelamento = comp ? child(comp.comp, 'NfseCancelamento') : null;
      if (cancelamento) {
        const at = new Date(text(child(cancelamento, 'Confirmacao'), 'DataHora') ?? Date.now());
        return {
          kind: 'ok',
          value: { cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at, xml: outerXml(cancelamento) },
        };
      }
      if (comp || got.errors.length === 0 || hasClass(config, got.errors, 'notFound'))
        return { kind: 'ok', value: null };
      return rejectedBy(got.errors, got.httpStatus);
    },
  };

  return defineFamily({
    id: 'abrasf-v2',
    provider: config.provider,
    layout: `ABRASF ${config.version} (${config.provider}: ${emission.soapOperation}, ${config.body.style === 'json' ? 'REST/JSON' : `SOAP ${config.soap.version}`})`,
    transport: config.body.style === 'json' ? 'rest-json' : config.soap.version === '1.1' ? 'soap11' : 'soap12',
    auth: config.auth,
    ...(config.presentsCertificate ? { presentsCertificate: true } : {}),
    capabilities: { ...config.capabilities, mode: async ? 'async' : config.capabilities.mode, reconcile: true },
    check: (project, invoice) => [...checkAbrasf(project, invoice), ...(config.check?.(project, invoice) ?? [])],
    declaration: {
      build: (input) => {
        const built = (config.hooks?.buildRps ?? buildRps)(config, input);
        if (!layout200) return built;
        return { id: built.id, xml: signRps200(built.xml, config.dataNamespace, keyOf(input.certificate)) };
      },
      signedElement: config.signature.rps && !layout200 ? 'InfDeclaracaoPrestacaoServico' : null,
      ...documentSignature,
      schema: config.schema,
      // the 2.00 XSD requires the lote's Signature, which is added only when sent: its RPS is validated in GerarNfseEnvio
      schemaView: (signed) =>
        config.hooks?.message && config.emission !== 'emitSingle' && !layout200
          ? config.hooks.message(config.emission, buildLote(config, emission.requestRoot, signed).xml, null)
          : officialIds(config, rpsSchemaView(config, signed)),
      schemaErrorCode: 'RPS_SCHEMA_INVALID',
    },
    operations: {
      emit,
      ...(async && isSupported(config, 'queryBatch') ? { poll } : {}),
      query,
      ...(isSupported(config, 'cancel')
        ? {
            cancel: {
              message: {
                build: ({ issued, reason }) =>
                  pedidoOf(
                    buildCancelamento(config, cancelRoot, {
                      numero: issued.numero ?? '',
                      cnpj: issued.providerCnpj,
                      inscricaoMunicipal: issued.inscricaoMunicipal ?? null,
                      codigoMunicipio: issued.codigoMunicipio ?? '',
                      code: cancellationCode(config, reason),
                      chave: issued.chave,
                      reason,
                    }),
                  ),
                signedElement: config.signature.cancel ? 'InfPedidoCancelamento' : null,
                ...documentSignature,
                ...(byDocument ? { schemaView: cancelView } : {}),
                schema: config.schema,
                ...(config.hooks?.message
                  ? { schemaView: (signed: string) => config.hooks!.message!('cancel', signed, null) }
                  : {}),
                ...(config.idAttribute === 'id'
                  ? { schemaView: (signed: string) => officialIds(config, cancelView(signed)) }
                  : {}),
                schemaErrorCode: 'CANCEL_SCHEMA_INVALID',
              },
              operation: cancelOperation,
            },
          }
        : {}),
      ...(isSupported(config, 'queryRange') ? { queryCancellation } : {}),
    },
    alreadyProcessedCodes: codesOf(config, 'alreadyProcessed'),
    alreadyCancelledCodes: codesOf(config, 'alreadyCancelled'),
  });
}
