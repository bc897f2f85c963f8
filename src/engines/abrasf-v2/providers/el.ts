import type { AbrasfProviderConfig } from '../config.ts';

/**
 * EL (E&L Produções) on ABRASF 2.04 (briefs/providers-abrasf.md §4; ACBr EL.Provider.pas and an independent PHP
 * client agree; no WSDL of `NfseWSService` was found, §13.1): 81 cities on 2.04 at
 * `https://<uf>-<city>-pm-nfs-backend.cloud.el.com.br/…/NfseWSService` or a city domain (registry endpoints).
 * - JAX-WS double wrapper: `<nfse:<Op>><nfse:<Op>Request><nfseCabecMsg><![CDATA[…]]></nfseCabecMsg>
 *   <nfseDadosMsg><![CDATA[…]]></nfseDadosMsg></nfse:<Op>Request></nfse:<Op>>` with `xmlns:nfse` =
 *   `http://nfse.abrasf.org.br`, for all ten operations; SOAPAction `http://nfse.abrasf.org.br/<Op>` (ACBr; the PHP
 *   client's "" also works); answer `<Op>Response/outputXML` (escaped).
 * - data: the plain ABRASF 2.04 namespace and XSD (nfse_v204.xsd), `versao`/`versaoDados` 2.04, LoteRps/Prestador.
 * - signatures: RPS and lote only (ACBr does not sign the cancellation); client certificate on TLS (auth `mtls`).
 * Conservative readings: GerarNfse (synchronous) by default, `EL_ASYNC_CONFIG` for the lote; the cancellation is
 * sent unsigned as ACBr does (§13.9: whether EL requires it is unknown; the 2.04 XSD makes it optional); Aliquota
 * as a percentage and ItemListaServico `01.05` (ABRASF defaults, nothing EL-specific found). Practically no
 * homologation exists (Petrolina only): the registry's production URLs are used as given.
 */
export const EL_CONFIG: AbrasfProviderConfig = {
  provider: 'EL',
  version: '2.04',
  schema: 'abrasf204',
  sources: 'briefs/providers-abrasf.md §4; ACBr EL.Provider.pas (EL204); PHP client (SOAPAction ""); nfse_v204.xsd',
  soap: {
    version: '1.1',
    namespace: 'http://nfse.abrasf.org.br',
    operationCase: 'pascal',
    soapAction: 'http://nfse.abrasf.org.br/{op}',
  },
  body: { style: 'doubleWrap', encoding: 'cdata', cabecalho: true, credentials: false },
  dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
  auth: 'mtls',
  signature: { rps: true, lote: true, cancel: false },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: false },
};

/** EL through its asynchronous lote (RecepcionarLoteRps → Protocolo → ConsultarLoteRps). */
export const EL_ASYNC_CONFIG: AbrasfProviderConfig = { ...EL_CONFIG, emission: 'emitAsyncBatch' };
