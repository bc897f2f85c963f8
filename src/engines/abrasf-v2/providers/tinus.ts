import type { AbrasfProviderConfig } from '../config.ts';
import { buildRps, el } from '../messages.ts';

/**
 * Tinus ABRASF 2.03 on InterSystems CSP (briefs/providers-abrasf.md §10; OpenAC Tinus/2.03/nfse.xsd of 2026-05 with
 * the reform fields; ACBr Tinus.Provider.pas, TACBrNFSeXWebserviceTinus203): 36 cities (RN, PB, PE).
 * - the message is the SOAP body (no cabecalho, no wrapper), in the ABRASF namespace; SOAPAction
 *   `http://nfse.abrasf.org.br/WSNFSE203.Service2.nfseSOAP.<request root>` (ACBr, OpenAC agrees); the answer is in
 *   `<root>Response`, as `outputXML` or inline (the XSD declares `<Root>Response{<Resposta>}`): the reader takes both.
 * - signatures: RPS (also in GerarNfse), lote, cancellation; client certificate on TLS (ACBr).
 * - line break `\s\n` (ACBr QuebradeLinha); Faixa, Prestado, Tomado and Substituir are wired in neither client
 *   (ACBr leaves them commented out) and the XSD has no message for them.
 * - reform: `regApTribSN` is required in InfDeclaracaoPrestacaoServico (XSD); the cancellation carries
 *   ADNCodMotivo and ADNMotivo (required) and ADNChave (the national key, when the note has one); answers carry a
 *   national-layout NFS-e in CompNfse/Nfse (infNFSe/nNFSe, dhProc, DPS/infDPS), read by the base.
 * Conservative readings: GerarNfse (synchronous, one RPS); regApTribSN = the project's regimeIss, else 1 for a
 * Simples Nacional taxpayer and 3 otherwise; the optional IBSCBS groups are not sent yet; ADNCodMotivo 1/2 from
 * CodigoCancelamento 1/2 and 9 ("outros") for 4; ADNMotivo the reason (15–255 characters) or the code's text.
 */
const MOTIVO: Record<string, { adn: string; text: string }> = {
  '1': { adn: '1', text: 'Erro na emissão da NFS-e' },
  '2': { adn: '2', text: 'Serviço não prestado' },
  '4': { adn: '9', text: 'Duplicidade da NFS-e' },
};

const rps: NonNullable<NonNullable<AbrasfProviderConfig['hooks']>['buildRps']> = (config, input) => {
  const built = buildRps(config, input);
  const regime = input.project.regimeIss ?? (input.invoice.regime.simples ? 1 : 3);
  const xml = built.xml.replace(
    '</InfDeclaracaoPrestacaoServico>',
    `${el('regApTribSN', regime)}</InfDeclaracaoPrestacaoServico>`,
  );
  return { ...built, xml };
};

function trailing(note: { code: string; reason?: string | null; chave?: string | null }): string {
  const motivo = MOTIVO[note.code] ?? { adn: '9', text: 'Cancelamento solicitado pelo contribuinte' };
  const reason = (note.reason ?? '').replace(/\s+/g, ' ').trim().slice(0, 255).trim();
  const chave = note.chave && /^\d{50}$/.test(note.chave) ? note.chave : null;
  return `${el('ADNChave', chave)}${el('ADNCodMotivo', motivo.adn)}${el('ADNMotivo', reason.length >= 15 ? reason : motivo.text)}`;
}

export const TINUS_CONFIG: AbrasfProviderConfig = {
  provider: 'Tinus',
  version: '2.03',
  schema: 'abrasf203Tinus',
  sources: 'OpenAC Tinus/2.03/nfse.xsd (2026-05); ACBr Tinus.Provider.pas (TACBrNFSeXWebserviceTinus203)',
  soap: {
    version: '1.1',
    namespace: 'http://nfse.abrasf.org.br',
    operationCase: 'pascal',
    soapAction: 'http://nfse.abrasf.org.br/WSNFSE203.Service2.nfseSOAP.{root}',
  },
  body: { style: 'bareMessage', encoding: 'raw', cabecalho: false, credentials: false },
  dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
  auth: 'mtls',
  signature: { rps: true, lote: true, cancel: true },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\\s\\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1', trailing },
  operations: { queryRange: { supported: false }, replace: { supported: false } },
  hooks: { buildRps: rps },
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};

/** Tinus through its asynchronous lote (EnviarLoteRpsEnvio → Protocolo → ConsultarLoteRpsEnvio). */
export const TINUS_ASYNC_CONFIG: AbrasfProviderConfig = { ...TINUS_CONFIG, emission: 'emitAsyncBatch' };
