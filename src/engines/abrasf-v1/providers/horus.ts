import { childElements, findDescendant, parseXml } from '../../../xml/read.ts';
import type { FamilyDefinition, Operation, OperationRequest, SendContext } from '../../kit/family.ts';
import { UnknownEndpointError } from '../../kit/family.ts';
import { soapEnvelope } from '../../kit/soap.ts';
import { municipalityRegistry } from '../../routing/municipality-registry.ts';
import { ACBR_V1_IDS, type AbrasfV1ProviderConfig } from '../config.ts';
import { defineAbrasfV1Provider } from '../define.ts';
import { buildLote } from '../messages.ts';

/**
 * Horus (HorusDM; Campina Verde/MG and Delfinópolis/MG at `http://<alias>.horusdm.com.br/service`, training
 * `http://teste.horusdm.com.br/service`). Sources: ACBr Horus.Provider.pas (frones/ACBr,
 * `Fontes/ACBrDFe/ACBrNFSeX/Provedores/Horus/`); the provider's nfse.xsd as ACBr ships it (frones/ACBr 7341cecc
 * `Exemplos/ACBrDFe/Schemas/NFSe/Horus/1.00/nfse.xsd`, copied to schemas/abrasf-v1/horus/); the registry's URLs and
 * the per-city `AliasCidade` option (ACBrNFSeXServicos.ini).
 * - SOAP 1.1, the operation element named after the message (EnviarLoteRpsEnvio, ConsultarSituacaoLoteRpsEnvio,
 *   ConsultarLoteRpsEnvio, ConsultarNfseRpsEnvio, ConsultarNfseEnvio, CancelarNfseEnvio) in the namespace
 *   `http://<alias>.horusdm.com.br/service?wsdl` (alias `teste` in homologation, else the city's AliasCidade), its
 *   unqualified `<xml>` parameter holding the escaped message; SOAPAction = that namespace + `#` + the operation;
 *   the answer in `return`.
 * - messages: Belo Horizonte's ABRASF 1.00 schema (`http://www.abrasf.org.br/nfse.xsd`, `Id` attributes, LoteRps@versao
 *   1.00 required: ACBr AtribVerLote `versao`, VersaoAtrib 1.00); the cancellation confirmed as
 *   RetCancelamento{NfseCancelamento{Confirmacao{Pedido, DataHoraCancelamento}}}.
 * - nothing signed (ACBr sets no ConfigAssinar for Horus); client certificate on TLS (ACBr's default
 *   UseCertificateHTTP; the registry's auth `mtls`).
 * Conservative readings: ACBr's Horus writer (Horus.GravarXml) is not in the public index, so the ABRASF 1.00
 * defaults of the generic base apply (ItemListaServico `01.01`, Aliquota a fraction, written when ISS is due);
 * RPS id `rps<number>`, lote id `Lote_<number>`; CodigoCancelamento 1/2/4.
 */
const DATA_NS = 'http://www.abrasf.org.br/nfse.xsd';
const PLACEHOLDER_NS = 'urn:horus:city';
const op = (element: string) => ({ element, soapAction: '', parameter: 'xml' });

export const HORUS_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'Horus',
  sources: 'ACBr Horus.Provider.pas; Horus nfse.xsd (ACBr copy); registry AliasCidade',
  schema: 'abrasf100Horus',
  dataNamespace: DATA_NS,
  soap: {
    namespace: PLACEHOLDER_NS,
    encoding: 'escaped',
    qualifiedParameters: false,
    operations: {
      recepcionar: op('EnviarLoteRpsEnvio'),
      consultarSituacao: op('ConsultarSituacaoLoteRpsEnvio'),
      consultarLote: op('ConsultarLoteRpsEnvio'),
      consultarPorRps: op('ConsultarNfseRpsEnvio'),
      consultarNfse: op('ConsultarNfseEnvio'),
      cancelar: op('CancelarNfseEnvio'),
    },
  },
  idAttribute: 'Id',
  ids: ACBR_V1_IDS,
  signature: { rps: false, lote: false, queries: false, cancel: false },
  formats: { itemListaServico: 'dotted', lineBreak: ' ' },
  auth: 'mtls',
  capabilities: { cancel: true, substitution: false, batch: false, pdf: 'none', homologation: true },
};

/** The service namespace of the city (`teste` in homologation; the registry's AliasCidade in production). */
export function horusNamespace(municipality: string | null, ambiente: 1 | 2): string {
  const option = municipality ? municipalityRegistry().find(municipality)?.parameters?.options?.AliasCidade : undefined;
  const alias = ambiente === 2 ? 'teste' : typeof option === 'string' ? option : undefined;
  if (!alias) throw new UnknownEndpointError(`Horus: no AliasCidade for municipality ${municipality ?? '(none)'}`);
  return `http://${alias}.horusdm.com.br/service?wsdl`;
}

/** The lote with its required `versao` (nothing is signed, so it can be added to the built lote). */
const withVersao = (lote: string) => lote.replace(/<LoteRps /, '<LoteRps versao="1.00" ');

/** A request of the generic base (placeholder namespace) in the city's namespace and SOAPAction. */
function toCity(request: OperationRequest, context: SendContext): OperationRequest {
  const parsed = parseXml(request.body ?? '');
  const call = parsed.ok ? childElements(findDescendant(parsed.root, 'Body') ?? parsed.root)[0] : undefined;
  const message = call ? childElements(call).at(-1)?.textContent : undefined;
  if (!call || !message) throw new Error('Horus: not an ABRASF 1.00 request');
  const namespace = horusNamespace(context.municipality, context.ambiente);
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace,
    operation: call.localName,
    parts: [
      {
        name: 'xml',
        value: call.localName === 'EnviarLoteRpsEnvio' ? withVersao(message) : message,
        encoding: 'escaped',
        qualified: false,
      },
    ],
    soapAction: `${namespace}#${call.localName}`,
  });
  return { ...request, headers, body };
}

function adapt<In, Out>(operation: Operation<In, Out>): Operation<In, Out> {
  if ('exchange' in operation) {
    return { exchange: (input, context, send) => operation.exchange(input, context, (r) => send(toCity(r, context))) };
  }
  return { request: (input, context) => toCity(operation.request(input, context), context), parse: operation.parse };
}

const base = defineAbrasfV1Provider(HORUS_CONFIG);
const { emit, poll, query, cancel, queryCancellation } = base.operations;

export const horusFamily: FamilyDefinition = {
  ...base,
  layout: 'ABRASF 1.00 (Horus: BH schema, `<xml>` in the city namespace, asynchronous lotes)',
  declaration: { ...base.declaration, schemaView: (signed) => withVersao(buildLote(HORUS_CONFIG, signed)) },
  operations: {
    emit: adapt(emit),
    ...(poll ? { poll: adapt(poll) } : {}),
    query: adapt(query),
    ...(cancel ? { cancel: { message: cancel.message, operation: adapt(cancel.operation) } } : {}),
    ...(queryCancellation ? { queryCancellation: adapt(queryCancellation) } : {}),
  },
};
