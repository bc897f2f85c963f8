import type { NormalizedInvoice } from '../../../domain/invoice-request.ts';
import { childElements, findDescendant, parseXml, text } from '../../../xml/read.ts';
import { signXml } from '../../../xml/sign.ts';
import { readAbrasfAnswer } from '../../abrasf-v2/transport.ts';
import {
  type FamilyDefinition,
  type Operation,
  type OperationRequest,
  type SendContext,
  UnknownEndpointError,
} from '../../kit/family.ts';
import { soapEnvelope } from '../../kit/soap.ts';
import { municipalityRegistry } from '../../routing/municipality-registry.ts';
import type { CancellationRecord, Outcome } from '../../types.ts';
import { ACBR_V1_IDS, wsdlOperations, type AbrasfV1ProviderConfig } from '../config.ts';
import { defineAbrasfV1Provider } from '../define.ts';
import { buildLote } from '../messages.ts';

/**
 * ISSIntel / ISSIntegra (18 cities in PA, PI, MG, ES, RJ, SP, MT: `https://<city>-<uf>.issintel.com.br` or
 * `…issintegra.com.br/webservices/abrasf/api`, training `…treino-issintel…`). Sources: ACBr ISSIntel.Provider.pas and
 * ISSIntel.GravarXml.pas (edsontmarques/ACBr, `Fontes/ACBrDFe/ACBrNFSeX/Provedores/ISSIntel/`); the provider's
 * nfse.xsd as ACBr ships it (patrick9as/ACBr 3d07eb61 `Exemplos/ACBrDFe/Schemas/NFSe/ISSIntel/1.00/nfse.xsd`, copied
 * to schemas/abrasf-v1/issintel/); the per-city service namespace and SOAPAction of ACBrNFSeXServicos.ini, carried
 * by the registry (municipalities.json `soap.ProNameSpace/HomNameSpace/ProSoapAction/HomSoapAction`).
 * - SOAP 1.1; the operation element (RecepcionarLoteRps, ConsultarSituacaoLoteRps, ConsultarLoteRps,
 *   ConsultarNfsePorRps, ConsultarNfse, CancelarNfse) in the CITY's namespace, holding the ABRASF message itself as
 *   its child (no string parameter, no cabeçalho); SOAPAction = the city's SoapAction + the operation name. A city
 *   without a namespace for the environment has no service there (UnknownEndpointError, as a missing URL).
 * - messages: Belo Horizonte's ABRASF 1.00 schema (namespace `http://www.abrasf.org.br/nfse.xsd`, `Id` attributes,
 *   LoteRps@versao 1.00 required: ACBr AtribVerLote `versao`, VersaoAtrib 1.00) with ISSIntel's additions:
 *   CodigoServicoNacional required after ItemListaServico (the national cTribNac here), TpRetPisCofins required at
 *   the end of Valores (the national tpRetPisCofins; 0 "não retidos" when the invoice has none), then PisCofinsCst,
 *   BcPisCofins, AliquotaPis, AliquotaCofins when known.
 * - signatures (ConfigAssinar): the lote on LoteRps and the cancellation on InfPedidoCancelamento; the RPS and the
 *   consultations unsigned; client certificate on TLS (the registry's auth `mtls`).
 * - ItemListaServico dotted without the leading zero (filsComFormatacaoSemZeroEsquerda: `1.01`, `14.01`); Aliquota a
 *   fraction (DivAliq100), written also as 0.0000 for a Simples Nacional or immune provider (NrOcorrAliquota = 1).
 * - the cancellation is answered with BH's RetCancelamento{NfseCancelamento{Confirmacao{Pedido, DataHora}}}.
 * Conservative readings: the answer root is looked for anywhere in the SOAP body (ACBr's Executar does the same);
 * RPS id `rps<number>`, lote id `Lote_<number>`; CodigoCancelamento 1/2/4; the optional CodigoNbs is not sent.
 */
const DATA_NS = 'http://www.abrasf.org.br/nfse.xsd';
/** the generic base writes its requests in this placeholder service namespace; each is rewritten per city */
const PLACEHOLDER_NS = 'urn:issintel:city';
const op = (element: string) => ({ element, soapAction: '', parameter: 'xml' });

export const ISSINTEL_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'ISSIntel',
  sources:
    'ACBr ISSIntel.Provider.pas / ISSIntel.GravarXml.pas; ISSIntel nfse.xsd (ACBr copy); registry soap namespaces',
  schema: 'abrasf100ISSIntel',
  dataNamespace: DATA_NS,
  soap: {
    namespace: PLACEHOLDER_NS,
    encoding: 'escaped',
    qualifiedParameters: false,
    operations: wsdlOperations(op),
  },
  idAttribute: 'Id',
  ids: ACBR_V1_IDS,
  signature: { rps: false, lote: true, queries: false, cancel: true },
  formats: { itemListaServico: 'dotted', lineBreak: ' ' },
  auth: 'mtls',
  capabilities: { cancel: true, substitution: false, batch: false, pdf: 'none', homologation: true },
};

/** The city's service namespace and SOAPAction prefix for the environment (registry data from ACBr's ini). */
export function issIntelService(municipality: string | null, ambiente: 1 | 2): { namespace: string; action: string } {
  const soap = municipality ? municipalityRegistry().find(municipality)?.parameters?.soap : undefined;
  const side = ambiente === 1 ? 'Pro' : 'Hom';
  const namespace = soap?.[`${side}NameSpace`];
  const action = soap?.[`${side}SoapAction`];
  if (!namespace || !action) {
    throw new UnknownEndpointError(
      `ISSIntel: no ${ambiente === 1 ? 'production' : 'homologation'} service for municipality ${municipality ?? '(none)'}`,
    );
  }
  return { namespace, action };
}

const num = (value: number | null | undefined, digits: number) =>
  value !== null && value !== undefined && value > 0 ? value.toFixed(digits) : null;
const tag = (name: string, value: string | null) => (value === null ? '' : `<${name}>${value}</${name}>`);

/** The generic ABRASF 1.00 RPS in ISSIntel's form (item format, CodigoServicoNacional, the PIS/COFINS group). */
export function issIntelRps(xml: string, invoice: NormalizedInvoice): string {
  const pc = invoice.federal?.pisCofins ?? null;
  const zeroRate = invoice.regime.simples || invoice.iss.tribISSQN === 2;
  const pisCofins =
    tag('TpRetPisCofins', String(pc?.tipoRetencao ?? 0)) +
    tag('PisCofinsCst', pc && /^\d{2}$/.test(pc.cst) ? pc.cst : null) +
    tag('BcPisCofins', num(pc?.baseCalculo, 2)) +
    tag('AliquotaPis', num(pc?.aliquotaPis, 4)) +
    tag('AliquotaCofins', num(pc?.aliquotaCofins, 4));
  return xml
    .replace(/<ItemListaServico>0(\d\.)/, '<ItemListaServico>$1')
    .replace('</ItemListaServico>', `</ItemListaServico>${tag('CodigoServicoNacional', invoice.servico.cTribNac)}`)
    .replace(/<\/BaseCalculo>(?!<Aliquota>)/, zeroRate ? '</BaseCalculo><Aliquota>0.0000</Aliquota>' : '</BaseCalculo>')
    .replace('</Valores>', `${pisCofins}</Valores>`);
}

/** The lote with its required `versao` (before it is signed). */
const withVersao = (lote: string) => lote.replace(/<LoteRps /, '<LoteRps versao="1.00" ');

/** A request of the generic base (the message escaped in a placeholder operation) in ISSIntel's idiom. */
function toCity(request: OperationRequest, context: SendContext): OperationRequest {
  const parsed = parseXml(request.body ?? '');
  const call = parsed.ok ? childElements(findDescendant(parsed.root, 'Body') ?? parsed.root)[0] : undefined;
  const message = call ? childElements(call).at(-1)?.textContent : undefined;
  if (!call || !message) throw new Error('ISSIntel: not an ABRASF 1.00 request');
  return cityRequest(request, context, call.localName, message);
}

function cityRequest(request: OperationRequest, context: SendContext, operation: string, message: string) {
  const { namespace, action } = issIntelService(context.municipality, context.ambiente);
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace,
    operation,
    parts: [{ name: 'message', value: message, encoding: 'xml', qualified: false, bare: true }],
    soapAction: `${action}${operation}`,
  });
  return { ...request, headers, body };
}

function adapt<In, Out>(operation: Operation<In, Out>): Operation<In, Out> {
  if ('exchange' in operation) {
    return { exchange: (input, context, send) => operation.exchange(input, context, (r) => send(toCity(r, context))) };
  }
  return { request: (input, context) => toCity(operation.request(input, context), context), parse: operation.parse };
}

/** BH's cancellation time (Confirmacao/DataHora) over the base's reading. */
function withDataHora(outcome: Outcome<CancellationRecord | null>): Outcome<CancellationRecord | null> {
  if (outcome.kind !== 'ok' || !outcome.value) return outcome;
  const parsed = parseXml(outcome.value.xml);
  const confirmacao = parsed.ok ? findDescendant(parsed.root, 'Confirmacao') : null;
  const at = new Date(text(confirmacao, 'DataHora') ?? '');
  return Number.isNaN(at.getTime()) ? outcome : { kind: 'ok', value: { ...outcome.value, cancelledAt: at } };
}

const base = defineAbrasfV1Provider(ISSINTEL_CONFIG);
const { emit, poll, query, cancel, queryCancellation } = base.operations;
if (!('parse' in emit) || !cancel || !('parse' in cancel.operation) || !queryCancellation) {
  throw new Error('ISSIntel: unexpected shape of the ABRASF 1.00 base');
}
const cancelOperation = cancel.operation;

export const issIntelFamily: FamilyDefinition = {
  ...base,
  layout: 'ABRASF 1.00 (ISSIntel: BH schema, message inline in the city namespace, asynchronous lotes)',
  serves: (municipality) => {
    const soap = municipalityRegistry().find(municipality)?.parameters?.soap;
    return !!soap?.ProNameSpace || !!soap?.HomNameSpace;
  },
  declaration: {
    ...base.declaration,
    build: (input) => {
      const built = base.declaration.build(input);
      return { id: built.id, xml: issIntelRps(built.xml, input.invoice) };
    },
    schemaView: (signed) => withVersao(buildLote(ISSINTEL_CONFIG, signed)),
  },
  operations: {
    emit: {
      request(document, context) {
        const key = { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem };
        const lote = withVersao(buildLote(ISSINTEL_CONFIG, document.xml));
        const signed = signXml(lote, { elementName: 'LoteRps', key, algorithm: 'rsa-sha1' });
        const request: OperationRequest = { method: 'POST', url: '', headers: {} };
        return cityRequest(
          { ...request, url: context.endpoints.url('emit', context.ambiente, context.municipality) },
          context,
          'RecepcionarLoteRps',
          signed,
        );
      },
      parse: emit.parse,
    },
    ...(poll ? { poll: adapt(poll) } : {}),
    query: adapt(query),
    cancel: {
      message: cancel.message,
      operation: {
        request: (input, context) => toCity(cancelOperation.request(input, context), context),
        parse(answer, input, context) {
          const read = readAbrasfAnswer(answer, ['CancelarNfseResposta']);
          if (!('kind' in read) && read.errors.length === 0) {
            return withDataHora(cancelOperation.parse(answer, input, context)) as Outcome<CancellationRecord>;
          }
          return cancelOperation.parse(answer, input, context);
        },
      },
    },
    queryCancellation: (() => {
      const adapted = adapt(queryCancellation);
      if (!('parse' in adapted)) return adapted;
      return { request: adapted.request, parse: (a, i, c) => withDataHora(adapted.parse(a, i, c)) };
    })(),
  },
};
