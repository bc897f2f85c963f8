import type { SendContext } from '../../kit/family.ts';
import type { AbrasfOperation, AbrasfProviderConfig } from '../config.ts';

/**
 * IPM (atende.net) in its 28 ABRASF 2.04 cities (the rest of IPM's cities are the `ipm` family): per city
 * `https://<city>.atende.net/?pg=services&service=WNENotaFiscalEletronicaNfe[&cidade=padrao]`, homologation for some
 * (`treinamento.atende.net`, `migracao.atende.net`): the registry, from ACBr's ACBrNFSeXServicos.ini. Public facts
 * (ACBr `IPM.Provider.pas`, TACBrNFSeXWebserviceIPM204 / TACBrNFSeProviderIPM204; `IPM.GravarXml.pas`,
 * TNFSeW_IPM204; IPM's schema in shared/reference/providers/ipm/abrasf-2.04/, `nfse_rt.xsd` as ACBr names it):
 * - SOAP 1.1; the operation element is the message root in the namespace `net.atende` (`<net:GerarNfseEnvio
 *   xmlns:net="net.atende">`), holding the message's children (the ABRASF root stripped: they travel unqualified);
 *   SOAPAction `net.atende#<root>`; answers in `return` or inline (the reader takes both);
 * - in homologation every emission message (GerarNfse, the lotes, SubstituirNfse) starts with
 *   `<EnvioTeste>1</EnvioTeste>`;
 * - HTTP Basic with the taxpayer's atende.net login (RequerLogin; UseCertificateHTTP False); nothing signed (the
 *   IPM204 unit configures no signature, the XSD's Signature is optional); no `Id` on the signed-element candidates
 *   (Identificador '') and no `versao` on LoteRps (AtribVerLote '');
 * - the official 2.04 writer: TomadorServico, no CodigoPais of the taker, Aliquota with 2 decimals; line break `\n`
 *   (QuebradeLinha, written as the two characters); ConsultarNfseServicoTomado not offered.
 * Readings: IPM's nfse_rt.xsd (the official 2.04 namespace with optional Id/versao and the reform groups); GerarNfse
 * synchronous; the XSD validates the message in its ABRASF namespace, the idiom is applied when sent; a few cities'
 * ACBr options (Novo Hamburgo's ItemLei116AtividadeEconomica tag) are not applied; a CompNfse answer with IPM's
 * extra `item` level is not read (the official shape is).
 */
const NET = 'net.atende';
const ABRASF = 'http://www.abrasf.org.br/nfse.xsd';
const EMISSIONS: readonly AbrasfOperation[] = ['emitSingle', 'emitSyncBatch', 'emitAsyncBatch', 'replace'];

/** The message as IPM takes it: `net:<root>` around the unqualified children, `EnvioTeste` in homologation. */
function ipmMessage(operation: AbrasfOperation, xml: string, context: SendContext | null): string {
  if (!context) return xml;
  const open = /^\s*(?:<\?xml[^>]*\?>)?\s*<(\w+)(?:\s[^>]*)?>/.exec(xml);
  if (!open) return xml;
  const root = open[1]!;
  const inner = xml
    .slice(open[0].length, xml.lastIndexOf(`</${root}>`))
    .replace(/<(InfDeclaracaoPrestacaoServico|LoteRps|InfPedidoCancelamento)( [^>]*?)? Id="[^"]*"/g, '<$1$2')
    .replace(/<LoteRps( [^>]*?)? versao="[^"]*"/g, '<LoteRps$1')
    .replaceAll(` xmlns="${ABRASF}"`, '');
  const teste = context.ambiente === 2 && EMISSIONS.includes(operation) ? '<EnvioTeste>1</EnvioTeste>' : '';
  return `<net:${root} xmlns:net="${NET}">${teste}${inner}</net:${root}>`;
}

export const IPM_CONFIG: AbrasfProviderConfig = {
  provider: 'IPM',
  version: '2.04',
  schema: 'abrasf204Ipm',
  sources:
    'ACBr IPM.Provider.pas (TACBrNFSeProviderIPM204), IPM.GravarXml.pas (TNFSeW_IPM204); IPM abrasf-2.04/nfse_rt.xsd',
  soap: { version: '1.1', namespace: NET, operationCase: 'pascal', soapAction: `${NET}#{root}` },
  body: { style: 'bareMessage', encoding: 'raw', cabecalho: false, credentials: false },
  dataNamespace: ABRASF,
  auth: 'basic',
  signature: { rps: false, lote: false, cancel: false },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  operations: {
    queryByRps: { responseRoots: ['ConsultarNfseRpsResposta', 'ConsultarNFSePorRpsResposta'] },
  },
  hooks: { message: ipmMessage },
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};

/** IPM through its asynchronous lote (RecepcionarLoteRps → Protocolo → ConsultarLoteRps). */
export const IPM_ASYNC_CONFIG: AbrasfProviderConfig = { ...IPM_CONFIG, emission: 'emitAsyncBatch' };
