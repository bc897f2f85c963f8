import type { NormalizedInvoice } from '../../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../../domain/project-profile.ts';
import type { AbrasfProviderConfig } from '../config.ts';

/**
 * ISSNet (Nota Control) ABRASF 2.04 (briefs/providers-abrasf.md §2; OpenAC ISSNet/2.04/nfse.xsd; ACBr
 * ISSNet.Provider.pas; OpenAC ISSNet ServiceClient): 14 cities on `https://nfse.issnetonline.com.br/abrasf204/<city>/
 * nfse.asmx` (Brasília, Goiânia, Cuiabá, Ribeirão Preto, …), shared homologation `…/homologaabrasf/webservicenfse204`.
 * - ASP.NET asmx, SOAP 1.1: the operation element itself wraps `nfseCabecMsg`/`nfseDadosMsg` (`<nfse:GerarNfse>`,
 *   not `<GerarNfseRequest>`), SOAPAction `http://nfse.abrasf.org.br/<Op>`; the answer in `<Op>Response/<Op>Result`.
 *   The strings travel as raw child XML, as ACBr and OpenAC send them (a DF integrator escapes them; the sandbox
 *   accepts both).
 * - XSD: the query messages (by RPS, by range) wrap their content in `Pedido`, followed by an optional Signature;
 *   `tsItemListaServico` is free text (max. 5).
 * - signatures: RPS, lote, cancellation and every query but ConsultarLoteRps, all with `Reference URI=""` (ACBr
 *   `IncluirURI := False`): each over the element that holds the Signature, signed as a document of its own.
 * - cabecalho `versao="2.04"` as OpenAC and the DF integrator send (ACBr writes 1.00; both work live).
 * - line break `\s\n` (ACBr). Client certificate on TLS (auth `mtls`).
 * Conservative readings: GerarNfse (synchronous) by default; raw strings; Brasília (DF, 5300108) requires what
 * spec 4.8 lists for it (a municipal service code, the taker's address, and the taker's municipal registration when
 * the ISS is withheld) and the CNAE (spec 2.1: the registry's `projectFields`; also required on the invoice side).
 */
export const BRASILIA = '5300108';

function issnetCheck(project: ProjectFiscalProfile, invoice: NormalizedInvoice): { field: string; message: string }[] {
  if (project.codigoMunicipio !== BRASILIA) return [];
  const errors: { field: string; message: string }[] = [];
  const where = 'required by ISSNet Brasília (spec 4.8)';
  if (!(invoice.servico.cnae ?? project.cnae)) errors.push({ field: 'servico.cnae', message: `${where}: CNAE` });
  if (!invoice.servico.codigoTributacaoMunicipal) {
    errors.push({ field: 'servico.codigoTributacaoMunicipal', message: where });
  }
  if (!invoice.tomador.endereco?.nacional) errors.push({ field: 'tomador.endereco', message: where });
  if (invoice.iss.retido && !invoice.tomador.inscricaoMunicipal) {
    errors.push({ field: 'tomador.inscricaoMunicipal', message: `${where} when the ISS is withheld by the taker` });
  }
  return errors;
}

export const ISSNET_CONFIG: AbrasfProviderConfig = {
  provider: 'ISSNet',
  version: '2.04',
  schema: 'abrasf204Issnet',
  sources: 'OpenAC ISSNet/2.04/nfse.xsd; ACBr ISSNet.Provider.pas; OpenAC ISSNetServiceClient; DF integrator notes',
  soap: {
    version: '1.1',
    namespace: 'http://nfse.abrasf.org.br',
    operationCase: 'pascal',
    soapAction: 'http://nfse.abrasf.org.br/{op}',
  },
  body: { style: 'opParams', encoding: 'raw', cabecalho: true, credentials: false },
  dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
  auth: 'mtls',
  signature: { rps: true, lote: true, cancel: true, reference: 'document', queries: true },
  queryWrapper: 'Pedido',
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\\s\\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  // the official 2.04 name of the range query is ConsultarNfsePorFaixa; ISSNet's answer element is `<Op>Result`
  check: issnetCheck,
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};

/** ISSNet through its asynchronous lote (RecepcionarLoteRps → Protocolo → ConsultarLoteRps). */
export const ISSNET_ASYNC_CONFIG: AbrasfProviderConfig = { ...ISSNET_CONFIG, emission: 'emitAsyncBatch' };
