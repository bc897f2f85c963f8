import type { AbrasfProviderConfig } from '../config.ts';

/**
 * Fiorilli IssWeb (briefs/providers-abrasf.md §1; IssWebWS.wsdl, nfse_v201 XSDs, vendor manual; ACBr and OpenAC
 * clients): 379 cities on ABRASF "2.00", which is the 2.01 schema.
 * - JAX-WS, tns `http://ws.issweb.fiorilli.com.br/`, camelCase operations (`gerarNfse`), SOAPAction = the bare
 *   operation name; the ABRASF message inline in the operation element, then unqualified `username`/`password`
 *   (the taxpayer's portal credentials: the project's basicAuthUsuario/basicAuthSenha); no cabecalho.
 * - answers inline (`ns2:gerarNfseResponse/GerarNfseResposta`).
 * - signatures: RPS, lote, cancellation (nfselib's XSD makes them mandatory; we validate against it).
 * - ItemListaServico `01.05`; Aliquota as a percentage (manual's test data: `Aliquota 2`); line break `\s\n`.
 * - 313 of 374 endpoints are plain http: no client certificate is relied on (auth `body-credentials`).
 * Conservative readings: GerarNfse (synchronous, one RPS, no lote signature) rather than ACBr's default
 * RecepcionarLoteRpsSincrono, both being in the WSDL; the registry's provider-level homologation URL is Fiorilli's
 * national service (IssWebWSNacional), rewritten to the ABRASF one of the WSDL.
 */
export const FIORILLI_CONFIG: AbrasfProviderConfig = {
  provider: 'Fiorilli',
  version: '2.01',
  schema: 'abrasf201Fiorilli',
  sources: 'IssWebWS.wsdl; akretion/nfselib FIORILLI/nfse_v201.xsd; ACBr Fiorilli.Provider.pas; OpenAC Fiorilli',
  soap: { version: '1.1', namespace: 'http://ws.issweb.fiorilli.com.br/', operationCase: 'camel', soapAction: '{op}' },
  body: { style: 'inlineInOp', encoding: 'raw', cabecalho: false, credentials: true },
  dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
  auth: 'body-credentials',
  signature: { rps: true, lote: true, cancel: true },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\\s\\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  endpointRewrites: [{ from: '/IssWebWSNacional/IssWebWSNacionalPortType', to: '/IssWebWS/IssWebWS' }],
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};
