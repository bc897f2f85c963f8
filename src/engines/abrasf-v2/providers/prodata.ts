import type { PrepareInput } from '../../types.ts';
import type { AbrasfProviderConfig } from '../config.ts';
import { buildRps } from '../messages.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Prodata (prodataws; 9 cities in GO/TO at `https://<host>/prodataws/services/NfseWSService`, production only: the
 * registry, from ACBr's ACBrNFSeXServicos.ini). Public facts (ACBr `Prodata.Provider.pas`, TACBrNFSeProviderProdata201;
 * `Prodata.GravarXml.pas`):
 * - SOAP 1.1, the official `<Op>Request{nfseCabecMsg, nfseDadosMsg}` (escaped strings) but in the namespace
 *   `http://services.nfse`, SOAPAction `http://services.nfse/<Op>`, answers in `outputXML`;
 * - ABRASF 2.01 (`versao` 2.01), data in `http://www.abrasf.org.br/nfse.xsd`; RPS, lote and cancellation signed;
 *   ModoEnvio = asynchronous lote (RecepcionarLoteRps, then ConsultarLoteRps);
 * - the writer always writes ValorPis, ValorCofins, ValorInss, ValorIr, ValorCsll and Aliquota (0.00 when nil) and
 *   never ValorIss.
 * Readings: the official nfse_v201.xsd; the asynchronous lote as the emission (ACBr's ModoEnvio); the writer's
 * Valores as ACBr writes them (the hook below); client certificate on TLS (the registry's auth `mtls`).
 */
const ALWAYS = ['ValorPis', 'ValorCofins', 'ValorInss', 'ValorIr', 'ValorCsll'] as const;

/** The official RPS with Prodata's Valores: the five federal values and Aliquota always, no ValorIss. */
function prodataRps(config: AbrasfProviderConfig, input: PrepareInput): { id: string; xml: string } {
  const built = buildRps(config, input);
  const xml = built.xml.replace(/<Valores>([\s\S]*?)<\/Valores>/, (_all, inner: string) => {
    const value = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(inner)?.[1];
    const field = (name: string, fallback?: string) => {
      const v = value(name) ?? fallback;
      return v === undefined ? '' : `<${name}>${v}</${name}>`;
    };
    return (
      '<Valores>' +
      field('ValorServicos') +
      field('ValorDeducoes') +
      ALWAYS.map((name) => field(name, '0.00')).join('') +
      field('OutrasRetencoes') +
      field('Aliquota', '0.00') +
      inner.slice(inner.search(/<IBSCBS>|$/)) +
      '</Valores>'
    );
  });
  return { id: built.id, xml };
}

export const PRODATA_CONFIG: AbrasfProviderConfig = {
  ...baselineConfig({
    provider: 'Prodata',
    version: '2.01',
    schema: 'abrasf201',
    sources: 'ACBr Prodata.Provider.pas (TACBrNFSeProviderProdata201), Prodata.GravarXml.pas; ABRASF nfse_v201.xsd',
  }),
  soap: {
    version: '1.1',
    namespace: 'http://services.nfse',
    operationCase: 'pascal',
    soapAction: 'http://services.nfse/{op}',
  },
  emission: 'emitAsyncBatch',
  hooks: { buildRps: prodataRps },
};
