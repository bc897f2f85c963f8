import type { SendContext } from '../../kit/family.ts';
import type { AbrasfOperation, AbrasfProviderConfig, OperationOverride } from '../config.ts';
import { cabecalho } from '../messages.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Coplan's ABRASF 2.01 service (14 cities in MT at `https://www.gp.srv.br/tributario/<city>/anfse_web_service`,
 * production only: the registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr creates TACBrNFSeProviderCoplan201;
 * its national-DPS `anfse_ws` is `dps-provider:coplan`). Facts from two public clients:
 * - ACBr `Coplan.Provider.pas` (TACBrNFSeXWebserviceCoplan201 / TACBrNFSeProviderCoplan201) and `Coplan.GravarXml.pas`
 *   (TNFSeW_Coplan201), edsontmarques/ACBr mirror: a GeneXus SOAP 1.1 service,
 *   `<trib:nfse_web_service.<OP>><trib:<Op>request>{trib1:nfseCabecMsg, trib1:nfseDadosMsg}` with `trib` =
 *   `Tributario` and the strings (CDATA) in `trib1` = `Tributario_PRODUCAO_FULL` in production,
 *   `TributarioGx16New` in homologation; SOAPAction `Tributarioaction/ANFSE_WEB_SERVICE.<OP>`; answers in
 *   `<…><Op>response><outputXML>` (escaped); ABRASF 2.01 (VersaoDados 2.01), the official cabecalho; RPS, lote,
 *   GerarNfse's RPS, cancellation and substitution signed; Aliquota with 2 decimals, ItemListaServico without
 *   formatting (`0105`); the range query's errors come without MensagemRetorno (its own comment);
 * - a PHP client (`Alves\NfseBrasil` ToolsProviderBuilderCoplanTrait): the same elements, per-environment `trib1`
 *   namespaces and SOAPActions.
 * Readings: the official nfse_v201.xsd; GerarNfse synchronous; the client certificate on TLS (ACBr's default; the
 * registry's `mtls`); the range query is not used (its error shape is not the official one).
 */
const OPERATIONS: Record<AbrasfOperation, [outer: string, inner: string]> = {
  emitAsyncBatch: ['RECEPCIONARLOTERPS', 'Recepcionarloterpsrequest'],
  emitSyncBatch: ['RECEPCIONARLOTERPSSINCRONO', 'Recepcionarloterpssincronorequest'],
  emitSingle: ['GERARNFSE', 'Gerarnfserequest'],
  queryBatch: ['CONSULTARLOTERPS', 'Consultarloterpsrequest'],
  queryByRps: ['CONSULTARNFSEPORRPS', 'Consultarnfseporrpsrequest'],
  queryRange: ['CONSULTARNFSEFAIXA', 'Consultarnfseporfaixarequest'],
  cancel: ['CANCELARNFSE', 'Cancelarnfserequest'],
  replace: ['SUBSTITUIRNFSE', 'Substituirnfserequest'],
};

/** The namespace of the string parameters, per environment (production, homologation). */
export const COPLAN_PARAMETER_NAMESPACES = { 1: 'Tributario_PRODUCAO_FULL', 2: 'TributarioGx16New' } as const;

const cdata = (xml: string) => `<![CDATA[${xml.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`;

/** `<trib:nfse_web_service.<OP>><trib:<Op>request><trib1:nfseCabecMsg>…` (the signed message kept byte for byte). */
function coplanMessage(operation: AbrasfOperation, xml: string, context: SendContext | null): string {
  if (!context) return xml;
  const [outer, inner] = OPERATIONS[operation];
  const ns = COPLAN_PARAMETER_NAMESPACES[context.ambiente];
  return (
    `<trib:nfse_web_service.${outer} xmlns:trib="Tributario" xmlns:trib1="${ns}"><trib:${inner}>` +
    `<trib1:nfseCabecMsg>${cdata(cabecalho(COPLAN_CONFIG))}</trib1:nfseCabecMsg>` +
    `<trib1:nfseDadosMsg>${cdata(xml)}</trib1:nfseDadosMsg></trib:${inner}></trib:nfse_web_service.${outer}>`
  );
}

const base = baselineConfig({
  provider: 'Coplan',
  version: '2.01',
  schema: 'abrasf201',
  sources:
    'ACBr Coplan.Provider.pas + Coplan.GravarXml.pas (TACBrNFSeProviderCoplan201); PHP Alves\\NfseBrasil ToolsProviderBuilderCoplanTrait; ABRASF nfse_v201.xsd',
});

const actions = Object.fromEntries(
  Object.entries(OPERATIONS).map(([operation, [outer]]) => [
    operation,
    { soapAction: `Tributarioaction/ANFSE_WEB_SERVICE.${outer}` } satisfies OperationOverride,
  ]),
) as Record<AbrasfOperation, OperationOverride>;

export const COPLAN_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { ...base.soap, namespace: 'Tributario', soapAction: '' },
  body: { style: 'bareMessage', encoding: 'raw', cabecalho: false, credentials: false },
  formats: { ...base.formats, itemListaServico: 'digits' },
  answerString: 'outputXML',
  hooks: { message: coplanMessage },
  operations: { ...actions, queryRange: { supported: false } },
};
