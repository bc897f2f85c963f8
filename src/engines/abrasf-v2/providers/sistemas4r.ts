import { escapeXmlText } from '../../../xml/escape.ts';
import type { SendContext } from '../../kit/family.ts';
import { type AbrasfOperation, type AbrasfProviderConfig, notOffered, type OperationOverride } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Sistemas4R (Igaratá and Salmourão/SP: one endpoint per operation, `…/abrasf/a<operation>.aspx` in production and
 * `…/abrasf/ah<operation>.aspx` in homologation: the registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr creates
 * TACBrNFSeProvider4R200). Public facts (ACBr `Sistemas4R.Provider.pas`, TACBrNFSeXWebservice4R200 /
 * TACBrNFSeProvider4R200, edsontmarques/ACBr mirror):
 * - a GeneXus SOAP 1.1 service per operation: `<Op.Execute xmlns="Abrasf2"><Entrada>message</Entrada></…>` (the
 *   message as one escaped string, no cabecalho), the element prefixed `h` in homologation (`hCancelarNfse.Execute`);
 *   ConsultarLoteRps in `AbrasfNFSe`; SOAPAction `Abrasf2action/A<OP>.Execute` (`…/AH<OP>.Execute` in homologation),
 *   ConsultarLoteRps `AbrasfNFSeactionA[H]CONSULTARLOTERPS.Execute`; the answer as the escaped string `Resposta`;
 * - only RecepcionarLoteRpsSincrono, ConsultarLoteRps, ConsultarNfsePorRps and CancelarNfse (no GerarNfse, no
 *   asynchronous lote, no range query, no substitution: ServicosDisponibilizados);
 * - ABRASF 2.00 (ACBr's ABRASF v2 default versao), the RPS signed on its Rps (XmlRps Inf/DocElemento `Rps`), the lote
 *   and the cancellation signed; line breaks written as `<br>` (QuebradeLinha `&lt;br&gt;`).
 * Readings: the official nfse v2.00 XSD and the base's 2.00 layout (its writer unit is not in the public index:
 * ACBr's ABRASF v2 defaults); the emission is the synchronous lote; the client certificate on TLS (ACBr's default,
 * the registry's `mtls`); Aliquota as a percentage, ItemListaServico `01.05`.
 */
const OPERATIONS: Partial<Record<AbrasfOperation, { name: string; namespace: string; action: string; file: string }>> =
  {
    emitSyncBatch: {
      name: 'RecepcionarLoteRpsSincrono',
      namespace: 'Abrasf2',
      action: 'Abrasf2action/A{H}RECEPCIONARLOTERPSSINCRONO.Execute',
      file: 'recepcionarloterpssincrono.aspx',
    },
    queryBatch: {
      name: 'ConsultarLoteRps',
      namespace: 'AbrasfNFSe',
      action: 'AbrasfNFSeactionA{H}CONSULTARLOTERPS.Execute',
      file: 'consultarloterps.aspx',
    },
    queryByRps: {
      name: 'ConsultarNfsePorRps',
      namespace: 'Abrasf2',
      action: 'Abrasf2action/A{H}CONSULTARNFSEPORRPS.Execute',
      file: 'consultarnfseporrps.aspx',
    },
    cancel: {
      name: 'CancelarNfse',
      namespace: 'Abrasf2',
      action: 'Abrasf2action/A{H}CANCELARNFSE.Execute',
      file: 'cancelarnfse.aspx',
    },
  };

/** `<[h]<Op>.Execute xmlns="…"><Entrada>escaped message</Entrada></…>` (the signed message kept once unescaped). */
function sistemas4rMessage(operation: AbrasfOperation, xml: string, context: SendContext | null): string {
  const row = OPERATIONS[operation];
  if (!context || !row) return xml;
  const element = `${context.ambiente === 2 ? 'h' : ''}${row.name}.Execute`;
  return `<${element} xmlns="${row.namespace}"><Entrada>${escapeXmlText(xml)}</Entrada></${element}>`;
}

const operations: Partial<Record<AbrasfOperation, OperationOverride>> = {
  ...notOffered('emitAsyncBatch', 'emitSingle', 'queryRange', 'replace'),
};
const files: NonNullable<AbrasfProviderConfig['operationFiles']>['files'] = {};
for (const [operation, row] of Object.entries(OPERATIONS) as [
  AbrasfOperation,
  (typeof OPERATIONS)[AbrasfOperation],
][]) {
  if (!row) continue;
  operations[operation] = {
    soapAction: row.action.replace('{H}', ''),
    homologationSoapAction: row.action.replace('{H}', 'H'),
  };
  files[operation] = { production: `a${row.file}`, homologation: `ah${row.file}` };
}

const base = baselineConfig({
  provider: 'Sistemas4R',
  version: '2.00',
  schema: 'abrasf200',
  sources: 'ACBr Sistemas4R.Provider.pas (TACBrNFSeProvider4R200); ABRASF nfse v2.00 XSD',
});

export const SISTEMAS4R_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { ...base.soap, namespace: 'Abrasf2', soapAction: '' },
  body: { style: 'bareMessage', encoding: 'raw', cabecalho: false, credentials: false },
  formats: { ...base.formats, lineBreak: '<br>' },
  emission: 'emitSyncBatch',
  hooks: { message: sistemas4rMessage },
  operations,
  operationFiles: { segment: '^ah?[a-z]+\\.aspx$', files },
};
