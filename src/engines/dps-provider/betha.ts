import { escapeXmlText } from '../../xml/escape.ts';
import { descendantText, findDescendant, parseXml } from '../../xml/read.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type Endpoints, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpAnswer } from '../kit/http-client.ts';
import { readSoapAnswer, type SoapPart, soapEnvelope } from '../kit/soap.ts';
import { buildDps, checkDpsRequirements } from '../national/dps-builder.ts';
import { buildCancellationRequest, NFSE_NAMESPACE } from '../national/event-builder.ts';
import { NATIONAL_APP_VERSION, nationalFamily } from '../national/family.ts';
import { parseIssueResponse } from '../national/responses.ts';
import type { CancellationRecord, GovernmentError, IssuedDocument, Outcome } from '../types.ts';

/**
 * Betha (ACBr `Betha` API Própria; briefs/providers-own.md §4): the national DPS 1.01 re-namespaced into
 * `http://www.betha.com.br/e-nota-dps`, SOAP 1.1 over mutual TLS (no user/password), ASYNCHRONOUS.
 *
 * - emit: `RecepcionarDpsEnvio{DPS}` → `RecepcionarDpsResposta{protocolo, dhRecebimento, status, listaMensagens}`:
 *   codes `L…` are alerts, any other code is an error (rejected); no error → `pending` with the protocol.
 * - poll: `ConsultarStatusDpsEnvio{tpAmb, codigoIbge, cpfCnpjPrestador, protocolo, tipoIntegracao EMISSAO}` →
 *   `ConsultarStatusDps[Emissao]Resposta{statusProcessamento, emissao{chaveAcesso, numeroNotaFiscal, …}}`;
 *   "Processado com sucesso" → the NFS-e is read by its key from the national view (below); "ERRO" → rejected;
 *   anything else → still pending.
 * - query / queryCancellation: the national read API (GET /dps/{id} → GET /nfse/{chave}; GET /nfse/{chave}/eventos),
 *   as ACBr's `ServicosPadraoNacional` does for Betha cities (`nationalOperations`: live, Sefin Nacional's URL).
 * - cancel: `RecepcionarEventoCancelamentoEnvio{evento{infEvento id="EVT…"{…, pedRegEvento}}}`, also asynchronous:
 *   an exchange that sends once, then asks the status (tipoIntegracao CANCELAMENTO) a few times; still waiting →
 *   `unknown`, so the job reconciles with queryCancellation before anything is sent again.
 *
 * Unknowns (brief §4.1) and the conservative readings chosen (the sandbox accepts only these):
 * - `versao` of the Betha DPS: ACBr writes "1.0", third parties "1.00"/"1.01". We send **"1.01"**: it is the layout
 *   we build, third parties' real emissions used it, and it is the only value that also satisfies the official
 *   TVerNFSe of DPS_v1.01.xsd once mapped back (there is no Betha XSD).
 * - the DPS is signed **in the Betha namespace** on `infDPS` with a **lowercase `id`** (an uppercase `Id` was refused:
 *   "O atributo 'Id' não pode aparecer no elemento 'infDPS'"); the XSD check maps it back to the national layout.
 * - SOAPAction: ACBr's `http://www.betha.com.br/e-nota-dps-service/<operation>`.
 * - cancellation: the national pedRegEvento (national element order, lowercase `id`, Betha namespace) **signed on
 *   infPedReg**, inside ACBr's unsigned `evento/infEvento` wrapper (verAplic, ambGer 1, nSeqEvento 001, dhProc, nDFe 0).
 *   ACBr signs infEvento instead; we keep the signed pedRegEvento, which is the event the national environment
 *   registers. The pedRegEvento is validated against the official pedRegEvento XSD once mapped back.
 * - a resend of a DPS Betha already holds: refused with the national E0014 (→ unknown, reconciled).
 * - NT 003 v1.2 IBSCBS (ACBr changelog): not applied; the DPS is the national 1.01 layout as built.
 */
export const BETHA_NAMESPACE = 'http://www.betha.com.br/e-nota-dps';
const SOAP_ACTION_BASE = 'http://www.betha.com.br/e-nota-dps-service/';
export const BETHA_DPS_VERSION = '1.01';
/** How many times, and how far apart, the cancellation exchange asks for its protocol's status. */
const CANCEL_STATUS_ATTEMPTS = 5;
const CANCEL_STATUS_INTERVAL_MS = 500;

/** The national DPS (canonical text of the builder) in Betha's namespace, with the lowercase `id`. */
export function toBethaDps(nationalDps: string): string {
  return nationalDps
    .replace(
      `<DPS xmlns="${NFSE_NAMESPACE}" versao="1.01">`,
      `<DPS xmlns="${BETHA_NAMESPACE}" versao="${BETHA_DPS_VERSION}">`,
    )
    .replace('<infDPS Id="', '<infDPS id="');
}

/** A Betha message mapped back to the national layout (namespace and `Id`), for the official XSD. */
export function toNationalView(bethaXml: string): string {
  return bethaXml
    .replaceAll(`xmlns="${BETHA_NAMESPACE}"`, `xmlns="${NFSE_NAMESPACE}"`)
    .replace(/<(infDPS|infPedReg|infEvento) id="/g, '<$1 Id="');
}

function soapRequest(context: SendContext, operation: string, parts: SoapPart[]): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: BETHA_NAMESPACE,
    operation,
    parts,
    soapAction: `${SOAP_ACTION_BASE}${operation.replace(/Envio$/, '')}`,
  });
  return { method: 'POST', url: context.endpoints.url('emit', context.ambiente, context.municipality), headers, body };
}

const element = (name: string, value: string): SoapPart => ({ name, value, encoding: 'escaped', qualified: true });
const bare = (xml: string): SoapPart => ({ name: 'DPS', value: xml, encoding: 'xml', qualified: false, bare: true });

/** The status request of a protocol (tipoIntegracao EMISSAO or CANCELAMENTO). */
function statusRequest(
  context: SendContext,
  protocol: string,
  prestador: string,
  tipo: 'EMISSAO' | 'CANCELAMENTO',
  municipality: string,
): OperationRequest {
  return soapRequest(context, 'ConsultarStatusDpsEnvio', [
    element('tpAmb', String(context.ambiente)),
    element('codigoIbge', municipality),
    element('cpfCnpjPrestador', prestador),
    element('protocolo', protocol),
    element('tipoIntegracao', tipo),
  ]);
}

interface BethaAnswer {
  root: Element;
  errors: GovernmentError[];
}

/** The Betha answer element (`ns2:…Resposta`) of a SOAP response, or the outcome that replaces it. */
function readAnswer(answer: HttpAnswer, names: string[]): Outcome<never> | BethaAnswer {
  if (answer.kind !== 'response') return transportFailure(answer);
  if (answer.status === 429 || answer.status >= 500) {
    return { kind: 'transient', reason: `HTTP ${answer.status}`, httpStatus: answer.status };
  }
  const soap = readSoapAnswer(answer.body);
  if (soap.kind === 'fault') {
    const error = { Codigo: soap.code, Descricao: soap.reason };
    return {
      kind: 'rejected',
      errorCode: soap.code,
      errorMessage: soap.reason,
      errors: [error],
      httpStatus: answer.status,
    };
  }
  if (soap.kind === 'unreadable') return { kind: 'unknown', reason: `unreadable Betha answer: ${soap.reason}` };
  const parsed = parseXml(answer.body);
  const root = parsed.ok ? names.map((n) => findDescendant(parsed.root, n)).find((e) => e) : null;
  if (!root) return { kind: 'unknown', reason: `Betha answer without ${names.join(' or ')}` };
  const errors: GovernmentError[] = [];
  for (const node of Array.from(root.getElementsByTagNameNS('*', 'mensagem'))) {
    const codigo = descendantText(node, 'codigo');
    if (!codigo || codigo.startsWith('L')) continue; // L… are alerts
    const texto = Array.from(node.childNodes).find((c) => (c as Element).localName === 'mensagem');
    errors.push({
      Codigo: codigo,
      Descricao: texto?.textContent?.trim() || codigo,
      Complemento: descendantText(node, 'correcao'),
    });
  }
  return { root, errors };
}

function rejectedBy(errors: GovernmentError[], httpStatus?: number): Outcome<never> {
  const first = errors[0]!;
  return {
    kind: 'rejected',
    errorCode: first.Codigo,
    errorMessage: first.Descricao,
    errors,
    ...(httpStatus ? { httpStatus } : {}),
  };
}

const SUCCESS = 'processado com sucesso';
const isError = (status: string | null) => (status ?? '').trim().toUpperCase() === 'ERRO';
const isDone = (status: string | null) => (status ?? '').trim().toLowerCase() === SUCCESS;

/** The national read API's base, where `nationalOperations` go (Sefin live, the Betha sandbox's national view). */
function nationalContext(context: SendContext): SendContext {
  const endpoints: Endpoints = {
    url: (_op, ambiente, municipality) => context.endpoints.url('query', ambiente, municipality),
  };
  return { ...context, endpoints };
}

const nationalOperations = nationalFamily.operations;

export const bethaFamily = defineFamily({
  id: 'dps-provider',
  provider: 'Betha',
  layout: 'DPS 1.01 in the Betha namespace (SOAP 1.1, asynchronous)',
  transport: 'soap11',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'async',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  nationalOperations: ['query', 'queryCancellation'],
  check: checkDpsRequirements,
  declaration: {
    build: (input) => {
      const built = buildDps({
        project: input.project,
        invoice: input.invoice,
        serie: input.serie,
        nDPS: input.number,
        dhEmi: input.issuedAt,
        tpAmb: input.project.ambiente,
        verAplic: NATIONAL_APP_VERSION,
      });
      return { id: built.id, xml: toBethaDps(built.xml) };
    },
    signedElement: 'infDPS',
    schema: 'DPS',
    schemaView: toNationalView,
    schemaErrorCode: 'DPS_SCHEMA_INVALID',
  },
  operations: {
    emit: {
      request: (document, context) => soapRequest(context, 'RecepcionarDpsEnvio', [bare(document.xml)]),
      parse(answer): Outcome<IssuedDocument> {
        const read = readAnswer(answer, ['RecepcionarDpsResposta']);
        if ('kind' in read) return read;
        if (read.errors.length > 0)
          return rejectedBy(read.errors, answer.kind === 'response' ? answer.status : undefined);
        const protocol = descendantText(read.root, 'protocolo');
        if (!protocol) return { kind: 'unknown', reason: 'Betha accepted the DPS without a protocol' };
        return { kind: 'pending', protocol };
      },
    },
    poll: {
      async exchange({ protocol, document }, context, send): Promise<Outcome<IssuedDocument>> {
        const parsedDps = parseXml(document.xml);
        const inf = parsedDps.ok ? findDescendant(parsedDps.root, 'infDPS') : null;
        const prest = inf ? findDescendant(inf, 'prest') : null;
        const prestador = descendantText(prest, 'CNPJ') ?? descendantText(prest, 'CPF') ?? '';
        const municipality = context.municipality ?? descendantText(inf, 'cLocEmi') ?? '';
        const answer = await send(statusRequest(context, protocol, prestador, 'EMISSAO', municipality));
        const read = readAnswer(answer, ['ConsultarStatusDpsEmissaoResposta', 'ConsultarStatusDpsResposta']);
        if ('kind' in read) return read.kind === 'rejected' ? { kind: 'transient', reason: read.errorCode } : read;
        const status = descendantText(read.root, 'statusProcessamento');
        if (isError(status)) {
          return rejectedBy(
            read.errors.length > 0 ? read.errors : [{ Codigo: 'ERRO', Descricao: 'ERRO sem mensagem' }],
          );
        }
        if (!isDone(status)) return { kind: 'pending', protocol };
        const emissao = findDescendant(read.root, 'emissao');
        const chave = descendantText(emissao, 'chaveAcesso');
        if (!chave) return { kind: 'transient', reason: 'Betha processed the DPS without an access key yet' };
        // the NFS-e itself, by its key, from the national view (ACBr ConsultarNFSePorChave)
        const nfse = await send({
          method: 'GET',
          url: `${nationalContext(context).endpoints.url('query', context.ambiente, context.municipality)}/nfse/${chave}`,
          headers: { accept: 'application/json' },
        });
        const issued = parseIssueResponse(nfse, context.ambiente);
        if (issued.kind !== 'ok')
          return issued.kind === 'rejected' ? { kind: 'transient', reason: `GET /nfse: ${issued.errorCode}` } : issued;
        return {
          kind: 'ok',
          value: {
            ...issued.value,
            numero: descendantText(emissao, 'numeroNotaFiscal') ?? issued.value.numero,
            protocol,
          },
        };
      },
    },
    query: {
      exchange(document, context, send) {
        const query = nationalOperations.query;
        if (!('exchange' in query)) throw new Error('the national query is an exchange');
        return query.exchange(document, nationalContext(context), send);
      },
    },
    cancel: {
      message: {
        build: ({ issued, reason }) => {
          const pedido = buildCancellationRequest({
            chaveAcesso: issued.chave ?? '',
            tpAmb: issued.ambiente,
            author: { cnpj: issued.providerCnpj },
            motivo: reason,
            dhEvento: new Date(Date.now() - 60_000),
            verAplic: NATIONAL_APP_VERSION,
          });
          const dhEvento = /<dhEvento>([^<]+)<\/dhEvento>/.exec(pedido.xml)?.[1] ?? '';
          const inner = pedido.xml
            .replace(`<pedRegEvento xmlns="${NFSE_NAMESPACE}"`, '<pedRegEvento')
            .replace('<infPedReg Id="', '<infPedReg id="');
          const xml =
            `<evento xmlns="${BETHA_NAMESPACE}" versao="${BETHA_DPS_VERSION}"><infEvento id="EVT${pedido.id.slice(3)}">` +
            `<verAplic>${escapeXmlText(NATIONAL_APP_VERSION)}</verAplic><ambGer>1</ambGer><nSeqEvento>001</nSeqEvento>` +
            `<dhProc>${dhEvento}</dhProc><nDFe>0</nDFe>${inner}</infEvento></evento>`;
          return { id: pedido.id, xml };
        },
        signedElement: 'infPedReg',
        schema: 'pedRegEvento',
        schemaView: (signed) => {
          const pedido = /<pedRegEvento[\s\S]*<\/pedRegEvento>/.exec(signed)?.[0] ?? '';
          return toNationalView(pedido.replace('<pedRegEvento ', `<pedRegEvento xmlns="${BETHA_NAMESPACE}" `));
        },
        schemaErrorCode: 'EVENT_SCHEMA_INVALID',
      },
      operation: {
        async exchange({ signed, input }, context, send): Promise<Outcome<CancellationRecord>> {
          const sent = await send(
            soapRequest(context, 'RecepcionarEventoCancelamentoEnvio', [
              { name: 'evento', value: signed, encoding: 'xml', qualified: false, bare: true },
            ]),
          );
          const read = readAnswer(sent, ['RecepcionarEventoCancelamentoResposta', 'RecepcionarDpsResposta']);
          if ('kind' in read) return read;
          if (read.errors.length > 0)
            return rejectedBy(read.errors, sent.kind === 'response' ? sent.status : undefined);
          const protocol = descendantText(read.root, 'protocolo');
          if (!protocol) return { kind: 'unknown', reason: 'Betha accepted the cancellation without a protocol' };
          const municipality = context.municipality ?? input.issued.chave?.slice(0, 7) ?? '';
          for (let attempt = 0; attempt < CANCEL_STATUS_ATTEMPTS; attempt++) {
            const answer = await send(
              statusRequest(context, protocol, input.issued.providerCnpj, 'CANCELAMENTO', municipality),
            );
            const status = readAnswer(answer, ['ConsultarStatusDpsCancelamentoResposta', 'ConsultarStatusDpsResposta']);
            if ('kind' in status) return { kind: 'unknown', reason: `cancellation ${protocol}: status unreadable` };
            const value = descendantText(status.root, 'statusProcessamento');
            if (isError(value)) {
              return rejectedBy(status.errors.length > 0 ? status.errors : [{ Codigo: 'ERRO', Descricao: 'ERRO' }]);
            }
            if (isDone(value)) {
              const at = new Date(descendantText(status.root, 'dataHoraRecebimento') ?? Date.now());
              return {
                kind: 'ok',
                value: {
                  xml: answer.kind === 'response' ? answer.body : '',
                  cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at,
                },
              };
            }
            await new Promise((resolve) => setTimeout(resolve, CANCEL_STATUS_INTERVAL_MS));
          }
          return { kind: 'unknown', reason: `cancellation ${protocol} still waiting at Betha` };
        },
      },
    },
    queryCancellation: {
      async exchange(issued, context, send) {
        const query = nationalOperations.queryCancellation;
        if (!query) return { kind: 'ok', value: null };
        const national = nationalContext(context);
        if ('exchange' in query) return query.exchange(issued, national, send);
        const answer = await send(query.request(issued, national));
        if (answer.kind !== 'response') return transportFailure(answer);
        return query.parse(answer, issued, national);
      },
    },
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E0840'],
});
