import { escapeXmlText } from '../../../xml/escape.ts';
import type { SendContext } from '../../kit/family.ts';
import type { AbrasfOperation, AbrasfProviderConfig, OperationOverride } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * SysISS (5 cities in PR at `http://<host>:7476/wsysarr/servlet/aws`, homologation `…/wsysarr_homologacao/servlet/aws`:
 * the registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr creates TACBrNFSeProviderSysISS202). Public facts
 * (ACBr `SysISS.Provider.pas`, TACBrNFSeXWebserviceSysISS202 / TACBrNFSeProviderSysISS202, edsontmarques/ACBr mirror):
 * - a GeneXus SOAP 1.1 service: `<ws:ws.<OP>><ws:<Op>in>message</ws:<Op>in></ws:ws.<OP>>` with `ws` = `ws`, the
 *   message as one escaped string, no cabecalho; SOAPAction `wsaction/AWS.<OP>`; the answer as the escaped string
 *   `<Op>out`; OP per operation: ENVIARLOTERPS, ENVIARLOTERPSSINCRONO, GERARNFSE, CONSULTARLOTERPS, CONSULTARNFSERPS,
 *   CONSULTARNFSEFAIXA, CANCELARNFSE, SUBSTITUIRNFSE (request elements `Enviarloterpsin`, `Gerarnfsein`, …);
 * - ABRASF 2.02 (VersaoDados 2.02, `versao` on LoteRps); the lote signed (its only ConfigAssinar; ACBr's default
 *   signs nothing else); NumeroNfseFinal in the range query.
 * Readings: the official nfse_v202.xsd; the emission is the signed synchronous lote (GerarNfse would go unsigned,
 * identifying no one); the cancellation is signed too (the official XSD's Signature in Pedido; ACBr does not sign
 * it); plain-http endpoints, so no client certificate is relied on (auth `signature`); Aliquota as a percentage,
 * ItemListaServico `01.05` (its writer unit is not in the public index: ACBr's ABRASF v2 defaults).
 */
const OPERATIONS: Record<AbrasfOperation, string> = {
  emitAsyncBatch: 'ENVIARLOTERPS',
  emitSyncBatch: 'ENVIARLOTERPSSINCRONO',
  emitSingle: 'GERARNFSE',
  queryBatch: 'CONSULTARLOTERPS',
  queryByRps: 'CONSULTARNFSERPS',
  queryRange: 'CONSULTARNFSEFAIXA',
  cancel: 'CANCELARNFSE',
  replace: 'SUBSTITUIRNFSE',
};

/** `ENVIARLOTERPS` → `Enviarloterpsin` (ACBr's request elements). */
const requestElement = (op: string) => `${op.charAt(0)}${op.slice(1).toLowerCase()}in`;

/** `<ws:ws.<OP>><ws:<Op>in>escaped message</…>` (the signed message kept byte for byte once unescaped). */
function sysissMessage(operation: AbrasfOperation, xml: string, context: SendContext | null): string {
  if (!context) return xml;
  const op = OPERATIONS[operation];
  const param = requestElement(op);
  return `<ws:ws.${op} xmlns:ws="ws"><ws:${param}>${escapeXmlText(xml)}</ws:${param}></ws:ws.${op}>`;
}

const base = baselineConfig({
  provider: 'SysISS',
  version: '2.02',
  schema: 'abrasf202',
  sources: 'ACBr SysISS.Provider.pas (TACBrNFSeProviderSysISS202); ABRASF nfse_v202.xsd',
});

const actions = Object.fromEntries(
  Object.entries(OPERATIONS).map(([operation, op]) => [
    operation,
    { soapAction: `wsaction/AWS.${op}` } satisfies OperationOverride,
  ]),
) as Record<AbrasfOperation, OperationOverride>;

export const SYSISS_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { ...base.soap, namespace: 'ws', soapAction: '' },
  body: { style: 'bareMessage', encoding: 'raw', cabecalho: false, credentials: false },
  auth: 'signature',
  signature: { rps: false, lote: true, cancel: true },
  emission: 'emitSyncBatch',
  hooks: { message: sysissMessage },
  operations: actions,
};
