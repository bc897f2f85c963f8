import { findMunicipality } from '../../domain/municipalities.ts';
import { child, findDescendant, parseXml, text, withoutSignatures } from '../../xml/read.ts';
import {
  formatCep,
  formatCnpj,
  formatCpf,
  formatDate,
  formatDateTime,
  formatMoney,
  formatPhone,
  sumDecimals,
} from './format.ts';
import type { DanfseModel, DanfseModelResult, DanfseParty } from './model.ts';

/**
 * The DANFSe-like view model of a municipal ABRASF NFS-e (1.0x `InfNfse` with Servico/Prestador/Tomador inside it,
 * and 2.0x `InfNfse` with the declaration in `DeclaracaoPrestacaoServico/InfDeclaracaoPrestacaoServico`), for the
 * providers that publish no PDF (spec 4.4; issue "ABRASF 2.0x" item 5). Elements are found by local name, so the
 * namespace (official, provider's, split or none) does not matter. The national fields that ABRASF lacks (access
 * key, cTribNac, NBS, IBS/CBS) print as `-`; the QR code carries the city's consultation link when it publishes one,
 * else the note's identification (municipality, number, verification code) as text.
 */

const DASH = '-';
const orDash = (value: string | null | undefined): string => (value ? value : DASH);

const EXIGIBILIDADE: Record<string, string> = {
  '1': 'Exigível',
  '2': 'Não incidência',
  '3': 'Isenção',
  '4': 'Exportação',
  '5': 'Imunidade',
  '6': 'Exigibilidade suspensa por decisão judicial',
  '7': 'Exigibilidade suspensa por processo administrativo',
};
const NATUREZA_OPERACAO: Record<string, string> = {
  '1': 'Tributação no município',
  '2': 'Tributação fora do município',
  '3': 'Isenção',
  '4': 'Imune',
  '5': 'Exigibilidade suspensa por decisão judicial',
  '6': 'Exigibilidade suspensa por procedimento administrativo',
};
const REGIME_ESPECIAL: Record<string, string> = {
  '1': 'Microempresa Municipal',
  '2': 'Estimativa',
  '3': 'Sociedade de Profissionais',
  '4': 'Cooperativa',
  '5': 'Microempresário Individual (MEI)',
  '6': 'Microempresário e Empresa de Pequeno Porte (ME EPP)',
};

function municipioUf(code: string | null): string {
  const m = code ? findMunicipality(code) : undefined;
  return m ? `${m.name} - ${m.uf}` : orDash(code);
}

function taxId(el: Element | null): { label: string; value: string } | null {
  if (!el) return null;
  const cnpj = text(el, 'Cnpj') ?? text(el, 'CpfCnpj/Cnpj');
  if (cnpj) return { label: 'CNPJ', value: formatCnpj(cnpj) };
  const cpf = text(el, 'Cpf') ?? text(el, 'CpfCnpj/Cpf');
  if (cpf) return { label: 'CPF', value: formatCpf(cpf) };
  const nif = text(el, 'NifTomador');
  if (nif) return { label: 'NIF', value: nif };
  return null;
}

function readParty(el: Element, identification: string): DanfseParty {
  const id = child(el, identification);
  const doc = taxId(id) ?? taxId(el);
  const address = child(el, 'Endereco') ?? child(el, 'EnderecoExterior');
  const street = ['Endereco', 'Numero', 'Complemento', 'Bairro']
    .map((name) => text(address, name))
    .filter(Boolean)
    .join(', ');
  const foreignCity = text(address, 'EnderecoCompletoExterior');
  const cep = text(address, 'Cep');
  const phone = text(el, 'Contato/Telefone');
  return {
    documentoLabel: doc?.label ?? 'CNPJ / CPF',
    documento: doc?.value ?? DASH,
    inscricaoMunicipal: orDash(text(id, 'InscricaoMunicipal') ?? text(el, 'InscricaoMunicipal')),
    nome: orDash(text(el, 'RazaoSocial') ?? text(el, 'NomeFantasia')),
    endereco: orDash(street || foreignCity),
    municipio: address ? municipioUf(text(address, 'CodigoMunicipio')) : DASH,
    cep: cep ? formatCep(cep) : DASH,
    telefone: phone ? formatPhone(phone.replace(/\D/g, '')) : DASH,
    email: orDash(text(el, 'Contato/Email')),
  };
}

/** The rate as a percentage: ABRASF 1.0 (and some 2.0x providers) write a fraction (0.05), the others 5.00. */
function ratePercent(aliquota: string | null, base: string | null, iss: string | null): string {
  const b = Number(base);
  const v = Number(iss);
  if (b > 0 && Number.isFinite(v) && iss !== null) return `${((v / b) * 100).toFixed(2).replace('.', ',')}%`;
  if (aliquota === null) return DASH;
  const a = Number(aliquota);
  if (!Number.isFinite(a)) return aliquota;
  return `${(a > 0 && a < 1 ? a * 100 : a).toFixed(2).replace('.', ',')}%`;
}

/** Whether the XML is an ABRASF NFS-e (not a national one): it has an `InfNfse` element. */
export function isAbrasfNfse(xml: string): boolean {
  return /<(\w+:)?InfNfse[\s>]/.test(xml);
}

export function buildAbrasfDanfseModel(
  xml: string,
  options: { consultationUrl?: string | null } = {},
): DanfseModelResult {
  const parsed = parseXml(withoutSignatures(xml));
  if (!parsed.ok) return { ok: false, code: 'DANFSE_INVALID_XML', message: parsed.message };
  const inf = findDescendant(parsed.root, 'InfNfse');
  if (!inf) return { ok: false, code: 'DANFSE_INVALID_XML', message: 'not an ABRASF NFS-e XML: no InfNfse element' };
  const numero = text(inf, 'Numero');
  if (!numero) return { ok: false, code: 'DANFSE_MISSING_DATA', message: 'NFS-e number (InfNfse/Numero) missing' };
  const codigoVerificacao = text(inf, 'CodigoVerificacao');
  // 2.0x: the declaration holds the service; 1.0x: InfNfse itself does
  const decl = findDescendant(inf, 'InfDeclaracaoPrestacaoServico') ?? inf;
  const prestadorEl = child(inf, 'PrestadorServico');
  if (!prestadorEl)
    return { ok: false, code: 'DANFSE_MISSING_DATA', message: 'service provider (PrestadorServico) missing' };
  const tomadorEl = child(decl, 'TomadorServico') ?? child(decl, 'Tomador') ?? child(inf, 'TomadorServico');
  const intermediarioEl =
    child(decl, 'Intermediario') ?? child(decl, 'IntermediarioServico') ?? child(inf, 'IntermediarioServico');
  const servico = child(decl, 'Servico');
  const valores = child(servico, 'Valores');
  const valoresNfse = child(inf, 'ValoresNfse') ?? valores;
  const rps = child(decl, 'Rps') ?? inf;
  const identificacaoRps = child(rps, 'IdentificacaoRps');

  const base = text(valoresNfse, 'BaseCalculo') ?? text(valores, 'BaseCalculo');
  const valorIss = text(valoresNfse, 'ValorIss') ?? text(valores, 'ValorIss');
  const issRetido = text(servico, 'IssRetido') ?? text(valores, 'IssRetido');
  const exigibilidade = text(servico, 'ExigibilidadeISS');
  const natureza = text(inf, 'NaturezaOperacao');
  const simples = text(decl, 'OptanteSimplesNacional') ?? text(inf, 'OptanteSimplesNacional');
  const regime = text(decl, 'RegimeEspecialTributacao') ?? text(inf, 'RegimeEspecialTributacao');
  const orgao = text(inf, 'OrgaoGerador/CodigoMunicipio');
  const servicoMunicipio = text(servico, 'CodigoMunicipio');
  const incidencia = text(servico, 'MunicipioIncidencia') ?? servicoMunicipio;
  const retencoes = sumDecimals(
    text(valores, 'ValorPis'),
    text(valores, 'ValorCofins'),
    text(valores, 'ValorInss'),
    text(valores, 'ValorIr'),
    text(valores, 'ValorCsll'),
    text(valores, 'OutrasRetencoes'),
    issRetido === '1' ? valorIss : null,
  );
  const dataEmissao = text(inf, 'DataEmissao');
  const processadaEm = dataEmissao && !Number.isNaN(Date.parse(dataEmissao)) ? new Date(dataEmissao) : new Date(0);
  const cnae = text(servico, 'CodigoCnae');
  const item = text(servico, 'ItemListaServico');
  const complementares = [
    ['Código de verificação', codigoVerificacao],
    ['NFS-e substituída', text(inf, 'NfseSubstituida') ?? text(inf, 'NfseSubstituida/Numero')],
    ['CNAE', cnae],
    ['Outras informações', text(inf, 'OutrasInformacoes')],
    ['', text(decl, 'InformacoesComplementares')],
  ]
    .filter(([, value]) => value)
    .map(([name, value]) => (name ? `${name}: ${value}` : value!))
    .join(' | ');
  const tpAmb: '1' | '2' = '1';
  const qrText =
    options.consultationUrl ??
    `NFS-e ${numero} | ${municipioUf(orgao ?? servicoMunicipio)} | código de verificação ${orDash(codigoVerificacao)}`;

  const model: DanfseModel = {
    chaveAcesso: codigoVerificacao ? `Código de verificação ${codigoVerificacao}` : DASH,
    numero,
    tpAmb,
    tipoAmbiente: 'Produção',
    ambienteGerador: 'Prefeitura (padrão ABRASF)',
    municipioEmissor: municipioUf(orgao ?? servicoMunicipio),
    competencia: orDash(formatDate(text(decl, 'Competencia') ?? text(inf, 'Competencia'))),
    dataHoraEmissao: orDash(formatDateTime(dataEmissao)),
    dpsNumero: orDash(text(identificacaoRps, 'Numero')),
    dpsSerie: orDash(text(identificacaoRps, 'Serie')),
    dpsDataHora: orDash(formatDateTime(text(rps, 'DataEmissao') ?? text(inf, 'DataEmissaoRps'))),
    emitente: 'Prestador do serviço',
    situacao: 'NFS-e Gerada',
    finalidade: 'NFS-e regular',
    prestador: {
      ...readParty(prestadorEl, 'IdentificacaoPrestador'),
      simplesNacional: simples === '1' ? 'Optante' : simples === '2' ? 'Não optante' : DASH,
      regimeApuracaoSn: DASH,
    },
    tomador: tomadorEl ? readParty(tomadorEl, 'IdentificacaoTomador') : null,
    destinatario: tomadorEl ? { kind: 'tomador' } : { kind: 'nao-identificado' },
    intermediario: intermediarioEl ? readParty(intermediarioEl, 'IdentificacaoIntermediario') : null,
    servico: {
      codigoTributacaoNacional: DASH,
      codigoTributacaoMunicipal: orDash(
        [item ? `Item ${item}` : null, text(servico, 'CodigoTributacaoMunicipio')].filter(Boolean).join(' / '),
      ),
      codigoNbs: orDash(text(servico, 'CodigoNbs')),
      localPrestacao: municipioUf(servicoMunicipio),
      descricaoTributacao: exigibilidade
        ? (EXIGIBILIDADE[exigibilidade] ?? exigibilidade)
        : natureza
          ? (NATUREZA_OPERACAO[natureza] ?? natureza)
          : DASH,
      descricao: orDash(text(servico, 'Discriminacao')),
    },
    issqn: {
      tributacao: exigibilidade
        ? (EXIGIBILIDADE[exigibilidade] ?? exigibilidade)
        : natureza
          ? (NATUREZA_OPERACAO[natureza] ?? natureza)
          : DASH,
      municipioIncidencia: municipioUf(incidencia),
      paisResultado: DASH,
      regimeEspecial: regime ? (REGIME_ESPECIAL[regime] ?? regime) : 'Nenhum',
      imunidade: DASH,
      suspensao: exigibilidade === '6' || exigibilidade === '7' ? 'Sim' : 'Não',
      processoSuspensao: orDash(text(servico, 'NumeroProcesso')),
      beneficioMunicipal: DASH,
      calculoBeneficio: DASH,
      deducoes: formatMoney(text(valores, 'ValorDeducoes')),
      descontoIncondicionado: formatMoney(text(valores, 'DescontoIncondicionado')),
      baseCalculo: formatMoney(base),
      aliquota: ratePercent(text(valoresNfse, 'Aliquota') ?? text(valores, 'Aliquota'), base, valorIss),
      retencao: issRetido === '1' ? 'Retido pelo tomador' : issRetido === '2' ? 'Não retido' : DASH,
      issqnApurado: formatMoney(valorIss),
    },
    federal: {
      irrf: formatMoney(text(valores, 'ValorIr')),
      contribuicaoPrevidenciaria: formatMoney(text(valores, 'ValorInss')),
      csll: formatMoney(text(valores, 'ValorCsll')),
      pis: formatMoney(text(valores, 'ValorPis')),
      cofins: formatMoney(text(valores, 'ValorCofins')),
      retencaoPisCofins: DASH,
    },
    ibsCbs: null,
    totais: {
      valorServico: formatMoney(text(valores, 'ValorServicos')),
      descontoIncondicionado: formatMoney(text(valores, 'DescontoIncondicionado')),
      descontoCondicionado: formatMoney(text(valores, 'DescontoCondicionado')),
      totalRetencoes: formatMoney(retencoes),
      valorLiquido: formatMoney(text(valoresNfse, 'ValorLiquidoNfse') ?? text(valores, 'ValorLiquidoNfse')),
      totalIbsCbs: DASH,
      valorLiquidoMaisIbsCbs: formatMoney(
        text(valoresNfse, 'ValorLiquidoNfse') ?? text(valores, 'ValorLiquidoNfse') ?? text(valores, 'ValorServicos'),
      ),
    },
    informacoesComplementares: complementares.length > 2000 ? `${complementares.slice(0, 1997)}...` : complementares,
    tributosAproximados: text(valores, 'ValTotTributos')
      ? `Total aproximado dos tributos cfe. Lei nº 12.741/2012: ${formatMoney(text(valores, 'ValTotTributos'))}`
      : null,
    qrCodeUrl: qrText,
    processadaEm,
  };
  return { ok: true, model };
}
