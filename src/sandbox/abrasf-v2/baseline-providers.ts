import { baselineProfile } from './baseline.ts';
import { DSF_PROFILE } from './dsf.ts';
import { operationsWithout, withFaixaQuery, type AbrasfSandboxProfile } from './profiles.ts';

/**
 * Sandbox profiles of providers on a contract another profile already describes (official data only: operation
 * names, namespaces, XSDs, who signs what; sources in the engine's provider files).
 */

/**
 * GestaoISS (ACBr GestaoISS.Provider.pas: the official 2.02 message set, as WebISS's nfse.asmx): the ten official
 * operations, `outputXML` answers, the official nfse_v202.xsd, RPS/lote/cancellation signed, the client certificate
 * required (E182).
 */
export const GESTAOISS_PROFILE = baselineProfile({ provider: 'GestaoISS', version: '2.02', schema: 'abrasf202' });

/**
 * ISSCamacari (ACBr ISSCamacari.Provider.pas: the official 2.01 message set): the ten official operations,
 * `outputXML` answers, the official nfse_v201.xsd, RPS/lote/cancellation signed, the client certificate required.
 */
export const ISSCAMACARI_PROFILE = baselineProfile({ provider: 'ISSCamacari', version: '2.01', schema: 'abrasf201' });

/**
 * Tiplan's ABRASF 2.03 cities (ACBr Tiplan.Provider.pas, TACBrNFSeProviderTiplan203): the official message set with
 * the operation namespace `http://nfse.abrasf.org.br/` (trailing slash), `outputXML` answers, the official
 * nfse_v203.xsd, RPS/lote/cancellation signed, the client certificate required.
 */
export const TIPLAN_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Tiplan', version: '2.03', schema: 'abrasf203' }),
  soap: { namespace: 'http://nfse.abrasf.org.br/', operationCase: 'pascal' },
};

/**
 * Desenvolve (ACBr Desenvolve.Provider.pas, TACBrNFSeProviderDesenvolve203): the operation element is the message
 * root in camel case in `http://ws.integracao.nfsd.desenvolve/` holding the message as the escaped string `<xml>`, no
 * cabecalho; nfse_v203.xsd with the queries' Signature (derived, schemas/README.md); RPS, lote, cancellation and the queries (ConsultarLoteRps included, at their
 * root) signed; no client certificate. Answers as an escaped string (ACBr reads `return`; the sandbox writes its
 * `<Op>Result` string idiom, which the engine reads the same way).
 */
export const DESENVOLVE_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Desenvolve', version: '2.03', schema: 'abrasf203Desenvolve' }),
  soap: { namespace: 'http://ws.integracao.nfsd.desenvolve/', operationCase: 'camel' },
  request: 'inline',
  stringParameter: 'xml',
  response: 'result',
  operations: [
    'EnviarLoteRpsEnvio',
    'EnviarLoteRpsSincronoEnvio',
    'GerarNfseEnvio',
    'ConsultarLoteRpsEnvio',
    'ConsultarNfseRpsEnvio',
    'CancelarNfseEnvio',
  ],
  operationNames: {
    EnviarLoteRpsEnvio: 'RecepcionarLoteRps',
    EnviarLoteRpsSincronoEnvio: 'RecepcionarLoteRpsSincrono',
    GerarNfseEnvio: 'GerarNfse',
    ConsultarLoteRpsEnvio: 'ConsultarLoteRps',
    ConsultarNfseRpsEnvio: 'ConsultarNfsePorRps',
    CancelarNfseEnvio: 'CancelarNfse',
  },
  signature: { rps: true, lote: true, cancel: true, queries: true, pollQuery: true },
  clientCertificate: false,
};

/** A provider name on the DSF 2.03 platform (`notafiscal-abrasfv203-ws`): DSF's contract under its own key. */
function dsfPlatform(provider: string): AbrasfSandboxProfile {
  const key = provider.toLowerCase();
  return { ...DSF_PROFILE, provider, engine: `abrasf-v2:${key}`, slug: `abrasf-${key}`, family: `abrasf-v2-${key}` };
}

/**
 * ISSCampinas (Campinas) and ISSDSF (Campo Grande): ACBr's ISSCampinas203 and ISSDSF203 units speak DSF's 2.03
 * contract (message inline in `<nfse:<Op>>`, no namespace, SOAPAction "", ConsultarNfseFaixa, every query signed):
 * DSF's profile (dsf.ts) with its XSD, signatures and client certificate checks.
 */
export const ISSCAMPINAS_PROFILE = dsfPlatform('ISSCampinas');
export const ISSDSF_PROFILE = dsfPlatform('ISSDSF');

/**
 * eReceita (ACBr eReceita.Provider.pas, TACBrNFSeProvidereReceita202): the official 2.02 message set as
 * `<nfs:<Op>Request>{nfs:nfseCabecMsg, nfs:nfseDadosMsg}` (escaped strings), the range query named
 * `ConsultarNfseFaixa`, no ConsultarNfseServicoPrestado/Tomado; the SOAPAction `https://www.ereceita.net.br/<Op>` in
 * production and `https://www3.ereceita.net.br/<Op>` in homologation (a SOAP Client fault otherwise); `outputXML`
 * answers in the homologation namespace; the official nfse_v202.xsd; RPS, lote and cancellation signed; no client
 * certificate.
 */
export const ERECEITA_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'eReceita', version: '2.02', schema: 'abrasf202' }),
  soap: { namespace: 'http://www3.ereceita.net.br/soap/NfseWebService', operationCase: 'pascal' },
  ...withFaixaQuery(operationsWithout('ConsultarNfseServicoPrestado', 'ConsultarNfseServicoTomado')),
  soapActionByEnvironment: {
    production: 'https://www.ereceita.net.br/',
    homologation: 'https://www3.ereceita.net.br/',
  },
  clientCertificate: false,
};

/**
 * Sudoeste (ACBr Sudoeste.Provider.pas, TACBrNFSeProviderSudoeste202): an Axis service, `<def:<Op>>` in
 * `http://DefaultNamespace` holding the escaped strings `Nfsecabecmsg`/`Nfsedadosmsg` (only that wrapper and those
 * names are read), answers as the `<Op>Return` string with errors as `Erro{ErroID, ErroMensagem, ErroSolucao}`; the
 * official nfse_v202.xsd; RPS and lote signed; plain http (no client certificate). No CancelarNfse: its request
 * carries a MotivoCancelamento no public schema places.
 */
export const SUDOESTE_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Sudoeste', version: '2.02', schema: 'abrasf202' }),
  soap: { namespace: 'http://DefaultNamespace', operationCase: 'pascal' },
  stringsWrapper: 'operation',
  stringNames: { cabecalho: 'Nfsecabecmsg', dados: 'Nfsedadosmsg' },
  response: 'return',
  errorEntries: 'erro',
  operations: operationsWithout('CancelarNfse', 'SubstituirNfse'),
  aliquota: 'fraction',
  clientCertificate: false,
};
