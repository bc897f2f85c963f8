import { escapeXmlText } from '../../../xml/escape.ts';
import type { PrepareInput } from '../../types.ts';
import type { AbrasfProviderConfig } from '../config.ts';
import { buildRps } from '../messages.ts';

/**
 * Futurize 2.02 (briefs/providers-abrasf.md §7; no WSDL or XSD published: ACBr `Futurize.Provider.pas` and
 * `Futurize.GravarXml.pas` only): 111 small cities (MG, PA) at `https://<city>.nfse-futurize.com.br/webservice/prod`,
 * homologation `…/webservice/homo` for every city.
 * - SOAP 1.1 `<nfse:<Op>Request>{nfseCabecMsg, nfseDadosMsg}` in `http://nfse.abrasf.org.br`, strings escaped
 *   (ACBr `XmlToStr`), SOAPAction `http://nfse.abrasf.org.br/<Op>`; answer `outputXML`, possibly CDATA-wrapped
 *   (ACBr `RemoverCDATA`; the reader takes both).
 * - no TLS client certificate (`UseCertificateHTTP := False`: auth `signature`); signs the RPS, the RPS of GerarNfse
 *   and the cancellation, not the lote (`ConfigAssinar`).
 * - RecepcionarLoteRpsSincrono carries root `EnviarLoteRpsEnvio` (ACBr: "with EnviarLoteRpsSincronoEnvio the web
 *   service says the method is unavailable") and is answered as `EnviarLoteRpsResposta`.
 * - reform-era Servico (GerarServico): no ItemListaServico; `CTribNac` (6 digits, required, the national code) and
 *   `cNBS` (≤ 9, required) after NumeroProcesso; validated against schemas/abrasf/nfse_v202-futurize.xsd, derived.
 * Conservative readings: GerarNfse (synchronous, one RPS) as the emission, as for the other 2.02 providers; the
 * cabecalho in the ABRASF namespace (ACBr's `GetCabecalho('')` writes it without; both are well-formed strings);
 * an invoice without a final NBS is refused before a number is spent (cNBS is required).
 */
function buildFuturizeRps(config: AbrasfProviderConfig, input: PrepareInput): { id: string; xml: string } {
  const official = buildRps(config, input);
  const { cTribNac, nbs } = input.invoice.servico;
  const reform =
    `<CTribNac>${escapeXmlText(cTribNac.replace(/\D/g, ''))}</CTribNac>` +
    (nbs ? `<cNBS>${escapeXmlText(nbs.replace(/\D/g, ''))}</cNBS>` : '');
  const xml = official.xml
    .replace(/<ItemListaServico>[^<]*<\/ItemListaServico>/, '')
    .replace('</Servico>', `${reform}</Servico>`);
  return { id: official.id, xml };
}

export const FUTURIZE_CONFIG: AbrasfProviderConfig = {
  provider: 'Futurize',
  version: '2.02',
  schema: 'abrasf202Futurize',
  sources: 'ACBr Futurize.Provider.pas and Futurize.GravarXml.pas (no WSDL/XSD published); ABRASF nfse_v202.xsd',
  soap: {
    version: '1.1',
    namespace: 'http://nfse.abrasf.org.br',
    operationCase: 'pascal',
    soapAction: 'http://nfse.abrasf.org.br/{op}',
  },
  body: { style: 'abrasfRequest', encoding: 'escaped', cabecalho: true, credentials: false },
  dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
  auth: 'signature',
  signature: { rps: true, lote: false, cancel: true },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  operations: {
    emitSyncBatch: { requestRoot: 'EnviarLoteRpsEnvio', responseRoots: ['EnviarLoteRpsResposta'] },
  },
  check: (_project, invoice) =>
    invoice.servico.nbs ? [] : [{ field: 'servico.nbs', message: 'Futurize requires cNBS (the final NBS code)' }],
  hooks: { buildRps: buildFuturizeRps },
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};
