import { findMunicipality } from '../../domain/municipalities.ts';
import { buildAbrasfDanfseModel, isAbrasfNfse } from './abrasf-model.ts';
import { findCountry } from '../../domain/countries.ts';
import {
  formatBrasiliaDateTime,
  formatCep,
  formatCnpj,
  formatCodigoTributacaoNacional,
  formatCpf,
  formatDate,
  formatDateTime,
  formatMoney,
  formatNbs,
  formatPercent,
  formatPhone,
  sumDecimals,
} from './format.ts';
import { isValidAccessKey } from '../../xml/access-key.ts';
import { parseXmlLight } from '../../xml/light-read.ts';
import { child, children, findDescendant, text, withoutSignatures } from '../../xml/read.ts';

/**
 * The DANFSe v2.0 view model: every value already formatted for display (pt-BR), `-` for an absent value.
 * Built from the NFS-e XML alone, so it is pure and testable without drawing.
 */

export const CONSULTA_PUBLICA_URL = 'https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=';

export const EMPTY_TEXTS = {
  tomador: 'TOMADOR/ADQUIRENTE DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e',
  destinatarioTomador: 'O DESTINATÁRIO É O PRÓPRIO TOMADOR/ADQUIRENTE DA OPERAÇÃO',
  destinatario: 'DESTINATÁRIO DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e',
  intermediario: 'INTERMEDIÁRIO DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e',
  issqn: 'TRIBUTAÇÃO MUNICIPAL (ISSQN) - OPERAÇÃO NÃO SUJEITA AO ISSQN',
  ibsCbs: 'TRIBUTAÇÃO IBS / CBS NÃO INFORMADA NA NFS-e',
} as const;

export interface DanfseParty {
  /** `CNPJ`, `CPF`, `NIF` or `NIF` with the reason it is absent. */
  documentoLabel: string;
  documento: string;
  inscricaoMunicipal: string;
  nome: string;
  endereco: string;
  municipio: string;
  cep: string;
  telefone: string;
  email: string;
}

export interface DanfsePrestador extends DanfseParty {
  simplesNacional: string;
  regimeApuracaoSn: string;
}

export type DanfseDestinatario =
  | { kind: 'party'; party: DanfseParty }
  | { kind: 'tomador' }
  | { kind: 'nao-identificado' };

export interface DanfseServico {
  codigoTributacaoNacional: string;
  codigoTributacaoMunicipal: string;
  codigoNbs: string;
  localPrestacao: string;
  descricaoTributacao: string;
  descricao: string;
}

export interface DanfseIssqn {
  tributacao: string;
  municipioIncidencia: string;
  paisResultado: string;
  regimeEspecial: string;
  imunidade: string;
  suspensao: string;
  processoSuspensao: string;
  beneficioMunicipal: string;
  calculoBeneficio: string;
  deducoes: string;
  descontoIncondicionado: string;
  baseCalculo: string;
  aliquota: string;
  retencao: string;
  issqnApurado: string;
}

export interface DanfseFederal {
  irrf: string;
  contribuicaoPrevidenciaria: string;
  csll: string;
  pis: string;
  cofins: string;
  retencaoPisCofins: string;
}

export interface DanfseIbsCbs {
  cstClassTrib: string;
  indicadorOperacao: string;
  localidadeIncidencia: string;
  usoConsumoPessoal: string;
  exclusoesReducoes: string;
  baseCalculo: string;
  reducoesAliquota: string;
  aliquotaIbsUf: string;
  aliquotaEfetivaIbsUf: string;
  valorIbsUf: string;
  aliquotaIbsMun: string;
  aliquotaEfetivaIbsMun: string;
  valorIbsMun: string;
  valorIbs: string;
  aliquotaCbs: string;
  aliquotaEfetivaCbs: string;
  valorCbs: string;
}

export interface DanfseTotais {
  valorServico: string;
  descontoIncondicionado: string;
  descontoCondicionado: string;
  totalRetencoes: string;
  valorLiquido: string;
  totalIbsCbs: string;
  valorLiquidoMaisIbsCbs: string;
}

export interface DanfseModel {
  chaveAcesso: string;
  numero: string;
  /** `1` produção, `2` homologação (NFS-e sem validade jurídica). */
  tpAmb: '1' | '2';
  tipoAmbiente: string;
  ambienteGerador: string;
  municipioEmissor: string;
  competencia: string;
  dataHoraEmissao: string;
  dpsNumero: string;
  dpsSerie: string;
  dpsDataHora: string;
  emitente: string;
  situacao: string;
  finalidade: string;
  prestador: DanfsePrestador;
  tomador: DanfseParty | null;
  destinatario: DanfseDestinatario;
  intermediario: DanfseParty | null;
  servico: DanfseServico;
  /** Null when the operation is not subject to ISSQN (the block shows a fixed sentence). */
  issqn: DanfseIssqn | null;
  federal: DanfseFederal;
  /** Null when the NFS-e has no IBS/CBS group (documents issued before the tax reform layout). */
  ibsCbs: DanfseIbsCbs | null;
  totais: DanfseTotais;
  /** Free text of the complementary-information block (`|`-separated, at most 2,000 characters). */
  informacoesComplementares: string;
  /** The fixed Lei 12.741/2012 line (approximate taxes), printed last and never truncated; null when absent. */
  tributosAproximados: string | null;
  qrCodeUrl: string;
  /** NFS-e generation time (dhProc), used as the PDF creation date so output is reproducible. */
  processadaEm: Date;
}

export type DanfseModelResult =
  | { ok: true; model: DanfseModel }
  | { ok: false; code: 'DANFSE_INVALID_XML' | 'DANFSE_MISSING_DATA'; message: string };

const DASH = '-';

const TIPO_AMBIENTE: Record<string, string> = { '1': 'Produção', '2': 'Homologação' };
const AMBIENTE_GERADOR: Record<string, string> = { '1': 'Prefeitura', '2': 'Sistema Nacional NFS-e' };
const SITUACAO: Record<string, string> = {
  '100': 'NFS-e Gerada',
  '101': 'NFS-e de Substituição Gerada',
  '102': 'NFS-e de Decisão Judicial/Administrativa',
  '103': 'NFS-e Avulsa Gerada',
  '107': 'NFS-e de MEI Gerada',
};

/** A country by its name in the national table (Anexo A), e.g. "US" → "Estados Unidos"; the code when unknown. */
function countryName(code: string | null | undefined): string {
  if (!code) return DASH;
  return findCountry(code.toUpperCase())?.name ?? code;
}
const EMITENTE: Record<string, string> = {
  '1': 'Prestador do serviço',
  '2': 'Tomador do serviço',
  '3': 'Intermediário',
};
const FINALIDADE: Record<string, string> = { '0': 'NFS-e regular', '1': 'NFS-e de crédito', '2': 'NFS-e de débito' };
const SIMPLES: Record<string, string> = {
  '1': 'Não optante',
  '2': 'Optante - MEI',
  '3': 'Optante - ME/EPP',
  '4': 'Optante pendente',
};
const REGIME_APURACAO_SN: Record<string, string> = {
  '1': 'Tributos federais e ISSQN pelo SN',
  '2': 'Federais pelo SN; ISSQN fora do SN',
  '3': 'Tributos federais e ISSQN fora do SN',
};
const TRIB_ISSQN: Record<string, string> = {
  '1': 'Operação tributável',
  '2': 'Imunidade',
  '3': 'Exportação de serviço',
  '4': 'Não incidência',
};
const REGIME_ESPECIAL: Record<string, string> = {
  '0': 'Nenhum',
  '1': 'Ato Cooperado (Cooperativa)',
  '2': 'Estimativa',
  '3': 'Microempresa Municipal',
  '4': 'Notário ou Registrador',
  '5': 'Profissional Autônomo',
  '6': 'Sociedade de Profissionais',
  '9': 'Outros',
};
const IMUNIDADE: Record<string, string> = {
  '0': 'Imunidade (tipo não informado)',
  '1': 'Patrimônio, renda ou serviços, uns dos outros (CF88, art. 150, VI, a)',
  '2': 'Templos de qualquer culto (CF88, art. 150, VI, b)',
  '3': 'Partidos políticos, sindicatos, educação e assistência social (CF88, art. 150, VI, c)',
  '4': 'Livros, jornais, periódicos e papel para impressão (CF88, art. 150, VI, d)',
  '5': 'Fonogramas e videofonogramas musicais (CF88, art. 150, VI, e)',
};
const SUSPENSAO: Record<string, string> = {
  '1': 'Suspensa por decisão judicial',
  '2': 'Suspensa por processo administrativo',
};
const BENEFICIO: Record<string, string> = {
  '1': 'Isenção',
  '2': 'Redução da BC (%)',
  '3': 'Redução da BC (R$)',
  '4': 'Alíquota diferenciada',
};
const RETENCAO_ISSQN: Record<string, string> = {
  '1': 'Não retido',
  '2': 'Retido pelo tomador',
  '3': 'Retido pelo intermediário',
};
const RETENCAO_PIS_COFINS: Record<string, string> = {
  '0': 'PIS/COFINS/CSLL não retidos',
  '1': 'PIS/COFINS retidos',
  '2': 'PIS/COFINS não retidos',
  '3': 'PIS/COFINS/CSLL retidos',
  '4': 'PIS/COFINS retidos, CSLL não retido',
  '5': 'PIS retido, COFINS/CSLL não retidos',
  '6': 'COFINS retido, PIS/CSLL não retidos',
  '7': 'PIS não retido, COFINS/CSLL retidos',
  '8': 'PIS/COFINS não retidos, CSLL retido',
  '9': 'COFINS não retido, PIS/CSLL retidos',
};
const NAO_NIF: Record<string, string> = {
  '0': 'Não informado na nota de origem',
  '1': 'Dispensado do NIF',
  '2': 'Não exigência do NIF',
};

function label(table: Record<string, string>, code: string | null): string {
  if (code === null) return DASH;
  return table[code] ?? code;
}

function orDash(value: string | null | undefined): string {
  return value ? value : DASH;
}

function municipioUf(code: string | null, name?: string | null): string {
  const m = code ? findMunicipality(code) : undefined;
  if (name && m) return `${name} - ${m.uf}`;
  if (m) return `${m.name} - ${m.uf}`;
  return orDash(name ?? code);
}

function readTaxId(el: Element): { label: string; value: string } | null {
  const cnpj = text(el, 'CNPJ');
  if (cnpj) return { label: 'CNPJ', value: formatCnpj(cnpj) };
  const cpf = text(el, 'CPF');
  if (cpf) return { label: 'CPF', value: formatCpf(cpf) };
  const nif = text(el, 'NIF');
  if (nif) return { label: 'NIF', value: nif };
  const naoNif = text(el, 'cNaoNIF');
  if (naoNif) return { label: 'NIF', value: label(NAO_NIF, naoNif) };
  return null;
}

function joinAddress(el: Element | null): string {
  if (!el) return DASH;
  const parts = [text(el, 'xLgr'), text(el, 'nro'), text(el, 'xCpl'), text(el, 'xBairro')].filter(Boolean);
  return parts.length ? parts.join(', ') : DASH;
}

/** A TCInfoPessoa-like group (prest, toma, interm, dest). */
function readParty(el: Element): DanfseParty {
  const doc = readTaxId(el);
  const end = child(el, 'end');
  const nac = child(end, 'endNac');
  const ext = child(end, 'endExt');
  let municipio = DASH;
  let cep = DASH;
  if (nac) {
    municipio = municipioUf(text(nac, 'cMun'));
    cep = text(nac, 'CEP') ? formatCep(text(nac, 'CEP')!) : DASH;
  } else if (ext) {
    const city = [text(ext, 'xCidade'), text(ext, 'xEstProvReg')].filter(Boolean).join(' - ');
    municipio = `${city || DASH} (${countryName(text(ext, 'cPais'))})`;
    cep = orDash(text(ext, 'cEndPost'));
  }
  return {
    documentoLabel: doc?.label ?? 'CNPJ / CPF / NIF',
    documento: doc?.value ?? DASH,
    inscricaoMunicipal: orDash(text(el, 'IM')),
    nome: orDash(text(el, 'xNome')),
    endereco: joinAddress(end),
    municipio,
    cep,
    telefone: text(el, 'fone') ? formatPhone(text(el, 'fone')!) : DASH,
    email: orDash(text(el, 'email')),
  };
}

function readPrestador(prest: Element | null, emit: Element | null, tpEmit: string | null): DanfsePrestador | null {
  if (!prest && !emit) return null;
  const declared = prest ? readParty(prest) : null;
  const prestDoc = prest ? (text(prest, 'CNPJ') ?? text(prest, 'CPF')) : null;
  const emitDoc = emit ? (text(emit, 'CNPJ') ?? text(emit, 'CPF')) : null;
  // `emit` holds the registry data of whoever issued the note; it describes the provider when the provider issued it.
  const emitIsProvider = !!emit && (prestDoc === null ? tpEmit === '1' || tpEmit === null : prestDoc === emitDoc);
  let registry: DanfseParty | null = null;
  if (emit && emitIsProvider) {
    const ender = child(emit, 'enderNac');
    const cMun = text(ender, 'cMun');
    const m = cMun ? findMunicipality(cMun) : undefined;
    const doc = readTaxId(emit);
    registry = {
      documentoLabel: doc?.label ?? 'CNPJ / CPF',
      documento: doc?.value ?? DASH,
      inscricaoMunicipal: orDash(text(emit, 'IM')),
      nome: orDash(text(emit, 'xNome')),
      endereco: joinAddress(ender),
      municipio: m ? `${m.name} - ${m.uf}` : orDash(cMun ? `${cMun} - ${orDash(text(ender, 'UF'))}` : null),
      cep: text(ender, 'CEP') ? formatCep(text(ender, 'CEP')!) : DASH,
      telefone: text(emit, 'fone') ? formatPhone(text(emit, 'fone')!) : DASH,
      email: orDash(text(emit, 'email')),
    };
  }
  if (!declared && !registry) return null;
  const pick = (key: keyof DanfseParty): string => {
    const a = declared?.[key];
    if (a && a !== DASH) return a;
    return registry?.[key] ?? DASH;
  };
  // The address is taken as a whole from one source so parts never mix.
  const addressFrom = declared && declared.endereco !== DASH ? declared : (registry ?? declared)!;
  const regTrib = child(prest, 'regTrib');
  const opSimpNac = text(regTrib, 'opSimpNac');
  return {
    documentoLabel: declared && declared.documento !== DASH ? declared.documentoLabel : pick('documentoLabel'),
    documento: pick('documento'),
    inscricaoMunicipal: pick('inscricaoMunicipal'),
    nome: pick('nome'),
    endereco: addressFrom.endereco,
    municipio: addressFrom.municipio,
    cep: addressFrom.cep,
    telefone: pick('telefone'),
    email: pick('email'),
    simplesNacional: label(SIMPLES, opSimpNac),
    regimeApuracaoSn: opSimpNac === '3' ? label(REGIME_APURACAO_SN, text(regTrib, 'regApTribSN')) : DASH,
  };
}

function readIssqn(inf: Element, infDps: Element, cTribNac: string | null): DanfseIssqn | null {
  const tribMun = child(infDps, 'valores/trib/tribMun');
  if (!tribMun || cTribNac?.startsWith('99')) return null;
  const nfseValores = child(inf, 'valores');
  const dpsValores = child(infDps, 'valores');
  const exigSusp = child(tribMun, 'exigSusp');
  const bm = child(tribMun, 'BM');
  const tpBM = text(nfseValores, 'tpBM');
  const dedRed = child(dpsValores, 'vDedRed');
  const deducoes = text(nfseValores, 'vCalcDR') ?? text(dedRed, 'vDR');
  const pDR = text(dedRed, 'pDR');
  return {
    tributacao: label(TRIB_ISSQN, text(tribMun, 'tribISSQN')),
    municipioIncidencia:
      text(inf, 'cLocIncid') || text(inf, 'xLocIncid')
        ? municipioUf(text(inf, 'cLocIncid'), text(inf, 'xLocIncid'))
        : DASH,
    paisResultado: countryName(text(tribMun, 'cPaisResult')),
    regimeEspecial: label(REGIME_ESPECIAL, text(infDps, 'prest/regTrib/regEspTrib')),
    imunidade: label(IMUNIDADE, text(tribMun, 'tpImunidade')),
    suspensao: exigSusp ? label(SUSPENSAO, text(exigSusp, 'tpSusp')) : 'Não',
    processoSuspensao: orDash(text(exigSusp, 'nProcesso')),
    beneficioMunicipal:
      bm || tpBM ? [tpBM ? label(BENEFICIO, tpBM) : null, text(bm, 'nBM')].filter(Boolean).join(' - ') : DASH,
    calculoBeneficio: formatMoney(text(nfseValores, 'vCalcBM') ?? text(bm, 'vRedBCBM')),
    deducoes: deducoes ? formatMoney(deducoes) : pDR ? formatPercent(pDR) : DASH,
    descontoIncondicionado: formatMoney(text(dpsValores, 'vDescCondIncond/vDescIncond')),
    baseCalculo: formatMoney(text(nfseValores, 'vBC')),
    aliquota: formatPercent(text(nfseValores, 'pAliqAplic') ?? text(tribMun, 'pAliq')),
    retencao: label(RETENCAO_ISSQN, text(tribMun, 'tpRetISSQN')),
    issqnApurado: formatMoney(text(nfseValores, 'vISSQN')),
  };
}

function readFederal(infDps: Element, competencia: string | null): DanfseFederal {
  const tribFed = child(infDps, 'valores/trib/tribFed');
  const piscofins = child(tribFed, 'piscofins');
  // PIS/COFINS are printed only for competências up to December 2026 (they end with the tax reform).
  const showPisCofins = !competencia || competencia.slice(0, 7) <= '2026-12';
  return {
    irrf: formatMoney(text(tribFed, 'vRetIRRF')),
    contribuicaoPrevidenciaria: formatMoney(text(tribFed, 'vRetCP')),
    csll: formatMoney(text(tribFed, 'vRetCSLL')),
    pis: showPisCofins ? formatMoney(text(piscofins, 'vPis')) : DASH,
    cofins: showPisCofins ? formatMoney(text(piscofins, 'vCofins')) : DASH,
    retencaoPisCofins: showPisCofins ? label(RETENCAO_PIS_COFINS, text(piscofins, 'tpRetPisCofins')) : DASH,
  };
}

function readIbsCbs(inf: Element, infDps: Element): DanfseIbsCbs | null {
  const calc = child(inf, 'IBSCBS');
  const declared = child(infDps, 'IBSCBS');
  if (!calc && !declared) return null;
  const v = child(calc, 'valores');
  const tot = child(calc, 'totCIBS');
  const sit = child(declared, 'valores/trib/gIBSCBS');
  const cst = text(sit, 'CST');
  const cClassTrib = text(sit, 'cClassTrib');
  const reducoes = [text(v, 'uf/pRedAliqUF'), text(v, 'mun/pRedAliqMun'), text(v, 'fed/pRedAliqCBS')];
  const cLocalidade = text(calc, 'cLocalidadeIncid');
  const indFinal = text(declared, 'indFinal');
  return {
    cstClassTrib: cst || cClassTrib ? `${orDash(cst)} / ${orDash(cClassTrib)}` : DASH,
    indicadorOperacao: orDash(text(declared, 'cIndOp')),
    localidadeIncidencia:
      cLocalidade || text(calc, 'xLocalidadeIncid')
        ? `${municipioUf(cLocalidade, text(calc, 'xLocalidadeIncid'))}${cLocalidade ? ` (${cLocalidade})` : ''}`
        : DASH,
    usoConsumoPessoal: indFinal === null ? DASH : indFinal === '1' ? 'Sim' : 'Não',
    exclusoesReducoes: formatMoney(text(v, 'vCalcReeRepRes')),
    baseCalculo: formatMoney(text(v, 'vBC')),
    reducoesAliquota: reducoes.some(Boolean) ? reducoes.map(formatPercent).join(' / ') : DASH,
    aliquotaIbsUf: formatPercent(text(v, 'uf/pIBSUF')),
    aliquotaEfetivaIbsUf: formatPercent(text(v, 'uf/pAliqEfetUF')),
    valorIbsUf: formatMoney(text(tot, 'gIBS/gIBSUFTot/vIBSUF')),
    aliquotaIbsMun: formatPercent(text(v, 'mun/pIBSMun')),
    aliquotaEfetivaIbsMun: formatPercent(text(v, 'mun/pAliqEfetMun')),
    valorIbsMun: formatMoney(text(tot, 'gIBS/gIBSMunTot/vIBSMun')),
    valorIbs: formatMoney(text(tot, 'gIBS/vIBSTot')),
    aliquotaCbs: formatPercent(text(v, 'fed/pCBS')),
    aliquotaEfetivaCbs: formatPercent(text(v, 'fed/pAliqEfetCBS')),
    valorCbs: formatMoney(text(tot, 'gCBS/vCBS')),
  };
}

function readInformacoesComplementares(inf: Element, infDps: Element): string {
  const serv = child(infDps, 'serv');
  const compl = child(serv, 'infoCompl');
  const itens = children(child(compl, 'gItemPed'), 'xItemPed')
    .map((e) => e.textContent?.trim())
    .filter(Boolean);
  const refs = children(child(infDps, 'IBSCBS/gRefNFSe'), 'refNFSe')
    .map((e) => e.textContent?.trim())
    .filter(Boolean);
  const entries: Array<[string, string | null]> = [
    ['NFS-e substituída', text(infDps, 'subst/chSubstda')],
    ['Motivo da substituição', text(infDps, 'subst/xMotivo')],
    ['NFS-e referenciadas', refs.length ? refs.join(', ') : null],
    ['Documento de referência', text(compl, 'docRef')],
    ['Obra', text(serv, 'obra/cObra') ?? text(serv, 'obra/cCIB')],
    ['Inscrição imobiliária fiscal', text(serv, 'obra/inscImobFisc') ?? text(infDps, 'IBSCBS/imovel/inscImobFisc')],
    ['Evento', text(serv, 'atvEvento/idAtvEvt') ?? text(serv, 'atvEvento/xNome')],
    ['Documento de responsabilidade técnica', text(compl, 'idDocTec')],
    ['Pedido', text(compl, 'xPed')],
    ['Itens do pedido', itens.length ? itens.join(', ') : null],
    ['Informações do fisco municipal', text(inf, 'xOutInf')],
    // The issuer's free text goes last so that, when the block is cut, the short references above survive.
    ['', text(compl, 'xInfComp')],
  ];
  const parts = entries.filter(([, value]) => value).map(([name, value]) => (name ? `${name}: ${value}` : value!));
  const body = parts.join(' | ');
  return body.length > 2000 ? `${body.slice(0, 1997)}...` : body;
}

function readTributosAproximados(infDps: Element): string | null {
  const totTrib = child(infDps, 'valores/trib/totTrib');
  const monet = child(totTrib, 'vTotTrib');
  const percent = child(totTrib, 'pTotTrib');
  const snPercent = text(totTrib, 'pTotTribSN');
  let lei12741: string | null = null;
  if (monet) {
    lei12741 =
      `Totais aproximados dos tributos cfe. Lei nº 12.741/2012: Federais: ${formatMoney(text(monet, 'vTotTribFed'))}; ` +
      `Estaduais: ${formatMoney(text(monet, 'vTotTribEst'))}; Municipais: ${formatMoney(text(monet, 'vTotTribMun'))}`;
  } else if (percent) {
    lei12741 =
      `Totais aproximados dos tributos cfe. Lei nº 12.741/2012: Federais: ${formatPercent(text(percent, 'pTotTribFed'))}; ` +
      `Estaduais: ${formatPercent(text(percent, 'pTotTribEst'))}; Municipais: ${formatPercent(text(percent, 'pTotTribMun'))}`;
  } else if (snPercent) {
    lei12741 = `Total aproximado dos tributos cfe. Lei nº 12.741/2012 (Simples Nacional): ${formatPercent(snPercent)}`;
  }
  return lei12741;
}

/**
 * Builds the DANFSe view model from an NFS-e XML (`<NFSe>` root, or any wrapper holding one `infNFSe`); a municipal
 * ABRASF NFS-e (`InfNfse`) gets its DANFSe-like model (abrasf-model.ts).
 */
export function buildDanfseModel(nfseXml: string): DanfseModelResult {
  if (isAbrasfNfse(nfseXml)) return buildAbrasfDanfseModel(nfseXml);
  const parsed = parseXmlLight(withoutSignatures(nfseXml));
  if (!parsed.ok) return { ok: false, code: 'DANFSE_INVALID_XML', message: parsed.message };
  const inf = findDescendant(parsed.root, 'infNFSe');
  if (!inf) return { ok: false, code: 'DANFSE_INVALID_XML', message: 'not an NFS-e XML: no infNFSe element' };
  const infDps = child(inf, 'DPS/infDPS');

  const id = inf.getAttribute('Id')?.trim() ?? '';
  const chave = id.replace(/^NFS/, '');
  if (!chave) return { ok: false, code: 'DANFSE_MISSING_DATA', message: 'access key (infNFSe/@Id) missing' };
  if (!isValidAccessKey(chave)) {
    return { ok: false, code: 'DANFSE_MISSING_DATA', message: `invalid access key in infNFSe/@Id: ${id}` };
  }
  const numero = text(inf, 'nNFSe');
  if (!numero) return { ok: false, code: 'DANFSE_MISSING_DATA', message: 'NFS-e number (nNFSe) missing' };
  if (!infDps) return { ok: false, code: 'DANFSE_MISSING_DATA', message: 'DPS (infNFSe/DPS/infDPS) missing' };

  const tpEmit = text(infDps, 'tpEmit');
  const prestador = readPrestador(child(infDps, 'prest'), child(inf, 'emit'), tpEmit);
  if (!prestador || (prestador.documento === DASH && prestador.nome === DASH)) {
    return { ok: false, code: 'DANFSE_MISSING_DATA', message: 'service provider (prest/emit) missing' };
  }

  const toma = child(infDps, 'toma');
  const interm = child(infDps, 'interm');
  const dest = child(infDps, 'IBSCBS/dest');
  const indDest = text(infDps, 'IBSCBS/indDest');
  let destinatario: DanfseDestinatario;
  if (dest) destinatario = { kind: 'party', party: readParty(dest) };
  else if (toma && indDest !== '1') destinatario = { kind: 'tomador' };
  else destinatario = { kind: 'nao-identificado' };

  const serv = child(infDps, 'serv');
  const cServ = child(serv, 'cServ');
  const cTribNac = text(cServ, 'cTribNac');
  const cLocPrestacao = text(serv, 'locPrest/cLocPrestacao');
  const cPaisPrestacao = text(serv, 'locPrest/cPaisPrestacao');
  const xLocPrestacao = text(inf, 'xLocPrestacao');
  const cLocEmi = text(infDps, 'cLocEmi');
  const cNbs = text(cServ, 'cNBS');
  const xNbs = text(inf, 'xNBS');

  const tpAmbRaw = text(infDps, 'tpAmb');
  const tpAmb: '1' | '2' = tpAmbRaw === '1' ? '1' : '2';
  const dhProc = text(inf, 'dhProc');
  const processadaEm = dhProc && !Number.isNaN(Date.parse(dhProc)) ? new Date(dhProc) : new Date(0);
  const competenciaRaw = text(infDps, 'dCompet');

  const nfseValores = child(inf, 'valores');
  const dpsValores = child(infDps, 'valores');
  const tot = child(inf, 'IBSCBS/totCIBS');

  const model: DanfseModel = {
    chaveAcesso: chave,
    numero,
    tpAmb,
    tipoAmbiente: label(TIPO_AMBIENTE, tpAmbRaw),
    ambienteGerador: label(AMBIENTE_GERADOR, text(inf, 'ambGer')),
    municipioEmissor: municipioUf(cLocEmi, text(inf, 'xLocEmi')),
    competencia: orDash(formatDate(competenciaRaw)),
    dataHoraEmissao: orDash(formatDateTime(dhProc)),
    dpsNumero: orDash(text(infDps, 'nDPS')),
    dpsSerie: orDash(text(infDps, 'serie')),
    dpsDataHora: orDash(formatDateTime(text(infDps, 'dhEmi'))),
    emitente: label(EMITENTE, tpEmit),
    situacao: label(SITUACAO, text(inf, 'cStat')),
    finalidade: label(FINALIDADE, text(infDps, 'IBSCBS/finNFSe') ?? '0'),
    prestador,
    tomador: toma ? readParty(toma) : null,
    destinatario,
    intermediario: interm ? readParty(interm) : null,
    servico: {
      codigoTributacaoNacional: cTribNac
        ? `${formatCodigoTributacaoNacional(cTribNac)}${text(inf, 'xTribNac') ? ` - ${text(inf, 'xTribNac')}` : ''}`
        : DASH,
      codigoTributacaoMunicipal: text(cServ, 'cTribMun')
        ? `${text(cServ, 'cTribMun')}${text(inf, 'xTribMun') ? ` - ${text(inf, 'xTribMun')}` : ''}`
        : DASH,
      codigoNbs: cNbs ? `${formatNbs(cNbs)}${xNbs ? ` - ${xNbs}` : ''}` : DASH,
      localPrestacao: cPaisPrestacao ? countryName(cPaisPrestacao) : municipioUf(cLocPrestacao, xLocPrestacao),
      descricaoTributacao: orDash(text(inf, 'xTribMun') ?? text(inf, 'xTribNac')),
      descricao: orDash(text(cServ, 'xDescServ')),
    },
    issqn: readIssqn(inf, infDps, cTribNac),
    federal: readFederal(infDps, competenciaRaw),
    ibsCbs: readIbsCbs(inf, infDps),
    totais: {
      valorServico: formatMoney(text(dpsValores, 'vServPrest/vServ')),
      descontoIncondicionado: formatMoney(text(dpsValores, 'vDescCondIncond/vDescIncond')),
      descontoCondicionado: formatMoney(text(dpsValores, 'vDescCondIncond/vDescCond')),
      totalRetencoes: formatMoney(text(nfseValores, 'vTotalRet')),
      valorLiquido: formatMoney(text(nfseValores, 'vLiq')),
      totalIbsCbs: formatMoney(sumDecimals(text(tot, 'gIBS/vIBSTot'), text(tot, 'gCBS/vCBS'))),
      // Without an IBS/CBS group (notes before the reform layout) the total is the net value itself.
      valorLiquidoMaisIbsCbs: formatMoney(text(tot, 'vTotNF') ?? text(nfseValores, 'vLiq')),
    },
    informacoesComplementares: readInformacoesComplementares(inf, infDps),
    tributosAproximados: readTributosAproximados(infDps),
    qrCodeUrl: CONSULTA_PUBLICA_URL + chave,
    processadaEm,
  };
  return { ok: true, model };
}

/** The situation printed on the DANFSe of a cancelled note (the NFS-e's cStat still says how it was generated). */
export const SITUACAO_CANCELADA = 'NFS-e Cancelada';

/** The model as printed for a cancelled note: its situation field says so (besides the watermark). */
export function asCancelled(model: DanfseModel): DanfseModel {
  return { ...model, situacao: SITUACAO_CANCELADA };
}

/** The line printed in the header of a cancelled note. */
export function describeCancellation(at: Date): string {
  return `NFS-e CANCELADA em ${formatBrasiliaDateTime(at)} (horário de Brasília)`;
}
