import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { signXml } from '../../xml/sign.ts';
import { compNfseOf, outerXml, readAbrasfAnswer, rejectedBy, text } from '../abrasf-v2/transport.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import { soapEnvelope, soapParts } from '../kit/soap.ts';
import type { CancellationRecord, GovernmentError, IssuedDocument, Outcome, PreparedDocument } from '../types.ts';
import {
  buildCancelamento,
  buildLote,
  buildProtocolQuery,
  buildQueryByNumber,
  buildQueryByRps,
  cabecalho,
  cancellationCode,
  cnaeOf,
  loteFacts,
} from './messages.ts';

/**
 * GINFES (ACBr `Ginfes`; briefs/providers-own.md §3): ABRASF 1.0 "v3" over JAX-RPC rpc/literal SOAP 1.1
 * (ServiceGinfesImpl WSDL: operation element in `http://producao.ginfes.com.br` / `http://homologacao.ginfes.com.br`,
 * unqualified `arg0` = cabecalho and `arg1` = the message, both escaped strings; `soapAction=""`; the answer is an
 * escaped string in `<return>`), mutual TLS, ASYNCHRONOUS lotes.
 *
 * - emit: RecepcionarLoteRpsV3 (lote of one RPS signed on LoteRps@Id, Signature last in EnviarLoteRpsEnvio) →
 *   EnviarLoteRpsResposta{NumeroLote, DataRecebimento, Protocolo} → `pending`, or ListaMensagemRetorno → rejected
 *   (E10 "RPS já informado" → unknown, reconciled: `alreadyProcessedCodes`).
 * - poll: ConsultarSituacaoLoteRpsV3 (Situacao 1 não recebido / 2 não processado → pending; 3 processado com erro,
 *   4 processado com sucesso) then ConsultarLoteRpsV3 for the NFS-e (4) or the lote's messages (3 → rejected).
 * - query: ConsultarNfsePorRpsV3 (E4/E89/E91 → none; E92 "ainda não processado" → transient).
 * - queryCancellation: ConsultarNfseV3 by the note's number (CompNfse/NfseCancelamento).
 * - cancel: CancelarNfseV3, signed on InfPedidoCancelamento@Id; E79 "já está cancelada" → `alreadyCancelledCodes`.
 * - consultations are signed whole (`URI=""`, Signature last in the root: nfephp), RSA-SHA1 (brief §3.3).
 * - PDF: GINFES's report link (brief §3.6) → 302. The kit's pdfLink gets no municipality, so the city-independent
 *   host of the registry's Guarulhos link (`visualizar.ginfes.com.br`, `visualizar.ginfesh.com.br` in homologation)
 *   with the common `nfs_ver4` report is used, not each city's `{city}.ginfes.com.br` / `nfs_verN` variant.
 *
 * Unknowns (brief §3.7) and the conservative readings chosen (the sandbox accepts only these):
 * - the official manual and error table are not public: the codes are the generic ABRASF 1.0 table
 *   (ginfes/derived/erros_abrasf_v1_E1-E161.csv).
 * - cancellation: **V3 only** (CancelarNfseV3 with the v03 schema, ACBr's choice); the legacy v2 `CancelarNfse`
 *   (nfephp's default, "works in Guarulhos") is not sent. CodigoCancelamento in ACBr's 4-digit form (`0001`).
 * - the RTC fields of ACBr's 2025-11 tipos_v03: not sent (the 2020 schema is the one validated).
 * - CNAE: required (7 digits, project or invoice), as spec 4.8 and the routing's projectFields say.
 * - the RPS is not signed (ACBr); the lote is. Aliquota is a fraction with 4 decimals (tsAliquota decimal(5,4)).
 * - ItemListaServico as `11.01` (nfephp fixture); the `NaoFormatarItemServico` option of a few cities is not read.
 */
const SIGNATURE_ALGORITHM = 'rsa-sha1';
const ALREADY_PROCESSED = ['E10'];
const ALREADY_CANCELLED = ['E79'];
const NOT_FOUND = ['E4', 'E78', 'E89', 'E91'];
const STILL_PROCESSING = ['E92'];

type Rule = { field: string; message: string };

export function checkGinfes(project: ProjectFiscalProfile, invoice: NormalizedInvoice): Rule[] {
  const errors: Rule[] = [];
  if (!project.inscricaoMunicipal) {
    errors.push({ field: 'project.inscricaoMunicipal', message: 'required by GINFES (LoteRps/InscricaoMunicipal)' });
  }
  if (cnaeOf(project, invoice).length !== 7) {
    errors.push({ field: 'project.cnae', message: 'GINFES requires the main CNAE (7 digits) in every RPS' });
  }
  if (project.cnpj.replace(/\D/g, '').length !== 14) {
    errors.push({ field: 'project.cnpj', message: 'GINFES identifies the provider by CNPJ only' });
  }
  const kind = invoice.tomador.id.kind;
  if (kind === 'nif' || kind === 'semNif' || invoice.tomador.estrangeiro) {
    errors.push({ field: 'tomador', message: 'a taker abroad cannot be written in the GINFES v3 layout' });
  }
  if (invoice.servico.localPrestacao.kind === 'pais' || invoice.exportacao) {
    errors.push({ field: 'servico.localPrestacao', message: 'services abroad are not sent to GINFES' });
  }
  return errors;
}

/** The service namespace of the operation element (WSDL: the host of the environment). */
export const serviceNamespace = (ambiente: 1 | 2) =>
  ambiente === 1 ? 'http://producao.ginfes.com.br' : 'http://homologacao.ginfes.com.br';

function call(context: SendContext, operation: string, message: string): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: serviceNamespace(context.ambiente),
    operation,
    parts: soapParts.rpcArguments([cabecalho(), message]),
    soapAction: '',
  });
  return { method: 'POST', url: context.endpoints.url('emit', context.ambiente, context.municipality), headers, body };
}

/** A consultation signed whole (`URI=""`), as nfephp signs them. */
function signedQuery(context: SendContext, xml: string): string {
  return signXml(xml, {
    key: { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem },
    algorithm: SIGNATURE_ALGORITHM,
  });
}

const has = (errors: GovernmentError[], codes: string[]) => errors.some((e) => codes.includes(e.Codigo));
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
  const facts = loteFacts(document.xml);
  const all = compNfseOf(root);
  const mine = all.find((c) => c.numero === facts.numero && (c.serie === null || c.serie === facts.serie));
  return mine?.comp ?? (all.length === 1 ? all[0]!.comp : null);
}

export const ginfesFamily = defineFamily({
  id: 'ginfes',
  provider: 'Ginfes',
  layout: 'GINFES v3 (ABRASF 1.0, JAX-RPC rpc/literal, asynchronous lotes)',
  transport: 'soap11',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'async',
    pdf: 'portal',
    homologation: true,
    reconcile: true,
  },
  check: checkGinfes,
  declaration: {
    build: buildLote,
    signedElement: 'LoteRps',
    signature: { placement: 'root-end' },
    schema: 'ginfesV3',
    schemaErrorCode: 'GINFES_SCHEMA_INVALID',
  },
  operations: {
    emit: {
      request: (document, context) => call(context, 'RecepcionarLoteRpsV3', document.xml),
      parse(answer): Outcome<IssuedDocument> {
        const read = readAbrasfAnswer(answer, ['EnviarLoteRpsResposta']);
        if ('kind' in read) return read;
        if (read.errors.length > 0) return rejectedBy(read.errors, read.httpStatus);
        const protocol = text(read.root, 'Protocolo');
        if (!protocol) return { kind: 'unknown', reason: 'GINFES accepted the lote without a protocol' };
        return { kind: 'pending', protocol };
      },
    },
    poll: {
      async exchange({ protocol, document }, context, send): Promise<Outcome<IssuedDocument>> {
        const facts = loteFacts(document.xml);
        const situacao = await send(
          call(
            context,
            'ConsultarSituacaoLoteRpsV3',
            signedQuery(
              context,
              buildProtocolQuery(
                'servico_consultar_situacao_lote_rps_envio',
                facts.cnpj,
                facts.inscricaoMunicipal,
                protocol,
              ),
            ),
          ),
        );
        const state = readAbrasfAnswer(situacao, ['ConsultarSituacaoLoteRpsResposta']);
        if ('kind' in state) return state.kind === 'rejected' ? { kind: 'transient', reason: state.errorCode } : state;
        if (state.errors.length > 0) {
          return { kind: 'transient', reason: `ConsultarSituacaoLoteRps: ${state.errors[0]!.Codigo}` };
        }
        const value = text(state.root, 'Situacao');
        if (value === '1' || value === '2') return { kind: 'pending', protocol };
        if (value !== '3' && value !== '4') return { kind: 'unknown', reason: `lote situation ${value ?? 'absent'}` };
        const lote = await send(
          call(
            context,
            'ConsultarLoteRpsV3',
            signedQuery(
              context,
              buildProtocolQuery('servico_consultar_lote_rps_envio', facts.cnpj, facts.inscricaoMunicipal, protocol),
            ),
          ),
        );
        const read = readAbrasfAnswer(lote, ['ConsultarLoteRpsResposta']);
        if ('kind' in read) return read.kind === 'rejected' ? { kind: 'transient', reason: read.errorCode } : read;
        if (read.errors.length > 0) {
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
      request: (document, context) => {
        const facts = loteFacts(document.xml);
        return call(
          context,
          'ConsultarNfsePorRpsV3',
          signedQuery(context, buildQueryByRps(facts, facts.cnpj, facts.inscricaoMunicipal)),
        );
      },
      parse(answer, document, context): Outcome<IssuedDocument | null> {
        // ACBr: the server names this answer ConsultarNfseResposta at times (brief §3.4); both are read
        const read = readAbrasfAnswer(answer, ['ConsultarNfseRpsResposta', 'ConsultarNfseResposta']);
        if ('kind' in read) return read;
        if (has(read.errors, NOT_FOUND)) return { kind: 'ok', value: null };
        if (has(read.errors, STILL_PROCESSING)) return { kind: 'transient', reason: 'E92: RPS not processed yet' };
        if (read.errors.length > 0) return rejectedBy(read.errors, read.httpStatus);
        const comp = ourNfse(read.root, document);
        return { kind: 'ok', value: comp ? issuedOf(comp, context.ambiente) : null };
      },
    },
    cancel: {
      message: {
        build: ({ issued, reason }) =>
          buildCancelamento({
            numero: issued.numero ?? '',
            cnpj: issued.providerCnpj,
            inscricaoMunicipal: issued.inscricaoMunicipal ?? null,
            codigoMunicipio: issued.codigoMunicipio ?? '',
            code: cancellationCode(reason),
          }),
        signedElement: 'InfPedidoCancelamento',
        schema: 'ginfesV3',
        schemaErrorCode: 'GINFES_SCHEMA_INVALID',
      },
      operation: {
        request: ({ signed }, context) => call(context, 'CancelarNfseV3', signed),
        parse(answer): Outcome<CancellationRecord> {
          const read = readAbrasfAnswer(answer, ['CancelarNfseResposta']);
          if ('kind' in read) return read;
          if (read.errors.length > 0) return rejectedBy(read.errors, read.httpStatus);
          const confirmacao = read.root.getElementsByTagNameNS('*', 'InfConfirmacaoCancelamento')[0] ?? null;
          if (text(confirmacao, 'Sucesso') !== 'true') {
            return { kind: 'unknown', reason: 'GINFES answered the cancellation without a confirmation' };
          }
          const at = new Date(text(confirmacao, 'DataHora') ?? Date.now());
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
          'ConsultarNfseV3',
          signedQuery(context, buildQueryByNumber(issued.numero ?? '', context.certificate.cnpj ?? '')),
        ),
      parse(answer): Outcome<CancellationRecord | null> {
        const read = readAbrasfAnswer(answer, ['ConsultarNfseResposta']);
        if ('kind' in read) return read;
        if (has(read.errors, NOT_FOUND)) return { kind: 'ok', value: null };
        if (read.errors.length > 0) return rejectedBy(read.errors, read.httpStatus);
        const cancelamento = read.root.getElementsByTagNameNS('*', 'NfseCancelamento')[0];
        if (!cancelamento) return { kind: 'ok', value: null };
        const at = new Date(text(cancelamento, 'Confirmacao/InfConfirmacaoCancelamento/DataHora') ?? Date.now());
        return {
          kind: 'ok',
          value: { xml: outerXml(cancelamento), cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at },
        };
      },
    },
  },
  pdfLink: (issued) =>
    issued.numero && issued.verificationCode
      ? `https://visualizar.${issued.ambiente === 1 ? 'ginfes' : 'ginfesh'}.com.br/report/consultarNota?__report=nfs_ver4` +
        `&cdVerificacao=${encodeURIComponent(issued.verificationCode)}&numNota=${encodeURIComponent(issued.numero)}&cnpjPrestador=null`
      : null,
  alreadyProcessedCodes: ALREADY_PROCESSED,
  alreadyCancelledCodes: ALREADY_CANCELLED,
});
