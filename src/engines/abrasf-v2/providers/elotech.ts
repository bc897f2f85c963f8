import { MissingCredentialError } from '../../kit/auth.ts';
import type { SendContext } from '../../kit/family.ts';
import type { AbrasfOperation, AbrasfProviderConfig } from '../config.ts';
import { buildRps, cpfCnpj, el } from '../messages.ts';

/**
 * EloTech ABRASF 2.03 on Spring-WS (briefs/providers-abrasf.md §8; nfselib's HIratiPR-Elotech.wsdl and
 * ELOTECH/nfse_v2_03.xsd; ACBr EloTech.Provider.pas): 93 cities (PR, RO, BA).
 * - the message is the SOAP body, in `http://shad.elotech.com.br/schemas/iss/nfse_v2_03.xsd`; SOAPAction "";
 *   the answer (`…Resposta`) sits in the body (WSDL: the parts are the Envio/Resposta elements).
 * - no XML signature and no client certificate (the XSD has no Signature; ACBr configures none): every Envio starts
 *   with `IdentificacaoRequerente{CpfCnpj, InscricaoMunicipal, Senha, Homologa}` (XSD), the password being the
 *   taxpayer's portal password (municipalPassword / basicAuthSenha) and `Homologa` the environment (same URL).
 *   The requerente's InscricaoMunicipal is the message's (lote, Prestador, IdentificacaoNfse); the range query of a
 *   cancelled note carries none, so it is the project's `municipalUser` there (ACBr: the emitente's InscMun).
 * - queries name the requerente instead of a Prestador; ConsultarLoteRps takes NumeroLote (XSD; the lote receipt
 *   has no Protocolo); there is no GerarNfse (WSDL); cancellation carries the note's ChaveAcesso (XSD) and is
 *   answered in `tcRetCancelamento/NfseCancelamento/ConfirmacaoCancelamento`.
 * - `Servico/ListaItensServico/ItemServico+` holds ItemListaServico and CodigoCnae (both required), Discriminacao
 *   precedes CodigoTributacaoMunicipio, MunicipioIncidencia is required, no OptanteSimplesNacional (XSD).
 * Conservative readings: the synchronous lote (ACBr's default) with one item per RPS (the whole service: quantity 1,
 * unit value = ValorServicos, Descricao = the first 20 characters of the description); ItemListaServico `01.05`;
 * Aliquota as a percentage; Homologa `true` for ambiente 2.
 */
const NS = 'http://shad.elotech.com.br/schemas/iss/nfse_v2_03.xsd';

function requerente(xml: string, context: SendContext | null): string {
  const cnpj = /<CpfCnpj><(?:Cnpj|Cpf)>(\d+)</.exec(xml)?.[1] ?? '';
  const credentials = context?.credentials ?? {};
  const im = /<InscricaoMunicipal>([^<]+)</.exec(xml)?.[1] ?? credentials.municipalUser ?? (context ? '' : '1');
  if (context && !im) throw new MissingCredentialError('municipalUser');
  const senha = context ? (credentials.municipalPassword ?? credentials.basicAuthSenha) : 'validacao';
  if (!senha) throw new MissingCredentialError('municipalPassword');
  const homologa = context ? String(context.ambiente === 2) : 'true';
  return `<IdentificacaoRequerente>${cpfCnpj(cnpj)}${el('InscricaoMunicipal', im)}${el('Senha', senha)}${el('Homologa', homologa)}</IdentificacaoRequerente>`;
}

/** The message with the requerente in place of the Prestador (queries), or as its first child (lotes, cancel). */
function message(operation: AbrasfOperation, message: string, context: SendContext | null): string {
  const xml = message.replace(/ Id="[^"]*"/g, '');
  const who = requerente(xml, context);
  if (operation.startsWith('query')) return xml.replace(/<Prestador>.*?<\/Prestador>/, () => who);
  return xml.replace(/^<\w+[^>]*>/, (open) => open + who);
}

/**
 * The official RPS with tcDadosServico rearranged as EloTech's (one ItemServico), no OptanteSimplesNacional and no
 * Id (the XSD has neither signature nor Id attributes).
 */
const rps: NonNullable<NonNullable<AbrasfProviderConfig['hooks']>['buildRps']> = (config, input) => {
  const { id, xml } = buildRps(config, input);
  const servico = /<Servico>(.*)<\/Servico>/.exec(xml)?.[1] ?? '';
  const pick = (name: string) => new RegExp(`<${name}>.*?</${name}>`).exec(servico)?.[0] ?? '';
  const value = (name: string) => new RegExp(`<${name}>(.*?)</${name}>`).exec(servico)?.[1] ?? '';
  const total = /<ValorServicos>([^<]+)</.exec(servico)?.[1] ?? '0.00';
  const descricao = value('Discriminacao')
    .replace(/&[a-z]+;|[<>]/g, ' ')
    .trim()
    .slice(0, 20)
    .trim();
  const item =
    `<ItemServico>${pick('ItemListaServico')}${pick('CodigoCnae')}${el('Descricao', descricao)}` +
    `<Tributavel>1</Tributavel><Quantidade>1.00000</Quantidade><ValorUnitario>${Number(total).toFixed(5)}</ValorUnitario>` +
    `<ValorLiquido>${total}</ValorLiquido></ItemServico>`;
  const incidencia = pick('MunicipioIncidencia') || el('MunicipioIncidencia', value('CodigoMunicipio'));
  const rebuilt =
    pick('Valores') +
    pick('IssRetido') +
    pick('ResponsavelRetencao') +
    pick('Discriminacao') +
    pick('CodigoTributacaoMunicipio') +
    pick('CodigoMunicipio') +
    pick('ExigibilidadeISS') +
    incidencia +
    `<ListaItensServico>${item}</ListaItensServico>`;
  const rewritten = xml
    .replace(/<Servico>.*<\/Servico>/, () => `<Servico>${rebuilt}</Servico>`)
    .replace(/<OptanteSimplesNacional>\d<\/OptanteSimplesNacional>/, '')
    .replace(/ Id="[^"]*"/g, '');
  return { id, xml: rewritten };
};

export const ELOTECH_CONFIG: AbrasfProviderConfig = {
  provider: 'EloTech',
  version: '2.03',
  schema: 'abrasf203Elotech',
  sources: 'nfselib HIratiPR-Elotech.wsdl + ELOTECH/nfse_v2_03.xsd; ACBr EloTech.Provider.pas',
  soap: { version: '1.1', namespace: NS, operationCase: 'pascal', soapAction: '' },
  body: { style: 'bareMessage', encoding: 'raw', cabecalho: false, credentials: false },
  dataNamespace: NS,
  auth: 'body-credentials',
  signature: { rps: false, lote: false, cancel: false },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\n' },
  emission: 'emitSyncBatch',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1', chaveAcesso: true },
  cancelAnswer: { ret: 'tcRetCancelamento', confirmacao: 'NfseCancelamento/ConfirmacaoCancelamento' },
  pollBy: 'NumeroLote',
  operations: {
    emitAsyncBatch: { soapOperation: 'EnviarLoteRps' },
    emitSyncBatch: { soapOperation: 'EnviarLoteRpsSincrono' },
    emitSingle: { supported: false },
    queryByRps: { soapOperation: 'ConsultarNfseRps' },
    queryRange: { soapOperation: 'ConsultarNfseFaixa' },
  },
  hooks: { buildRps: rps, message },
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};

/** EloTech through its asynchronous lote (EnviarLoteRps → NumeroLote → ConsultarLoteRps by NumeroLote). */
export const ELOTECH_ASYNC_CONFIG: AbrasfProviderConfig = { ...ELOTECH_CONFIG, emission: 'emitAsyncBatch' };
