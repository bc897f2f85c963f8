import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { signXml } from '../../xml/sign.ts';
import { compNfseOf, outerXml, readAbrasfAnswer, rejectedBy, text } from '../abrasf-v2/transport.ts';
import { defineFamily, type FamilyDefinition, type OperationRequest, type SendContext } from '../kit/family.ts';
import { soapEnvelope } from '../kit/soap.ts';
import type { CancellationRecord, GovernmentError, IssuedDocument, Outcome, PreparedDocument } from '../types.ts';
import { ABRASF_V1_MESSAGES, type AbrasfV1Operation, type AbrasfV1ProviderConfig } from './config.ts';
import {
  buildCancelamento,
  buildLote,
  buildProtocolQuery,
  buildQueryByNumber,
  buildQueryByRps,
  buildRps,
  cancellationCode,
  rpsFacts,
} from './messages.ts';

/**
 * The generic ABRASF 1.0x family: `defineAbrasfV1Provider(config)` yields the FamilyDefinition of one provider (id
 * `abrasf-v1`, provider = the ACBr name), run by the engine kit like every other family.
 *
 * - declaration: the RPS (tcRps) from the normalised invoice, signed on InfRps when the provider signs it, validated
 *   inside its lote against the provider's XSD. The stored document is the signed RPS.
 * - emit: RecepcionarLoteRps with a lote of that one RPS (LoteRps signed when configured) → EnviarLoteRpsResposta
 *   {NumeroLote, DataRecebimento, Protocolo} → `pending`; ListaMensagemRetorno → rejected (E10 "RPS já informado" →
 *   unknown, reconciled by the query: `alreadyProcessedCodes`). A lote whose protocol is known is only polled.
 * - poll: ConsultarSituacaoLoteRps (Situacao 1 não recebido / 2 não processado → pending; 3 processado com erro;
 *   4 processado com sucesso), then ConsultarLoteRps for the NFS-e (4) or the lote's messages (3 → rejected).
 * - query: ConsultarNfsePorRps (E4/E78/E89/E91 → none; E92 "ainda não processado" → transient).
 * - codes: the ABRASF 1.00 table (reference ginfes/derived/erros_abrasf_v1_E1-E161.csv); E79 "já cancelada".
 * - cancel / queryCancellation: per provider (Salvador offers neither by web service).
 */
const SIGNATURE_ALGORITHM = 'rsa-sha1';
const ALREADY_PROCESSED = ['E10'];
const ALREADY_CANCELLED = ['E79'];
const NOT_FOUND = ['E4', 'E78', 'E89', 'E91'];
const STILL_PROCESSING = ['E92'];
const has = (errors: GovernmentError[], codes: string[]) => errors.some((e) => codes.includes(e.Codigo));

/** The engine's layout rules: what an ABRASF 1.00 RPS cannot carry is refused before a number is spent. */
export function checkAbrasfV1(project: ProjectFiscalProfile, invoice: NormalizedInvoice) {
  const errors: { field: string; message: string }[] = [];
  if (!project.inscricaoMunicipal) {
    errors.push({ field: 'project.inscricaoMunicipal', message: 'required by ABRASF 1.0 providers (Prestador)' });
  }
  if (project.cnpj.replace(/\D/g, '').length !== 14) {
    errors.push({ field: 'project.cnpj', message: 'ABRASF 1.0 identifies the provider by CNPJ only' });
  }
  const kind = invoice.tomador.id.kind;
  if (kind === 'nif' || kind === 'semNif' || invoice.tomador.estrangeiro) {
    errors.push({ field: 'tomador', message: 'a taker abroad cannot be written in the ABRASF 1.0 layout' });
  }
  if (invoice.servico.localPrestacao.kind === 'pais' || invoice.exportacao) {
    errors.push({ field: 'servico.localPrestacao', message: 'services abroad are not sent to ABRASF 1.0 providers' });
  }
  return errors;
}

function issuedOf(comp: Element, ambiente: 1 | 2, protocol?: string): IssuedDocument {
  const inf = comp.getElementsByTagNameNS('*', 'InfNfse')[0] ?? null;
  const emitted = new Date(text(inf, 'DataEmissao') ?? Date.now());
  return {
    chave: null,
    numero: text(inf, 'Numero') ?? '',
    verificationCode: text(inf, 'CodigoVerificacao'),
    ...(protocol ? { protocol } : {}),
    emittedAt: Number.isNaN(emitted.getTime()) ? new Date() : emitted,
    xml: outerXml(comp),
    ambiente,
  };
}

function ourNfse(root: Element, document: PreparedDocument): Element | null {
  const facts = rpsFacts(document.xml);
  const all = compNfseOf(root);
  const mine = all.find((c) => c.numero === facts.numero && (c.serie === null || c.serie === facts.serie));
  return mine?.comp ?? (all.length === 1 ? all[0]!.comp : null);
}

export function defineAbrasfV1Provider(config: AbrasfV1ProviderConfig): FamilyDefinition {
  /** the answer roots of an operation (the official one, or the provider's names) */
  const roots = (operation: AbrasfV1Operation) =>
    config.answerRoots?.[operation] ?? [ABRASF_V1_MESSAGES[operation].response];
  const cancels = config.capabilities.cancel && !!config.soap.operations.cancelar;

  function call(context: SendContext, operation: AbrasfV1Operation, xml: string): OperationRequest {
    const message = config.soap.xmlDeclaration ? `<?xml version="1.0" encoding="UTF-8"?>${xml}` : xml;
    const soap = config.soap.operations[operation];
    if (!soap) throw new Error(`${config.provider} does not offer ${operation}`);
    const qualified = config.soap.qualifiedParameters;
    const header = config.soap.header;
    const string = (name: string, value: string) => `<${name}>${escapeXmlText(value)}</${name}>`;
    const parts = config.soap.requestWrapper
      ? [
          {
            name: `${soap.element}Request`,
            value: (header ? string(header.parameter, header.cabecalho) : '') + string(soap.parameter, message),
            encoding: 'xml' as const,
            qualified: false,
          },
        ]
      : [
          ...(header
            ? [{ name: header.parameter, value: header.cabecalho, encoding: 'escaped' as const, qualified }]
            : []),
          { name: soap.parameter, value: message, encoding: config.soap.encoding, qualified },
        ];
    const { body, headers } = soapEnvelope({
      version: '1.1',
      namespace: config.soap.namespace,
      operation: soap.element,
      parts,
      soapAction: soap.soapAction,
    });
    const base = context.endpoints.url('emit', context.ambiente, context.municipality);
    return { method: 'POST', url: config.operationUrl?.(base, operation) ?? base, headers, body };
  }

  /** a consultation, signed whole (URI="") when the provider signs them */
  function query(context: SendContext, xml: string): string {
    if (!config.signature.queries) return xml;
    const key = { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem };
    return signXml(xml, { key, algorithm: SIGNATURE_ALGORITHM });
  }

  return defineFamily({
    id: 'abrasf-v1',
    provider: config.provider,
    layout: `ABRASF 1.00 (${config.provider}: RecepcionarLoteRps, SOAP 1.1, asynchronous lotes)`,
    transport: 'soap11',
    auth: config.auth,
    capabilities: { ...config.capabilities, mode: 'async', reconcile: true },
    check: (project, invoice) => [...checkAbrasfV1(project, invoice), ...(config.check?.(project, invoice) ?? [])],
    declaration: {
      build: (input) => buildRps(config, input),
      signedElement: config.signature.rps ? 'InfRps' : null,
      schema: config.schema,
      schemaView: (signed) => buildLote(config, signed),
      schemaErrorCode: 'RPS_SCHEMA_INVALID',
    },
    operations: {
      emit: {
        request(document, context) {
          const lote = buildLote(config, document.xml);
          const key = { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem };
          const signed = config.signature.lote
            ? signXml(lote, { elementName: 'LoteRps', key, algorithm: SIGNATURE_ALGORITHM })
            : lote;
          return call(context, 'recepcionar', signed);
        },
        parse(answer): Outcome<IssuedDocument> {
          const read = readAbrasfAnswer(answer, roots('recepcionar'));
          if ('kind' in read) return read;
          if (read.errors.length > 0) return rejectedBy(read.errors, read.httpStatus);
          const protocol = text(read.root, 'Protocolo');
          if (!protocol) return { kind: 'unknown', reason: `${config.provider} accepted the lote without a protocol` };
          return { kind: 'pending', protocol };
        },
      },
      poll: {
        async exchange({ protocol, document }, context, send): Promise<Outcome<IssuedDocument>> {
          const facts = rpsFacts(document.xml);
          const situacao = await send(
            call(
              context,
              'consultarSituacao',
              query(context, buildProtocolQuery(config, 'ConsultarSituacaoLoteRpsEnvio', facts, protocol)),
            ),
          );
          const state = readAbrasfAnswer(situacao, roots('consultarSituacao'));
          if ('kind' in state)
            return state.kind === 'rejected' ? { kind: 'transient', reason: state.errorCode } : state;
          if (state.errors.length > 0) {
            return { kind: 'transient', reason: `ConsultarSituacaoLoteRps: ${state.errors[0]!.Codigo}` };
          }
          const value = text(state.root, 'Situacao');
          if (value === '1' || value === '2') return { kind: 'pending', protocol };
          if (value !== '3' && value !== '4') return { kind: 'unknown', reason: `lote situation ${value ?? 'absent'}` };
          const lote = await send(
            call(
              context,
              'consultarLote',
              query(context, buildProtocolQuery(config, 'ConsultarLoteRpsEnvio', facts, protocol)),
            ),
          );
          const read = readAbrasfAnswer(lote, roots('consultarLote'));
          if ('kind' in read) return read.kind === 'rejected' ? { kind: 'transient', reason: read.errorCode } : read;
          if (read.errors.length > 0) {
            if (has(read.errors, STILL_PROCESSING)) return { kind: 'pending', protocol };
            if (has(read.errors, ALREADY_PROCESSED)) {
              return { kind: 'unknown', reason: 'E10: the RPS was already processed; reconciling' };
            }
            return rejectedBy(read.errors);
          }
          const comp = ourNfse(read.root, document);
          if (!comp) return { kind: 'unknown', reason: `lote ${protocol} processed without our NFS-e` };
          return { kind: 'ok', value: issuedOf(comp, context.ambiente, protocol) };
        },
      },
      query: {
        request: (document, context) =>
          call(context, 'consultarPorRps', query(context, buildQueryByRps(config, rpsFacts(document.xml)))),
        parse(answer, document, context): Outcome<IssuedDocument | null> {
          const read = readAbrasfAnswer(answer, roots('consultarPorRps'));
          if ('kind' in read) return read;
          if (has(read.errors, NOT_FOUND)) return { kind: 'ok', value: null };
          if (has(read.errors, STILL_PROCESSING)) return { kind: 'transient', reason: 'E92: RPS not processed yet' };
          if (read.errors.length > 0) return rejectedBy(read.errors, read.httpStatus);
          const comp = ourNfse(read.root, document);
          return { kind: 'ok', value: comp ? issuedOf(comp, context.ambiente) : null };
        },
      },
      ...(cancels
        ? {
            cancel: {
              message: {
                build: ({ issued, reason }) =>
                  buildCancelamento(config, {
                    numero: issued.numero ?? '',
                    cnpj: issued.providerCnpj,
                    inscricaoMunicipal: issued.inscricaoMunicipal ?? null,
                    codigoMunicipio: issued.codigoMunicipio ?? '',
                    code: cancellationCode(reason),
                    motivo: reason,
                  }),
                signedElement: config.signature.cancel ? 'InfPedidoCancelamento' : null,
                schema: config.schema,
                schemaErrorCode: 'CANCEL_SCHEMA_INVALID',
              },
              operation: {
                request: ({ signed }, context) => call(context, 'cancelar', signed),
                parse(answer): Outcome<CancellationRecord> {
                  const read = readAbrasfAnswer(answer, roots('cancelar'));
                  if ('kind' in read) return read;
                  if (read.errors.length > 0) return rejectedBy(read.errors, read.httpStatus);
                  const confirmacao = read.root.getElementsByTagNameNS('*', 'Confirmacao')[0] ?? null;
                  if (!confirmacao) return { kind: 'unknown', reason: 'cancellation answered without a Confirmacao' };
                  const at = new Date(
                    text(confirmacao, 'InfConfirmacaoCancelamento/DataHora') ??
                      text(confirmacao, 'DataHoraCancelamento') ??
                      text(confirmacao, 'DataHora') ??
                      Date.now(),
                  );
                  return {
                    kind: 'ok',
                    value: { xml: outerXml(read.root), cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at },
                  };
                },
              },
            },
            queryCancellation: {
              request: (issued, context) =>
                call(
                  context,
                  'consultarNfse',
                  query(
                    context,
                    buildQueryByNumber(
                      config,
                      context.certificate.cnpj ?? '',
                      // the Faixa query's Prestador requires the inscrição (Publica); the others go without it
                      config.nfseQuery === 'faixa' ? (issued.inscricaoMunicipal ?? null) : null,
                      issued.numero ?? '',
                    ),
                  ),
                ),
              parse(answer): Outcome<CancellationRecord | null> {
                const read = readAbrasfAnswer(answer, roots('consultarNfse'));
                if ('kind' in read) return read;
                if (has(read.errors, NOT_FOUND)) return { kind: 'ok', value: null };
                if (read.errors.length > 0) return rejectedBy(read.errors, read.httpStatus);
                const cancelamento = read.root.getElementsByTagNameNS('*', 'NfseCancelamento')[0];
                if (!cancelamento) return { kind: 'ok', value: null };
                const at = new Date(
                  text(cancelamento, 'Confirmacao/InfConfirmacaoCancelamento/DataHora') ??
                    text(cancelamento, 'Confirmacao/DataHoraCancelamento') ??
                    text(cancelamento, 'Confirmacao/DataHora') ??
                    Date.now(),
                );
                return {
                  kind: 'ok',
                  value: { xml: outerXml(cancelamento), cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at },
                };
              },
            },
          }
        : {}),
    },
    ...(config.pdfLink ? { pdfLink: config.pdfLink } : {}),
    alreadyProcessedCodes: ALREADY_PROCESSED,
    alreadyCancelledCodes: ALREADY_CANCELLED,
  });
}
