import type { AbrasfProviderConfig } from '../config.ts';

/**
 * WebISS 2.02 (briefs/providers-abrasf.md §3; nfse.asmx-v202.wsdl, nfse_v202.xsd byte-identical to ABRASF 2.02):
 * 62 cities at `https://<city>.webiss.com.br/ws/nfse.asmx`, the textbook official WSDL.
 * - `<Op>Request{nfseCabecMsg, nfseDadosMsg}` (unqualified strings) in `http://nfse.abrasf.org.br`, SOAPAction
 *   `http://nfse.abrasf.org.br/<Op>`, answer `<Op>Response/outputXML` (escaped string). SOAP 1.1 with escaped
 *   strings as ACBr sends (OpenAC's SOAP 1.2 + CDATA also works live; the sandbox accepts both).
 * - signatures: RPS, lote, cancellation; client certificate on TLS (auth `mtls`).
 * Conservative readings: GerarNfse (synchronous) by default; the asynchronous lote (RecepcionarLoteRps +
 * ConsultarLoteRps) is `WEBISS_ASYNC_CONFIG`, the same provider in its lote mode. Aliquota as a percentage and
 * ItemListaServico `01.05` (ACBr's ABRASF v2 defaults; nothing provider-specific found). Line breaks kept as is.
 */
export const WEBISS_CONFIG: AbrasfProviderConfig = {
  provider: 'WebISS',
  version: '2.02',
  schema: 'abrasf202',
  sources: 'webiss/nfse.asmx-v202.wsdl; OpenAC WebISS/2.02/nfse.xsd; ACBr WebISS.Provider.pas',
  soap: {
    version: '1.1',
    namespace: 'http://nfse.abrasf.org.br',
    operationCase: 'pascal',
    soapAction: 'http://nfse.abrasf.org.br/{op}',
  },
  body: { style: 'abrasfRequest', encoding: 'escaped', cabecalho: true, credentials: false },
  dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
  auth: 'mtls',
  signature: { rps: true, lote: true, cancel: true },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};

/** WebISS through its asynchronous lote (RecepcionarLoteRps → Protocolo → ConsultarLoteRps). */
export const WEBISS_ASYNC_CONFIG: AbrasfProviderConfig = { ...WEBISS_CONFIG, emission: 'emitAsyncBatch' };
