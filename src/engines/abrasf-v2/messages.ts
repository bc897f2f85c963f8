import type { NormalizedAddress, NormalizedInvoice, NormalizedParty } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { formatDateTimeWithOffset } from '../../xml/datetime.ts';
import { escapeXmlAttr, escapeXmlText } from '../../xml/escape.ts';
import { splitNamespaces } from '../../xml/split-namespaces.ts';
import { municipalityRegistry } from '../routing/municipality-registry.ts';
import { codigoNbs, ibsCbsInValores } from './reform.ts';
import type { PrepareInput } from '../types.ts';
import type { AbrasfProviderConfig } from './config.ts';

/**
 * The ABRASF 2.0x messages, written from the normalised invoice and the project in the element order of the
 * official XSD (nfse_v201/v202/v204: tcInfDeclaracaoPrestacaoServico, tcDadosServico, tcValoresDeclaracaoServico,
 * tcDadosTomador, tcLoteRps, the query and cancellation messages). Canonical text by construction (no empty
 * elements, attributes in order), so the signer takes its fast path.
 */

const BRASILIA = -180;

/** `<name>value</name>`, or nothing when the value is null/empty. */
export function el(name: string, value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  return `<${name}>${escapeXmlText(String(value))}</${name}>`;
}

const group = (name: string, inner: string) => (inner ? `<${name}>${inner}</${name}>` : '');
const money = (value: number) => value.toFixed(2);
const cut = (value: string | null | undefined, max: number) => (value ? value.trim().slice(0, max) : null);
const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');

/** A message in the provider's namespace mode: split per message (GISS) when configured, else as written. */
export function inMessageNamespace(config: AbrasfProviderConfig, root: string, xml: string): string {
  const messageNamespace = config.namespaces?.messages[root];
  if (!messageNamespace || !config.dataNamespace) return xml;
  return splitNamespaces(xml, messageNamespace, config.dataNamespace, config.namespaces?.localGroups);
}

/** The Id attribute's name of the signed elements (`Id`, official; Tributus `id`). */
const idName = (config: AbrasfProviderConfig) => config.idAttribute ?? 'Id';

/** A message as the XSD sees it: a provider's lowercase `id` attributes as the official `Id` (Tributus). */
export function officialIds(config: AbrasfProviderConfig, xml: string): string {
  if (config.idAttribute !== 'id') return xml;
  return xml.replace(/<(InfDeclaracaoPrestacaoServico|LoteRps|InfPedidoCancelamento) id="/g, '<$1 Id="');
}

export function nsAttr(config: AbrasfProviderConfig): string {
  return config.dataNamespace ? ` xmlns="${config.dataNamespace}"` : '';
}

export function cpfCnpj(id: string): string {
  const clean = digits(id);
  return `<CpfCnpj>${clean.length === 11 ? el('Cpf', clean) : el('Cnpj', clean)}</CpfCnpj>`;
}

/** tcIdentificacaoPrestador. */
export function prestador(cnpj: string, inscricaoMunicipal: string | null | undefined): string {
  return `${cpfCnpj(cnpj)}${el('InscricaoMunicipal', cut(inscricaoMunicipal, 15))}`;
}

export function itemListaServico(subitem: string, format: AbrasfProviderConfig['formats']['itemListaServico']) {
  const [item = '', sub = ''] = subitem.split('.');
  const padded = `${item.padStart(2, '0')}.${sub.padStart(2, '0')}`;
  if (format === 'digits') return padded.replace('.', '');
  if (format === 'unpadded') return `${Number(item)}.${sub.padStart(2, '0')}`;
  if (format === 'digitsUnpadded') return `${Number(item)}${sub.padStart(2, '0')}`;
  return padded;
}

/** The ItemListaServico format of a city: its registry option's (`formats.itemListaServicoByOption`), else the provider's. */
export function itemFormatOf(config: AbrasfProviderConfig, codigoMunicipio: string | null | undefined) {
  const byOption = config.formats.itemListaServicoByOption;
  const options =
    byOption && codigoMunicipio ? municipalityRegistry().find(codigoMunicipio)?.parameters?.options : null;
  return byOption && options?.[byOption.option] ? byOption.format : config.formats.itemListaServico;
}

/** ExigibilidadeISS from the national tribISSQN: taxable 1, immunity 5, export 4, no incidence 2. */
const EXIGIBILIDADE: Record<1 | 2 | 3 | 4, string> = { 1: '1', 2: '5', 3: '4', 4: '2' };

function aliquotaOf(config: AbrasfProviderConfig, percent: number): string {
  return config.formats.aliquota === 'fraction' ? (percent / 100).toFixed(4) : percent.toFixed(2);
}

function endereco(address: NormalizedAddress | null): string {
  if (!address?.nacional) return '';
  return group(
    'Endereco',
    el('Endereco', cut(address.logradouro, 125)) +
      el('Numero', cut(address.numero, 10)) +
      el('Complemento', cut(address.complemento, 60)) +
      el('Bairro', cut(address.bairro, 60)) +
      el('CodigoMunicipio', address.codigoMunicipio) +
      el('Uf', address.uf) +
      el('Cep', digits(address.cep).slice(0, 8) || null),
  );
}

function tomador(config: AbrasfProviderConfig, party: NormalizedParty): string {
  const id = party.id.kind === 'cnpj' ? party.id.cnpj : party.id.kind === 'cpf' ? party.id.cpf : null;
  const identificacao = group(
    'IdentificacaoTomador',
    (id ? cpfCnpj(id) : '') + el('InscricaoMunicipal', cut(party.inscricaoMunicipal, 15)),
  );
  const contato = group('Contato', el('Telefone', cut(digits(party.telefone), 20)) + el('Email', cut(party.email, 80)));
  // 2.04 names the taker TomadorServico (tcInfDeclaracaoPrestacaoServico of nfse_v204.xsd); 2.00–2.03 Tomador
  return group(
    config.version === '2.04' ? 'TomadorServico' : 'Tomador',
    identificacao + el('RazaoSocial', cut(party.nome, 150)) + endereco(party.endereco) + contato,
  );
}

function valores(config: AbrasfProviderConfig, invoice: NormalizedInvoice): string {
  const { iss, federal, total } = invoice;
  const pis = federal?.pisCofins?.tipoRetencao === 1 ? federal.pisCofins : null;
  const taxable = iss.tribISSQN === 1 && iss.aliquota > 0;
  const valorIss = taxable ? Math.round(total * iss.aliquota) / 100 : null;
  const positive = (value: number | null | undefined) => (value && value > 0 ? money(value) : null);
  return (
    el('ValorServicos', money(total)) +
    el('ValorPis', positive(pis?.valorPis)) +
    el('ValorCofins', positive(pis?.valorCofins)) +
    el('ValorInss', positive(federal?.retencaoCp)) +
    el('ValorIr', positive(federal?.retencaoIrrf)) +
    el('ValorCsll', positive(federal?.retencaoCsll)) +
    el('ValorIss', valorIss === null ? null : money(valorIss)) +
    el('Aliquota', taxable ? aliquotaOf(config, iss.aliquota) : null)
  );
}

function servico(config: AbrasfProviderConfig, project: ProjectFiscalProfile, invoice: NormalizedInvoice): string {
  const { servico: s, iss } = invoice;
  const local = s.localPrestacao.kind === 'municipio' ? s.localPrestacao.codigoMunicipio : project.codigoMunicipio;
  const exigibilidade = EXIGIBILIDADE[iss.tribISSQN];
  const cnaeDigits = config.cnaeDigits ?? 7;
  const cnae = digits(s.cnae ?? project.cnae).slice(0, cnaeDigits);
  const discriminacao = s.descricao.replace(/\r?\n/g, config.formats.lineBreak).slice(0, 2000);
  const reform = ibsCbsInValores(config, invoice, s.municipioIncidencia ?? local ?? '');
  return (
    `<Servico><Valores>${valores(config, invoice)}${reform}</Valores>` +
    el('IssRetido', iss.retido ? '1' : '2') +
    el('ResponsavelRetencao', iss.retido ? '1' : null) +
    el('ItemListaServico', itemListaServico(s.subitem, itemFormatOf(config, project.codigoMunicipio))) +
    el('CodigoCnae', cnae.length >= 7 ? cnae : null) +
    el('CodigoTributacaoMunicipio', cut(s.codigoTributacaoMunicipal, 20)) +
    el('CodigoNbs', codigoNbs(config, invoice)) +
    el('Discriminacao', discriminacao) +
    el('CodigoMunicipio', local) +
    el('ExigibilidadeISS', exigibilidade) +
    el('MunicipioIncidencia', exigibilidade === '1' ? s.municipioIncidencia : null) +
    '</Servico>'
  );
}

/** The RPS identification of a declaration (`IdentificacaoRps`). */
export interface RpsIdentity {
  numero: string;
  serie: string;
  tipo: string;
}

export function identificacaoRps(rps: RpsIdentity): string {
  return `<IdentificacaoRps>${el('Numero', rps.numero)}${el('Serie', rps.serie)}${el('Tipo', rps.tipo)}</IdentificacaoRps>`;
}

/**
 * The RPS (tcDeclaracaoPrestacaoServico) in the data namespace, declared on the Rps itself (MAN-2.01 §3.2.3:
 * "declaring the namespace in each RPS"), unsigned: the kit signs InfDeclaracaoPrestacaoServico@Id.
 */
export function buildRps(config: AbrasfProviderConfig, input: PrepareInput): { id: string; xml: string } {
  const { project, invoice } = input;
  const rps: RpsIdentity = { numero: String(input.number), serie: input.serie.trim(), tipo: '1' };
  const id = `RPS${digits(project.cnpj)}S${rps.serie}N${rps.numero}`;
  // layout 2.00 (official nfse v2.00 XSD): the Id on the inner Rps (tcInfRps), none on InfDeclaracaoPrestacaoServico;
  // DataEmissao and Competencia as xsd:dateTime (Brasília local time, as ACBr's tcDatHor writes them)
  const layout200 = config.version === '2.00';
  const idAttr = ` ${layout200 ? 'Id' : idName(config)}="${escapeXmlAttr(id)}"`;
  const emissao = formatDateTimeWithOffset(input.issuedAt, BRASILIA).slice(0, layout200 ? 19 : 10);
  const xml =
    `<Rps${nsAttr(config)}><InfDeclaracaoPrestacaoServico${layout200 ? '' : idAttr}>` +
    `<Rps${layout200 ? idAttr : ''}>${identificacaoRps(rps)}${el('DataEmissao', emissao)}${el('Status', '1')}</Rps>` +
    el('Competencia', `${invoice.competencia}-01${layout200 ? 'T00:00:00' : ''}`) +
    servico(config, project, invoice) +
    `<Prestador>${prestador(project.cnpj, project.inscricaoMunicipal)}</Prestador>` +
    tomador(config, invoice.tomador) +
    el('OptanteSimplesNacional', invoice.regime.simples ? '1' : '2') +
    el('IncentivoFiscal', '2') +
    '</InfDeclaracaoPrestacaoServico></Rps>';
  const omitted = (config.omitElements ?? []).reduce(
    (out, name) => out.replace(new RegExp(`<${name}>[^<]*</${name}>`, 'g'), ''),
    xml,
  );
  return { id, xml: omitted };
}

/** The RPS message as the XSD sees it (GerarNfseEnvio is the one global element holding a bare Rps). */
export function rpsSchemaView(config: AbrasfProviderConfig, signedRps: string): string {
  // split namespaces: the RPS is written in the types namespace, as it sits in a lote's ListaRps
  if (config.namespaces) return buildLote(config, 'EnviarLoteRpsEnvio', signedRps).xml;
  return `<GerarNfseEnvio${nsAttr(config)}>${signedRps}</GerarNfseEnvio>`;
}

/** The identification and provider of a signed RPS (read back from its text: our own canonical output). */
export function rpsFacts(rpsXml: string): RpsIdentity & { cnpj: string; inscricaoMunicipal: string | null } {
  const ident = /<IdentificacaoRps><Numero>(\d+)<\/Numero>(?:<Serie>([^<]+)<\/Serie>)?(?:<Tipo>(\d)<\/Tipo>)?/.exec(
    rpsXml,
  );
  const prest =
    /<Prestador><CpfCnpj><(?:Cnpj|Cpf)>(\d+)<\/(?:Cnpj|Cpf)><\/CpfCnpj>(?:<InscricaoMunicipal>([^<]+)<\/InscricaoMunicipal>)?/.exec(
      rpsXml,
    );
  return {
    numero: ident?.[1] ?? '',
    serie: ident?.[2] ?? '',
    tipo: ident?.[3] ?? '1',
    cnpj: prest?.[1] ?? '',
    inscricaoMunicipal: prest?.[2] ?? null,
  };
}

/**
 * A lote of one RPS (EnviarLoteRpsEnvio / EnviarLoteRpsSincronoEnvio). NumeroLote is the RPS number (numeric,
 * no leading zeros: Fiorilli's rule), so a resend carries the same lote and the same bytes.
 */
export function buildLote(
  config: AbrasfProviderConfig,
  root: string,
  signedRps: string,
): { xml: string; loteId: string; numeroLote: string } {
  const facts = rpsFacts(signedRps);
  const numeroLote = String(Number(facts.numero));
  const loteId = `LOTE${facts.cnpj}N${numeroLote}`;
  const xml =
    `<${root}${nsAttr(config)}><LoteRps ${idName(config)}="${loteId}" versao="${config.version}">` +
    el('NumeroLote', numeroLote) +
    // 2.04 wraps the lote's identification in Prestador (tcLoteRps of nfse_v204.xsd); 2.00–2.03 do not
    (config.version === '2.04'
      ? `<Prestador>${prestador(facts.cnpj, facts.inscricaoMunicipal)}</Prestador>`
      : cpfCnpj(facts.cnpj) + el('InscricaoMunicipal', facts.inscricaoMunicipal)) +
    el('QuantidadeRps', '1') +
    `<ListaRps>${signedRps}</ListaRps></LoteRps></${root}>`;
  return { xml: inMessageNamespace(config, root, xml), loteId, numeroLote };
}

export function buildConsultarLote(config: AbrasfProviderConfig, root: string, rpsXml: string, protocolo: string) {
  const facts = rpsFacts(rpsXml);
  return inMessageNamespace(
    config,
    root,
    `<${root}${nsAttr(config)}><Prestador>${prestador(facts.cnpj, facts.inscricaoMunicipal)}</Prestador>` +
      `${el(config.pollBy ?? 'Protocolo', protocolo)}</${root}>`,
  );
}

export function buildConsultarPorRps(config: AbrasfProviderConfig, root: string, rpsXml: string) {
  const facts = rpsFacts(rpsXml);
  return queryMessage(
    config,
    root,
    (config.formats.rpsIdentification === 'numero'
      ? `<IdentificacaoRps>${el('Numero', facts.numero)}</IdentificacaoRps>`
      : identificacaoRps(facts)) + `<Prestador>${prestador(facts.cnpj, facts.inscricaoMunicipal)}</Prestador>`,
  );
}

/** A query message: its content, wrapped in the provider's `queryWrapper` (ISSNet `Pedido`) when it has one. */
function queryMessage(config: AbrasfProviderConfig, root: string, content: string): string {
  const inner = config.queryWrapper ? `<${config.queryWrapper}>${content}</${config.queryWrapper}>` : content;
  return inMessageNamespace(config, root, `<${root}${nsAttr(config)}>${inner}</${root}>`);
}

export function buildConsultarFaixa(config: AbrasfProviderConfig, root: string, cnpj: string, numero: string) {
  return queryMessage(
    config,
    root,
    `<Prestador>${prestador(cnpj, null)}</Prestador>` +
      `<Faixa>${el('NumeroNfseInicial', numero)}${el('NumeroNfseFinal', numero)}</Faixa>${el('Pagina', '1')}`,
  );
}

/** CodigoCancelamento from the reason: 2 "serviço não prestado", 4 "duplicidade", else the provider default. */
export function cancellationCode(config: AbrasfProviderConfig, reason: string | null): string {
  const text = (reason ?? '')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  if (/nao (foi )?prestado/.test(text)) return '2';
  if (/duplicidade|duplicad/.test(text)) return '4';
  return config.cancellation.defaultCode;
}

export function buildCancelamento(
  config: AbrasfProviderConfig,
  root: string,
  note: {
    numero: string;
    cnpj: string;
    inscricaoMunicipal: string | null;
    codigoMunicipio: string;
    code: string;
    chave?: string | null;
    reason?: string | null;
  },
): { id: string; xml: string } {
  const id = `CANC${digits(note.cnpj)}N${note.numero}`;
  const xml =
    `<${root}${nsAttr(config)}><Pedido><InfPedidoCancelamento ${idName(config)}="${id}"><IdentificacaoNfse>` +
    el('Numero', note.numero) +
    cpfCnpj(note.cnpj) +
    el('InscricaoMunicipal', note.inscricaoMunicipal) +
    el('CodigoMunicipio', note.codigoMunicipio) +
    `</IdentificacaoNfse>${config.cancellation.chaveAcesso ? el('ChaveAcesso', note.chave) : ''}` +
    `${el('CodigoCancelamento', note.code)}${config.cancellation.trailing?.(note) ?? ''}</InfPedidoCancelamento></Pedido></${root}>`;
  return { id, xml: inMessageNamespace(config, root, xml) };
}

/** The ABRASF header message (nfseCabecMsg). */
export function cabecalho(config: AbrasfProviderConfig): string {
  const versao = config.body.cabecalhoVersion ?? config.version;
  const ns = config.namespaces?.cabecalho ? ` xmlns="${config.namespaces.cabecalho}"` : nsAttr(config);
  const attribute = config.body.cabecalhoAttribute ?? versao;
  return `<cabecalho versao="${attribute}"${ns}>${el('versaoDados', versao)}</cabecalho>`;
}
