import type { SendContext } from '../../kit/family.ts';
import type { AbrasfOperation, AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * NEA Informática (Bela Vista and Brasilândia/MS at `http://nfse.<city>.ms.gov.br/<app>/ServicoWeb`, homologation
 * `…_homolog/ServicoWeb`: the registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr creates
 * TACBrNFSeProviderNEAInformatica200). Public facts (ACBr `NEAInformatica.Provider.pas`,
 * TACBrNFSeXWebserviceNEAInformatica200 / TACBrNFSeProviderNEAInformatica200):
 * - SOAP 1.1, SOAPAction ""; the official operation element (`<nfse:GerarNfse xmlns:nfse="http://nfse.abrasf.org.br">`)
 *   holding one unqualified parameter named `<Op>Envio` after the operation (`GerarNfseEnvio`, `EnviarLoteRpsEnvio`,
 *   `ConsultarLoteRpsEnvio`, `ConsultarNfsePorRpsEnvio`, `ConsultarNfsePorFaixaEnvio`, `CancelarNfseEnvio`, …) with the
 *   message in CDATA; no cabecalho; answers in `outputXML`;
 * - ABRASF 2.00 (the registry's layout of both cities) in `http://www.abrasf.org.br/nfse.xsd`; the RPS (also in
 *   GerarNfse), the lote and the cancellation signed; line break `|` (QuebradeLinha).
 * Readings: the official nfse v2.00 XSD and the base's 2.00 layout (the RPS signed on its Rps@Id); GerarNfse
 * synchronous; the endpoints are plain http: no client certificate is relied on (auth `signature`).
 */
const PARAMETERS: Record<AbrasfOperation, [operation: string, parameter: string]> = {
  emitAsyncBatch: ['RecepcionarLoteRps', 'EnviarLoteRpsEnvio'],
  emitSyncBatch: ['RecepcionarLoteRpsSincrono', 'EnviarLoteRpsSincronoEnvio'],
  emitSingle: ['GerarNfse', 'GerarNfseEnvio'],
  queryBatch: ['ConsultarLoteRps', 'ConsultarLoteRpsEnvio'],
  queryByRps: ['ConsultarNfsePorRps', 'ConsultarNfsePorRpsEnvio'],
  queryRange: ['ConsultarNfsePorFaixa', 'ConsultarNfsePorFaixaEnvio'],
  cancel: ['CancelarNfse', 'CancelarNfseEnvio'],
  replace: ['SubstituirNfse', 'SubstituirNfseEnvio'],
};

/** `<nfse:<Op>><<Op>Envio><![CDATA[message]]></…>` (the signed message kept byte for byte). */
function neaMessage(operation: AbrasfOperation, xml: string, context: SendContext | null): string {
  if (!context) return xml;
  const [op, parameter] = PARAMETERS[operation];
  const cdata = `<![CDATA[${xml.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`;
  return `<nfse:${op} xmlns:nfse="http://nfse.abrasf.org.br"><${parameter}>${cdata}</${parameter}></nfse:${op}>`;
}

export const NEAINFORMATICA_CONFIG: AbrasfProviderConfig = {
  ...baselineConfig({
    provider: 'NEAInformatica',
    version: '2.00',
    schema: 'abrasf200',
    sources: 'ACBr NEAInformatica.Provider.pas (TACBrNFSeProviderNEAInformatica200); ABRASF nfse v2.00 XSD',
  }),
  soap: { version: '1.1', namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal', soapAction: '' },
  body: { style: 'bareMessage', encoding: 'raw', cabecalho: false, credentials: false },
  auth: 'signature',
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '|' },
  hooks: { message: neaMessage },
};
