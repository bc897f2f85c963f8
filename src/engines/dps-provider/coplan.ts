import { escapeXmlText } from '../../xml/escape.ts';
import { children, descendantText, findDescendant, outerXml, text } from '../../xml/read.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { SOAP_NAMESPACES } from '../kit/soap.ts';
import { checkDpsRequirements, NFSE_NAMESPACE } from '../national/dps-builder.ts';
import { buildNationalDps, requireAccessKey } from '../national/family.ts';
import type { CancellationRecord, IssuedDocument, Outcome } from '../types.ts';
import { messagesOf, readStringAnswer, refusal } from './string-soap.ts';

/**
 * Coplan (registry provider `Coplan`, briefs/providers-own.md §4): a GeneXus SOAP 1.1 service (`…/anfse_ws`) whose
 * operations wrap a request element holding two CDATA strings in a second namespace:
 * `<trib:nfse_web.GERARNFSE><trib:Gerarnfserequest><trib1:nfseCabecMsg/><trib1:nfseDadosMsg/></…>` with
 * `trib="Tributario"` and `trib1="Tributario_PRODUCAO_FULL"` (homologation `Tributario_HOMOLOGACAO_FULL`), SOAPAction
 * `Tributarioaction/ANFSE_WEB.<OPERATION>`. Mutual TLS plus the XML signature; synchronous through GerarNfse. The
 * kit's soapEnvelope writes one namespace, so this two-namespace envelope is built here.
 *
 * Conservative readings (the sandbox accepts only these):
 * - cabeçalho (unknown 5): ACBr's PadraoNacional default, `<cabecalho versao="1.01"><versaoDados>1.01</versaoDados>`
 *   in the national namespace;
 * - emission: `GerarNfseEnvio{DPS}` in the national namespace, the DPS the national builder writes, signed on
 *   `infDPS` and valid against DPS_v1.01.xsd; the answer `GerarNfseResposta{DataRecebimento, Protocolo,
 *   ListaNfse/CompNfse/NFSe, ListaMensagemRetorno/MensagemRetorno{Codigo, Mensagem, Correcao}}`, national rule codes
 *   for the DPS (E0014 already processed);
 * - query: `CONSULTARNFSEPORDPS` with `ConsultarNfseDpsEnvio{Prestador/CpfCnpj/Cnpj, idDPS}`; an answer without
 *   `ListaNfse` and without messages means none;
 * - cancellation (ABRASF-style): `CancelarNfseEnvio{Pedido{InfPedidoCancelamento Id="CANC<chave>"
 *   {IdentificacaoNfse{Numero, CpfCnpj/Cnpj, CodigoMunicipio (of the key)}, CodigoCancelamento 1}, Signature}}`,
 *   signed on `InfPedidoCancelamento`; no XSD is known for it; the answer `RetCancelamento/NfseCancelamento/
 *   Confirmacao{Pedido, DataHora}`; E79 ("NFS-e já cancelada", ABRASF) means already cancelled;
 * - cancellation query: `CONSULTARNFSEFAIXA` with `ConsultarNfseFaixaEnvio{Prestador, Faixa{NumeroNfseInicial,
 *   NumeroNfseFinal}}` on the note's number; a cancelled note's `CompNfse` carries `NfseCancelamento`.
 */
export const COPLAN_SERVICE_NAMESPACE = 'Tributario';
export const COPLAN_APP_VERSION = 'nfse-service-1.0';
const CABECALHO = `<cabecalho xmlns="${NFSE_NAMESPACE}" versao="1.01"><versaoDados>1.01</versaoDados></cabecalho>`;

export const coplanDataNamespace = (ambiente: 1 | 2) =>
  ambiente === 1 ? 'Tributario_PRODUCAO_FULL' : 'Tributario_HOMOLOGACAO_FULL';

const cdata = (value: string) => `<![CDATA[${value.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`;

/** The GeneXus envelope of one operation (`GERARNFSE` → `nfse_web.GERARNFSE` / `Gerarnfserequest`). */
export function coplanCall(operation: string, dados: string, context: SendContext): OperationRequest {
  const request = `${operation.charAt(0)}${operation.slice(1).toLowerCase()}request`;
  const body =
    `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="${SOAP_NAMESPACES['1.1']}" ` +
    `xmlns:trib="${COPLAN_SERVICE_NAMESPACE}" xmlns:trib1="${coplanDataNamespace(context.ambiente)}"><soapenv:Body>` +
    `<trib:nfse_web.${operation}><trib:${request}>` +
    `<trib1:nfseCabecMsg>${cdata(CABECALHO)}</trib1:nfseCabecMsg><trib1:nfseDadosMsg>${cdata(dados)}</trib1:nfseDadosMsg>` +
    `</trib:${request}></trib:nfse_web.${operation}></soapenv:Body></soapenv:Envelope>`;
  return {
    method: 'POST',
    url: context.endpoints.url('emit', context.ambiente, context.municipality),
    headers: {
      'content-type': 'text/xml; charset=utf-8',
      soapaction: `"${COPLAN_SERVICE_NAMESPACE}action/ANFSE_WEB.${operation}"`,
      accept: 'text/xml',
    },
    body,
  };
}

const envio = (root: string, content: string) => `<${root} xmlns="${NFSE_NAMESPACE}">${content}</${root}>`;
const prestador = (cnpj: string | null) => `<Prestador><CpfCnpj><Cnpj>${cnpj ?? ''}</Cnpj></CpfCnpj></Prestador>`;

function messageOf(
  answer: HttpResponse,
  write: boolean,
): { ok: true; root: Element } | { ok: false; outcome: Outcome<never> } {
  const read = readStringAnswer(answer, write);
  if (read.kind === 'failure') return { ok: false, outcome: read.outcome };
  const lista = findDescendant(read.root, 'ListaMensagemRetorno');
  const errors = lista ? messagesOf(lista) : [];
  if (errors.length > 0) return { ok: false, outcome: refusal(errors, errors[0]) };
  return { ok: true, root: read.root };
}

function issuedOf(comp: Element, protocol: string | null, ambiente: 1 | 2): IssuedDocument | null {
  const nfse = findDescendant(comp, 'NFSe');
  const inf = nfse ? findDescendant(nfse, 'infNFSe') : null;
  const chave = /^NFS(\d{50})$/.exec(inf?.getAttribute('Id') ?? '')?.[1] ?? null;
  const numero = text(inf, 'nNFSe');
  if (!nfse || !chave || !numero) return null;
  const dhProc = text(inf, 'dhProc');
  return { chave, numero, protocol, emittedAt: dhProc ? new Date(dhProc) : new Date(), xml: outerXml(nfse), ambiente };
}

function cancellationOf(root: Element): CancellationRecord | null {
  const cancelamento = findDescendant(root, 'NfseCancelamento');
  if (!cancelamento) return null;
  const at = new Date(descendantText(cancelamento, 'DataHora') ?? '');
  return { xml: outerXml(cancelamento), cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at };
}

function requireNumber(numero: string | null): string {
  if (!numero) throw new Error('a Coplan note without its number');
  return numero;
}

export const coplanFamily = defineFamily({
  id: 'dps-provider',
  provider: 'Coplan',
  layout: 'DPS 1.01 in GerarNfseEnvio (Coplan, GeneXus SOAP nfseDadosMsg)',
  transport: 'soap11',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  check: checkDpsRequirements,
  declaration: {
    build: (input) => buildNationalDps(input, COPLAN_APP_VERSION),
    signedElement: 'infDPS',
    schema: 'DPS',
    schemaErrorCode: 'DPS_SCHEMA_INVALID',
  },
  operations: {
    emit: {
      request: (document, context) => coplanCall('GERARNFSE', envio('GerarNfseEnvio', document.xml), context),
      parse(answer, _document, context): Outcome<IssuedDocument> {
        const message = messageOf(answer, true);
        if (!message.ok) return message.outcome;
        const comp = findDescendant(message.root, 'CompNfse');
        const issued = comp ? issuedOf(comp, text(message.root, 'Protocolo'), context.ambiente) : null;
        return issued ? { kind: 'ok', value: issued } : { kind: 'unknown', reason: 'GerarNfseResposta without NFS-e' };
      },
    },
    query: {
      request: (document, context) =>
        coplanCall(
          'CONSULTARNFSEPORDPS',
          envio(
            'ConsultarNfseDpsEnvio',
            `${prestador(context.certificate.cnpj)}<idDPS>${escapeXmlText(document.id)}</idDPS>`,
          ),
          context,
        ),
      parse(answer, _document, context): Outcome<IssuedDocument | null> {
        const message = messageOf(answer, false);
        if (!message.ok) return message.outcome;
        const comp = findDescendant(message.root, 'CompNfse');
        if (!comp) return { kind: 'ok', value: null };
        const issued = issuedOf(comp, null, context.ambiente);
        return issued ? { kind: 'ok', value: issued } : { kind: 'transient', reason: 'NFS-e without key or number' };
      },
    },
    cancel: {
      message: {
        build: ({ issued }) => {
          const chave = requireAccessKey(issued.chave, 'a Coplan');
          const id = `CANC${chave}`;
          return {
            id,
            xml: envio(
              'CancelarNfseEnvio',
              `<Pedido><InfPedidoCancelamento Id="${id}"><IdentificacaoNfse>` +
                `<Numero>${escapeXmlText(requireNumber(issued.numero))}</Numero><CpfCnpj><Cnpj>${issued.providerCnpj}</Cnpj></CpfCnpj>` +
                `<CodigoMunicipio>${chave.slice(0, 7)}</CodigoMunicipio></IdentificacaoNfse>` +
                '<CodigoCancelamento>1</CodigoCancelamento></InfPedidoCancelamento></Pedido>',
            ),
          };
        },
        signedElement: 'InfPedidoCancelamento',
        schema: null,
        schemaErrorCode: 'CANCEL_SCHEMA_INVALID',
      },
      operation: {
        request: ({ signed }, context) => coplanCall('CANCELARNFSE', signed, context),
        parse(answer): Outcome<CancellationRecord> {
          const message = messageOf(answer, true);
          if (!message.ok) return message.outcome;
          const record = cancellationOf(message.root);
          return record
            ? { kind: 'ok', value: record }
            : { kind: 'unknown', reason: 'answer without NfseCancelamento' };
        },
      },
    },
    queryCancellation: {
      request: (issued, context) =>
        coplanCall(
          'CONSULTARNFSEFAIXA',
          envio(
            'ConsultarNfseFaixaEnvio',
            `${prestador(context.certificate.cnpj)}<Faixa><NumeroNfseInicial>${escapeXmlText(requireNumber(issued.numero))}</NumeroNfseInicial>` +
              `<NumeroNfseFinal>${escapeXmlText(requireNumber(issued.numero))}</NumeroNfseFinal></Faixa>`,
          ),
          context,
        ),
      parse(answer, issued): Outcome<CancellationRecord | null> {
        const message = messageOf(answer, false);
        if (!message.ok) return message.outcome;
        const comp = children(findDescendant(message.root, 'ListaNfse'), 'CompNfse').find(
          (c) => text(findDescendant(c, 'infNFSe'), 'nNFSe') === issued.numero,
        );
        return { kind: 'ok', value: comp ? cancellationOf(comp) : null };
      },
    },
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E79'],
});
