import type { NormalizedAddress, NormalizedInvoice, NormalizedParty } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { formatDateTimeWithOffset } from '../../xml/datetime.ts';
import { escapeXmlAttr, escapeXmlText } from '../../xml/escape.ts';
import type { PrepareInput } from '../types.ts';
import type { AbrasfV1ProviderConfig } from './config.ts';

/**
 * The ABRASF 1.00 messages in one namespace (nfse.xsd: tcInfRps, tcDadosServico, tcValores, tcDadosTomador,
 * tcLoteRps and the message roots), written unprefixed in the data namespace, in the XSD's element order. Canonical
 * text by construction (no empty elements), so the signer takes its fast path.
 */
const BRASILIA = -180;
const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');
const cut = (value: string | null | undefined, max: number) => (value ? value.trim().slice(0, max) : null);
const money = (value: number) => value.toFixed(2);

/** `<name>value</name>`, or nothing when the value is null/empty. */
export function el(name: string, value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  return `<${name}>${escapeXmlText(String(value))}</${name}>`;
}
const ns = (config: AbrasfV1ProviderConfig) => ` xmlns="${config.dataNamespace}"`;

/** The 7-digit CNAE of the invoice or the project (null when absent). */
export function cnaeOf(project: ProjectFiscalProfile, invoice: NormalizedInvoice): string | null {
  const cnae = digits(invoice.servico.cnae ?? project.cnae).slice(0, 7);
  return cnae.length === 7 ? cnae : null;
}

function itemListaServico(subitem: string, format: AbrasfV1ProviderConfig['formats']['itemListaServico']): string {
  const [item = '', sub = ''] = subitem.split('.');
  const dotted = `${item.padStart(2, '0')}.${sub.padStart(2, '0')}`;
  if (format === 'digitsNoLeadingZero') return dotted.replace('.', '').replace(/^0/, '');
  return format === 'digits' ? dotted.replace('.', '') : dotted;
}

/** NaturezaOperacao (1 in the municipality, 2 outside it, 3 isenção, 4 imune) from the national tribISSQN. */
function naturezaOperacao(project: ProjectFiscalProfile, invoice: NormalizedInvoice): string {
  const local = invoice.servico.localPrestacao;
  if (invoice.iss.tribISSQN === 2) return '4';
  if (invoice.iss.tribISSQN === 4) return '3';
  return local.kind === 'municipio' && local.codigoMunicipio !== project.codigoMunicipio ? '2' : '1';
}

/**
 * The ABRASF 1.0 taker (`Tomador` with its identification, address and contact), its elements written with a
 * namespace prefix (`''` for a default namespace, `tipos:` for GINFES v3, whose types live in their own namespace).
 */
export function tomadorXml(
  party: NormalizedParty,
  prefix = '',
  names: { municipio: string; uf: string } = { municipio: 'CodigoMunicipio', uf: 'Uf' },
): string {
  const e = (name: string, value: string | number | null | undefined) =>
    value === null || value === undefined || value === ''
      ? ''
      : `<${prefix}${name}>${escapeXmlText(String(value))}</${prefix}${name}>`;
  const g = (name: string, inner: string) => (inner ? `<${prefix}${name}>${inner}</${prefix}${name}>` : '');
  const id = party.id.kind === 'cnpj' ? party.id.cnpj : party.id.kind === 'cpf' ? party.id.cpf : null;
  const clean = digits(id);
  const cpfCnpj = id ? g('CpfCnpj', clean.length === 11 ? e('Cpf', clean) : e('Cnpj', clean)) : '';
  const address: NormalizedAddress | null = party.endereco;
  const endereco = address?.nacional
    ? g(
        'Endereco',
        e('Endereco', cut(address.logradouro, 125)) +
          e('Numero', cut(address.numero, 10)) +
          e('Complemento', cut(address.complemento, 60)) +
          e('Bairro', cut(address.bairro, 60)) +
          e(names.municipio, address.codigoMunicipio) +
          e(names.uf, address.uf) +
          e('Cep', digits(address.cep).slice(0, 8) || null),
      )
    : '';
  const identificacao = g('IdentificacaoTomador', cpfCnpj + e('InscricaoMunicipal', cut(party.inscricaoMunicipal, 15)));
  const contato = g('Contato', e('Telefone', cut(digits(party.telefone), 11)) + e('Email', cut(party.email, 80)));
  return `<${prefix}Tomador>${identificacao}${e('RazaoSocial', cut(party.nome, 115))}${endereco}${contato}</${prefix}Tomador>`;
}

function valores(config: AbrasfV1ProviderConfig, invoice: NormalizedInvoice, codigoMunicipio: string): string {
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
    el('IssRetido', iss.retido ? '1' : '2') +
    el('ValorIss', valorIss === null ? null : money(valorIss)) +
    el('ValorIssRetido', iss.retido && valorIss !== null ? money(valorIss) : null) +
    el('BaseCalculo', money(total)) +
    // tsAliquota decimal(5,4): a fraction (5 % → 0.0500), the ABRASF 1.00 reading (as GINFES v3)
    el(
      'Aliquota',
      taxable
        ? (config.formats.aliquotaPercent?.(codigoMunicipio) ? iss.aliquota : iss.aliquota / 100).toFixed(4)
        : config.formats.aliquotaAlways
          ? '0.0000'
          : null,
    )
  );
}

export interface RpsFacts {
  numero: string;
  serie: string;
  tipo: string;
  cnpj: string;
  inscricaoMunicipal: string | null;
}

/** The prestador's `Cnpj` element as the provider's types hold it (in `CpfCnpj` where `types.prestadorCpfCnpj`). */
function cnpjOf(config: AbrasfV1ProviderConfig, cnpj: string, name = 'CpfCnpj'): string {
  return config.types?.prestadorCpfCnpj && cnpj ? `<${name}>${cnpj}</${name}>` : cnpj;
}

/** The RPS (tcRps) in the data namespace, unsigned: the kit signs InfRps (Signature inside Rps) when configured. */
export function buildRps(config: AbrasfV1ProviderConfig, input: PrepareInput): { id: string; xml: string } {
  const { project, invoice } = input;
  const numero = String(input.number);
  const s = invoice.servico;
  const local = s.localPrestacao;
  const id = config.ids.rps(numero);
  const reform =
    config.formats.reformInServico && invoice.ibscbs
      ? el('NBS', invoice.ibscbs.nbs) +
        el('cClassTrib', invoice.ibscbs.classificacaoTributaria) +
        el('INDOP', invoice.ibscbs.indicadorOperacao)
      : '';
  const xml =
    `<Rps${ns(config)}><InfRps ${config.idAttribute}="${escapeXmlAttr(id)}">` +
    `<IdentificacaoRps>${el('Numero', numero)}${el('Serie', input.serie.trim())}${el('Tipo', '1')}</IdentificacaoRps>` +
    el('DataEmissao', formatDateTimeWithOffset(input.issuedAt, BRASILIA).slice(0, 19)) +
    el('NaturezaOperacao', naturezaOperacao(project, invoice)) +
    el('OptanteSimplesNacional', invoice.regime.simples ? '1' : '2') +
    el('IncentivadorCultural', '2') +
    el('Status', '1') +
    `<Servico><Valores>${valores(config, invoice, project.codigoMunicipio ?? '')}</Valores>` +
    el('ItemListaServico', itemListaServico(s.subitem, config.formats.itemListaServico)) +
    (config.formats.noServicoCodes
      ? ''
      : el('CodigoCnae', cnaeOf(project, invoice)) +
        el('CodigoTributacaoMunicipio', cut(s.codigoTributacaoMunicipal, 20))) +
    el('Discriminacao', s.descricao.replace(/\r?\n/g, config.formats.lineBreak).slice(0, 2000)) +
    el(
      config.types?.servicoMunicipio ?? 'CodigoMunicipio',
      local.kind === 'municipio' ? local.codigoMunicipio : project.codigoMunicipio,
    ) +
    reform +
    '</Servico>' +
    `<Prestador>${cnpjOf(config, el('Cnpj', digits(project.cnpj)))}${el('InscricaoMunicipal', cut(project.inscricaoMunicipal, 15))}</Prestador>` +
    tomadorXml(invoice.tomador, '', config.types?.endereco) +
    '</InfRps></Rps>';
  return { id, xml };
}

/** The RPS identification and the provider of a (signed) RPS, read back from our own canonical text. */
export function rpsFacts(rpsXml: string): RpsFacts {
  const ident =
    /<IdentificacaoRps><Numero>(\d+)<\/Numero><Serie>([^<]+)<\/Serie><Tipo>(\d)<\/Tipo><\/IdentificacaoRps>/.exec(
      rpsXml,
    );
  const prestador =
    /<Prestador>(?:<CpfCnpj>)?<Cnpj>(\d+)<\/Cnpj>(?:<\/CpfCnpj>)?(?:<InscricaoMunicipal>([^<]+)<\/InscricaoMunicipal>)?<\/Prestador>/.exec(
      rpsXml,
    );
  return {
    numero: ident?.[1] ?? '',
    serie: ident?.[2] ?? '',
    tipo: ident?.[3] ?? '1',
    cnpj: prestador?.[1] ?? '',
    inscricaoMunicipal: prestador?.[2] ?? null,
  };
}

/**
 * How a message is written: one namespace for everything (official ABRASF 1.00: the root declares it as default), or
 * per-message namespaces (`messageNamespaces`, SpeedGov): the root in its own namespace (`m:`), its local elements
 * qualified (`m:`) or not (no namespace), the types' elements in the data namespace (`t:`).
 */
function frame(config: AbrasfV1ProviderConfig, root: string) {
  const split = config.messageNamespaces?.[root];
  if (!split) {
    return {
      open: (attrs = '') => `<${root}${ns(config)}${attrs}>`,
      close: `</${root}>`,
      local: (name: string) => name,
      t: (name: string, value: string | number | null | undefined) => el(name, value),
      tName: (name: string) => name,
    };
  }
  return {
    open: (attrs = '') => `<m:${root} xmlns:m="${split.namespace}" xmlns:t="${config.dataNamespace}"${attrs}>`,
    close: `</m:${root}>`,
    local: (name: string) => (split.qualified ? `m:${name}` : name),
    t: (name: string, value: string | number | null | undefined) =>
      value === null || value === undefined || value === ''
        ? ''
        : `<t:${name}>${escapeXmlText(String(value))}</t:${name}>`,
    tName: (name: string) => `t:${name}`,
  };
}
type Frame = ReturnType<typeof frame>;
const wrap = (name: string, inner: string) => `<${name}>${inner}</${name.split(' ')[0]}>`;
const prestadorOf = (config: AbrasfV1ProviderConfig, f: Frame, facts: Pick<RpsFacts, 'cnpj' | 'inscricaoMunicipal'>) =>
  wrap(
    f.local('Prestador'),
    cnpjOf(config, f.t('Cnpj', facts.cnpj), f.tName('CpfCnpj')) + f.t('InscricaoMunicipal', facts.inscricaoMunicipal),
  );

/**
 * EnviarLoteRpsEnvio with the one (signed) RPS; NumeroLote is the RPS number, so a resend is the same lote with the
 * same bytes. The Rps keeps its own (redundant) namespace declaration: its signature stays valid inside the lote.
 */
export function buildLote(config: AbrasfV1ProviderConfig, rpsXml: string): string {
  const facts = rpsFacts(rpsXml);
  const f = frame(config, 'EnviarLoteRpsEnvio');
  const id = escapeXmlAttr(config.ids.lote(facts.numero));
  const versao = config.loteVersao ? ` versao="${escapeXmlAttr(config.loteVersao)}"` : '';
  return (
    f.open() +
    wrap(
      `${f.local('LoteRps')} ${config.idAttribute}="${id}"${versao}`,
      f.t('NumeroLote', facts.numero) +
        cnpjOf(config, f.t('Cnpj', facts.cnpj), f.tName('CpfCnpj')) +
        f.t('InscricaoMunicipal', facts.inscricaoMunicipal) +
        f.t('QuantidadeRps', '1') +
        wrap(f.tName('ListaRps'), rpsXml.replace(/^<\?xml[^>]*\?>/, '')),
    ) +
    f.close
  );
}

/** ConsultarSituacaoLoteRpsEnvio / ConsultarLoteRpsEnvio. */
export function buildProtocolQuery(
  config: AbrasfV1ProviderConfig,
  root: 'ConsultarSituacaoLoteRpsEnvio' | 'ConsultarLoteRpsEnvio',
  facts: RpsFacts,
  protocolo: string,
): string {
  const f = frame(config, root);
  return `${f.open()}${prestadorOf(config, f, facts)}${wrap(f.local('Protocolo'), escapeXmlText(protocolo))}${f.close}`;
}

/** ConsultarNfseRpsEnvio. */
export function buildQueryByRps(config: AbrasfV1ProviderConfig, facts: RpsFacts): string {
  const f = frame(config, 'ConsultarNfseRpsEnvio');
  const ident = f.t('Numero', facts.numero) + f.t('Serie', facts.serie) + f.t('Tipo', facts.tipo);
  return `${f.open()}${wrap(f.local('IdentificacaoRps'), ident)}${prestadorOf(config, f, facts)}${f.close}`;
}

/** A note's number as the provider writes it (zero-padded where `formats.nfseNumberDigits` says so). */
const nfseNumber = (config: AbrasfV1ProviderConfig, numero: string) =>
  config.formats.nfseNumberDigits ? numero.padStart(config.formats.nfseNumberDigits, '0') : numero;

/** ConsultarNfseEnvio by the note's number (the cancellation query). */
export function buildQueryByNumber(config: AbrasfV1ProviderConfig, cnpj: string, im: string | null, numero: string) {
  if (config.nfseQuery === 'faixa') {
    const padded = nfseNumber(config, numero);
    const faixa = el('NumeroNfseInicial', padded) + el('NumeroNfseFinal', padded);
    const prestador = `<Prestador>${el('Cnpj', digits(cnpj))}${el('InscricaoMunicipal', im)}</Prestador>`;
    return `<ConsultarNfseFaixaEnvio${ns(config)}>${prestador}<Faixa>${faixa}</Faixa></ConsultarNfseFaixaEnvio>`;
  }
  const f = frame(config, 'ConsultarNfseEnvio');
  const prestador = prestadorOf(config, f, { cnpj: digits(cnpj), inscricaoMunicipal: im });
  return `${f.open()}${prestador}${wrap(f.local('NumeroNfse'), escapeXmlText(numero))}${f.close}`;
}

/** CodigoCancelamento (ABRASF 1.00): 2 "serviço não prestado", 4 duplicidade, else 1 "erro na emissão". */
export function cancellationCode(reason: string | null): string {
  const text = (reason ?? '')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  if (/nao (foi )?prestado/.test(text)) return '2';
  if (/duplicidade|duplicad/.test(text)) return '4';
  return '1';
}

/** CancelarNfseEnvio{Pedido{InfPedidoCancelamento@Id{IdentificacaoNfse, CodigoCancelamento}}}, unsigned. */
export function buildCancelamento(
  config: AbrasfV1ProviderConfig,
  note: {
    numero: string;
    cnpj: string;
    inscricaoMunicipal: string | null;
    codigoMunicipio: string;
    code: string;
    /** MotivoCancelamento, for providers that take it (`cancelMotivo`) */
    motivo?: string | null;
  },
): { id: string; xml: string } {
  const f = frame(config, 'CancelarNfseEnvio');
  const id = `CANC${digits(note.cnpj)}N${note.numero}`;
  const identificacao =
    f.t('Numero', nfseNumber(config, note.numero)) +
    f.t('Cnpj', digits(note.cnpj)) +
    f.t('InscricaoMunicipal', note.inscricaoMunicipal) +
    f.t('CodigoMunicipio', note.codigoMunicipio);
  const inf = wrap(
    `${f.tName('InfPedidoCancelamento')} ${config.idAttribute}="${id}"`,
    wrap(f.tName('IdentificacaoNfse'), identificacao) +
      f.t('CodigoCancelamento', note.code) +
      (config.cancelMotivo ? f.t('MotivoCancelamento', cut(note.motivo, 255)) : ''),
  );
  return { id, xml: `${f.open()}${wrap(f.local('Pedido'), inf)}${f.close}` };
}
