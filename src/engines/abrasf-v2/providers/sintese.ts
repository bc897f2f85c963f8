import type { AbrasfOperation, AbrasfProviderConfig, OperationOverride } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Sintese (nfsews; 63 cities in MG at `https://<city>.sintesenotafiscal.com.br/nfsews/NfseWS`, homologation
 * `https://homologacao.sintesetecnologia.com.br/nfsews/NfseWS`: the registry, from ACBr's ACBrNFSeXServicos.ini).
 * Public facts (ACBr `Sintese.Provider.pas`, TACBrNFSeProviderSintese204; `Sintese.GravarXml.pas`):
 * - SOAP 1.1; the operation element is named after the message root (`<nfse:GerarNfseEnvio>`, `<nfse:ConsultarNfseRpsEnvio>`,
 *   …) in `http://nfse.abrasf.org.br`, holding the unqualified strings nfseCabecMsg/nfseDadosMsg (escaped);
 *   SOAPAction `http://nfsews.sintesetecnologia.com.br/<Op>` with Op RecepcionarLoteRps, RecepcionarLoteRpsSincrono,
 *   GerarNfse, ConsultarLoteRps, ConsultarNfseRps, ConsultarNfseFaixa, CancelarNfse, SubstituirNfse; answers in
 *   `outputXML`;
 * - ABRASF 2.04 (`versao` 2.04, the lote's Prestador group), data in `http://www.abrasf.org.br/nfse.xsd`; RPS, lote,
 *   GerarNfse's RPS and cancellation signed; the writer is the official 2.04 one (TomadorServico, no CodigoPais).
 * Readings: the official nfse_v204.xsd; GerarNfse synchronous; client certificate on TLS (the registry's auth `mtls`);
 * the default SOAPAction base (ACBr's, when the city configures none: the registry has none per city).
 */
const ACTION = 'http://nfsews.sintesetecnologia.com.br/';
const row = (requestRoot: string, action: string): OperationOverride => ({
  soapOperation: requestRoot,
  soapAction: `${ACTION}${action}`,
});

const OPERATIONS: Partial<Record<AbrasfOperation, OperationOverride>> = {
  emitAsyncBatch: row('EnviarLoteRpsEnvio', 'RecepcionarLoteRps'),
  emitSyncBatch: row('EnviarLoteRpsSincronoEnvio', 'RecepcionarLoteRpsSincrono'),
  emitSingle: row('GerarNfseEnvio', 'GerarNfse'),
  queryBatch: row('ConsultarLoteRpsEnvio', 'ConsultarLoteRps'),
  queryByRps: row('ConsultarNfseRpsEnvio', 'ConsultarNfseRps'),
  queryRange: row('ConsultarNfseFaixaEnvio', 'ConsultarNfseFaixa'),
  cancel: row('CancelarNfseEnvio', 'CancelarNfse'),
  replace: row('SubstituirNfseEnvio', 'SubstituirNfse'),
};

export const SINTESE_CONFIG: AbrasfProviderConfig = {
  ...baselineConfig({
    provider: 'Sintese',
    version: '2.04',
    schema: 'abrasf204',
    sources: 'ACBr Sintese.Provider.pas (TACBrNFSeProviderSintese204), Sintese.GravarXml.pas; ABRASF nfse_v204.xsd',
  }),
  body: { style: 'opParams', encoding: 'escaped', cabecalho: true, credentials: false },
  operations: OPERATIONS,
};
