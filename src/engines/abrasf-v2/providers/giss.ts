import type { AbrasfProviderConfig } from '../config.ts';

const GISS = 'http://www.giss.com.br';
const v204 = (message: string) => `${GISS}/${message}-v2_04.xsd`;

/**
 * GISS Online (Eicon) on ABRASF 2.04 (briefs/providers-abrasf.md §5; giss/schemas 2026-08; Manual Técnico Serviços
 * Prestados v1.6; caioagiani/gissonline-nfse, tested against live hosts [GISS-live]; ACBr Giss, OpenAC): 23 cities
 * (Maceió, Santos, Jundiaí…) at `https://ws-<slug>.giss.com.br/service-ws/nf/nfse-ws` (registry endpoints).
 * - `<Op>Request{nfseCabecMsg, nfseDadosMsg}` in `http://nfse.abrasf.org.br`, escaped strings [GISS-live] (CDATA in
 *   OpenAC), SOAPAction `"http://nfse.abrasf.org.br/<Op>"` (the kit quotes it), answer `outputXML`; real mTLS.
 * - split namespaces: each message root in `http://www.giss.com.br/<message>-v2_04.xsd`, the types in
 *   `tipos-v2_04.xsd` (LoteRps, Prestador, Faixa… are the message's; what is below them the types'); the header in
 *   `cabecalho-v2_04.xsd` with `versao="2.04"` (OpenAC's "2.00" is not checked here).
 * - Aliquota as a fraction (tsAliquota 5 digits, 4 decimals: 3.07 % → 0.0307; ACBr `Dividir100`).
 * - signatures [GISS-live]: every RPS (#Id) and the lote (#Id: `URI=""` invalidates the RPS, E174), the
 *   cancellation (InfPedidoCancelamento), and the queries at the root with `URI=""` (ConsultarLoteRps included).
 * - only RecepcionarLoteRps issues: GerarNfse and RecepcionarLoteRpsSincrono answer A01 (marked unsupported).
 * - 50 RPS per lote, 50 NFS-e per query page (manual).
 * - reform: Valores/IBSCBS (cIndOp, CST, cClassTrib, incidence locality) and CodigoNbs when the invoice has an IBS/CBS
 *   framing (reform.ts); Valores/trib (PIS/COFINS detail, totTrib) and comExt are optional and not sent.
 * Conservative readings: escaped strings; pRedutor 0.00; the cancellation carries no CodigoVerificacao (absent from
 * tcIdentificacaoNfse of tipos-v2_04.xsd).
 */
export const GISS_CONFIG: AbrasfProviderConfig = {
  provider: 'Giss',
  version: '2.04',
  schema: 'abrasf204Giss',
  sources: 'giss/schemas (2026-08), Manual Técnico v1.6, caioagiani/gissonline-nfse [GISS-live], ACBr Giss, OpenAC',
  soap: {
    version: '1.1',
    namespace: 'http://nfse.abrasf.org.br',
    operationCase: 'pascal',
    soapAction: 'http://nfse.abrasf.org.br/{op}',
  },
  body: { style: 'abrasfRequest', encoding: 'escaped', cabecalho: true, credentials: false },
  dataNamespace: v204('tipos'),
  namespaces: {
    messages: {
      EnviarLoteRpsEnvio: v204('enviar-lote-rps-envio'),
      EnviarLoteRpsSincronoEnvio: v204('enviar-lote-rps-sincrono-envio'),
      GerarNfseEnvio: v204('gerar-nfse-envio'),
      ConsultarLoteRpsEnvio: v204('consultar-lote-rps-envio'),
      ConsultarNfseRpsEnvio: v204('consultar-nfse-rps-envio'),
      ConsultarNfseFaixaEnvio: v204('consultar-nfse-faixa-envio'),
      CancelarNfseEnvio: v204('cancelar-nfse-envio'),
      SubstituirNfseEnvio: v204('substituir-nfse-envio'),
    },
    cabecalho: v204('cabecalho'),
    localGroups: ['Faixa'],
  },
  auth: 'mtls',
  signature: { rps: true, lote: true, cancel: true, queries: true, pollQuery: true },
  formats: { aliquota: 'fraction', itemListaServico: 'dotted', lineBreak: '\n', ibscbs: 'valores' },
  emission: 'emitAsyncBatch',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  operations: { emitSingle: { supported: false }, emitSyncBatch: { supported: false } },
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'async', pdf: 'none', homologation: true },
};
