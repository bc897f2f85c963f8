import type { NormalizedInvoice } from '../../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../../domain/project-profile.ts';
import type { AbrasfProviderConfig } from '../config.ts';

/**
 * DSF ABRASF 2.03 (briefs/providers-abrasf.md §9; OpenAC DSF/2.03/nfse.xsd; ACBr DSF.Provider.pas, OpenAC agrees):
 * Belém, Teresina, João Pessoa, São José dos Campos, Sorocaba at `https://<host>/notafiscal-abrasfv203-ws/
 * NotaFiscalSoap` (homologation per city; Belém has none in ACBr).
 * - SOAP 1.1, SOAPAction `""`; `<nfse:<Op> xmlns:nfse="http://nfse.abrasf.org.br">` with the message inline, no
 *   cabecalho, no nfseCabecMsg/nfseDadosMsg; the answer inline in `<Op>Response`.
 * - **no namespace**: the XSD has no targetNamespace (ACBr strips the ABRASF one).
 * - the range query is `ConsultarNfseFaixa` (not ConsultarNfsePorFaixa).
 * - signatures: RPS, lote, cancellation on `#Id`; every query (ConsultarLoteRps included) at its root, which has no
 *   Id: `URI=""`. Client certificate on TLS.
 * - `CodigoCnae` up to 9 digits (XSD totalDigits 9); line break `&#xD;&#xA;` (written `\r\n`: `&#xD;` + LF).
 * Readings: GerarNfse (synchronous) by default; the CNAE is required (GINFES-style: the 9-digit form of the invoice's
 * `servico.cnae` when given, else the project's 7-digit main CNAE, both valid for `xsd:int` totalDigits 9).
 */
function dsfCheck(project: ProjectFiscalProfile, invoice: NormalizedInvoice): { field: string; message: string }[] {
  return invoice.servico.cnae || project.cnae
    ? []
    : [{ field: 'servico.cnae', message: 'required by DSF (CodigoCnae, up to 9 digits): or set the project CNAE' }];
}

export const DSF_CONFIG: AbrasfProviderConfig = {
  provider: 'DSF',
  version: '2.03',
  schema: 'abrasf203Dsf',
  sources: 'OpenAC DSF/2.03/nfse.xsd; ACBr DSF.Provider.pas; OpenAC DSFServiceClient',
  soap: { version: '1.1', namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal', soapAction: '' },
  body: { style: 'inlineInOp', encoding: 'raw', cabecalho: false, credentials: false },
  dataNamespace: null,
  auth: 'mtls',
  signature: { rps: true, lote: true, cancel: true, queries: true, pollQuery: true },
  cnaeDigits: 9,
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\r\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  operations: { queryRange: { soapOperation: 'ConsultarNfseFaixa' } },
  check: dsfCheck,
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};

/** DSF through its asynchronous lote (RecepcionarLoteRps → Protocolo → ConsultarLoteRps, signed). */
export const DSF_ASYNC_CONFIG: AbrasfProviderConfig = { ...DSF_CONFIG, emission: 'emitAsyncBatch' };
