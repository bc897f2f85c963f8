import { ABRASF_V2_OPERATIONS, type AbrasfSandboxProfile } from './profiles.ts';

const GISS = 'http://www.giss.com.br';
const v204 = (message: string) => `${GISS}/${message}-v2_04.xsd`;

/**
 * GISS Online ABRASF 2.04 (briefs/providers-abrasf.md §5; giss/schemas 2026-08, their targetNamespaces; Manual
 * Técnico v1.6; Erros_e_Alertas.xlsx; the live findings of caioagiani/gissonline-nfse): `<Op>Request{nfseCabecMsg,
 * nfseDadosMsg}` (escaped or CDATA strings) in `http://nfse.abrasf.org.br`, answer `outputXML`; every request and
 * answer root in its own `http://www.giss.com.br/<message>-v2_04.xsd` namespace, the types in `tipos-v2_04.xsd`
 * (the answers' ListaMensagemRetorno/CompNfse are references to tipos; the cancellation answer's namespace is
 * `cancelar-nfse-resposta` although its file is `…-reposta`); validated against the GISS request schemas.
 * Signatures as proven live: every RPS (E174 unsigned), the lote on LoteRps@Id (a `URI=""` lote signature is not an
 * Id reference: E325), the cancellation, and every query at its root (`URI=""`), ConsultarLoteRps included (E172).
 * Only RecepcionarLoteRps issues: GerarNfse and RecepcionarLoteRpsSincrono answer A01 even for correct XML.
 * Real mTLS (E182 without a client certificate). 50 RPS per lote, 50 NFS-e per page.
 * Readings (strict): the header must be the GISS cabecalho (its XSD); queries must be signed by the prestador.
 */
const A01 = { codigo: 'A01', mensagem: 'Não foi possível atender a solicitação' };

export const GISS_PROFILE: AbrasfSandboxProfile = {
  provider: 'Giss',
  engine: 'abrasf-v2:giss',
  slug: 'abrasf-giss',
  family: 'abrasf-v2-giss',
  version: '2.04',
  schema: 'abrasf204Giss',
  dataNamespace: v204('tipos'),
  namespaces: {
    messages: {
      EnviarLoteRpsResposta: v204('enviar-lote-rps-resposta'),
      EnviarLoteRpsSincronoResposta: v204('enviar-lote-rps-sincrono-resposta'),
      GerarNfseResposta: v204('gerar-nfse-resposta'),
      ConsultarLoteRpsResposta: v204('consultar-lote-rps-resposta'),
      ConsultarNfseRpsResposta: v204('consultar-nfse-rps-resposta'),
      ConsultarNfseFaixaResposta: v204('consultar-nfse-faixa-resposta'),
      CancelarNfseResposta: v204('cancelar-nfse-resposta'),
    },
    types: v204('tipos'),
    localGroups: ['ListaNfse'],
    typeRefs: ['ListaMensagemRetorno', 'ListaMensagemRetornoLote', 'ListaMensagemAlertaRetorno', 'CompNfse'],
  },
  soap: { namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal' },
  request: 'strings',
  stringsWrapper: 'request',
  response: 'outputXML',
  operations: ABRASF_V2_OPERATIONS,
  refusedOperations: { GerarNfse: A01, RecepcionarLoteRpsSincrono: A01 },
  aliquota: 'fraction',
  // GISS processes lotes later (errors only show at ConsultarLoteRps): the first poll (2 s) still sees E178
  holdMs: 3_000,
  signature: { rps: true, lote: true, cancel: true, queries: true, pollQuery: true },
  clientCertificate: true,
  bodyCredentials: false,
  limits: { queryPage: 50, rpsPerLote: 50 },
};
