import type {
  FieldError,
  NormalizedAddress,
  NormalizedInvoice,
  NormalizedParty,
  PartyId,
} from '../../domain/invoice-request.ts';
import { roundMoney } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { findServiceCode, NO_ISS_ICMS_INCIDENCE } from '../../domain/service-codes.ts';
import { formatDateTimeWithOffset } from '../../xml/datetime.ts';
import { escapeXmlAttr, escapeXmlText } from '../../xml/escape.ts';
import { toLatin1Line } from '../../xml/latin1.ts';

/**
 * DPS 1.01 (Sistema Nacional NFS-e) from a NormalizedInvoice: unsigned `<DPS>`, no XML declaration, no whitespace
 * between tags, elements in XSD order, text already in C14N form (so signing digests exactly these bytes).
 *
 * The builder never throws for fiscal data: a group the data cannot complete is left out (the XSD stays valid
 * and Sefin answers with its own rule code). `checkDpsRequirements` lists those national requirements up front,
 * as field errors, so that callers can refuse the invoice before a number is spent.
 */

export const NFSE_NAMESPACE = 'http://www.sped.fazenda.gov.br/nfse';
export const DPS_LAYOUT_VERSION = '1.01';
/** Brasília time: dhEmi is written with this offset. */
const BRASILIA_OFFSET_MINUTES = -180;

export interface BuildDpsInput {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  /** DPS series, 1 to 5 digits (own application range 00001-49999, E0010). */
  serie: string;
  /** DPS number, 1 to 15 digits. */
  nDPS: number;
  dhEmi: Date;
  /** 1 produção, 2 homologação (produção restrita). */
  tpAmb: 1 | 2;
  /** Application version, 1 to 20 characters. */
  verAplic: string;
}

export interface BuiltDps {
  /** Unsigned DPS; sign `infDPS`. */
  xml: string;
  /** infDPS/@Id, 45 characters. */
  id: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Text and number formatting
// ---------------------------------------------------------------------------------------------------------------

/**
 * A single-line value for the plain `xs:string` types (names, foreign ids, foreign city and postal code, work and
 * event ids): any character is allowed there, so only whitespace is collapsed and the ends trimmed; cut at `max`.
 */
function toPlainString(value: string, max: number): string {
  return [...value.normalize('NFC').replace(/\s+/g, ' ').trim()].slice(0, max).join('').trim();
}

/**
 * A multi-line description (`TSDesc2000`): each line cleaned like {@link toLatin1Line}, line breaks kept as LF,
 * empty lines at the ends removed; cut at `max` characters.
 */
function toDescription(value: string, max: number): string {
  const text = value
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => toLatin1Line(line, max))
    .join('\n')
    .trim();
  return [...text].slice(0, max).join('').trim();
}

/** Money with 2 decimals (`TSDec15V2`: "0.00", "1500.00"). */
function money(value: number): string {
  return roundMoney(value).toFixed(2);
}

/** A percentage with 2 decimals (`TSDec1V2`/`TSDec2V2`/`TSDec3V2`). */
function rate(value: number): string {
  return roundMoney(value).toFixed(2);
}

// ---------------------------------------------------------------------------------------------------------------
// XML assembly: a group with no content is left out.
// ---------------------------------------------------------------------------------------------------------------

type Part = string | null | undefined | false;

function group(name: string, ...children: Part[]): string {
  const content = children.filter((c): c is string => typeof c === 'string' && c !== '').join('');
  return content === '' ? '' : `<${name}>${content}</${name}>`;
}

/** A leaf; null or empty values are left out. */
function leaf(name: string, value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  return `<${name}>${escapeXmlText(String(value))}</${name}>`;
}

// ---------------------------------------------------------------------------------------------------------------
// Id
// ---------------------------------------------------------------------------------------------------------------

/**
 * infDPS/@Id: `DPS` + cLocEmi (7) + tpInsc (1 CPF, 2 CNPJ) + inscription (14, CPF left-padded with zeros) +
 * series (5, zero-padded) + nDPS (15, zero-padded): 45 characters (TSIdDPS, E0004).
 */
export function buildDpsId(input: {
  cLocEmi: string;
  provider: { cnpj: string } | { cpf: string };
  serie: string;
  nDPS: number;
}): string {
  const { cLocEmi, serie, nDPS } = input;
  if (!/^\d{7}$/.test(cLocEmi)) throw new Error(`buildDpsId: cLocEmi must have 7 digits, got '${cLocEmi}'`);
  if (!/^\d{1,5}$/.test(serie) || Number(serie) === 0) throw new Error(`buildDpsId: invalid series '${serie}'`);
  if (!Number.isSafeInteger(nDPS) || nDPS < 1 || nDPS > 999_999_999_999_999) {
    throw new Error(`buildDpsId: nDPS must be an integer from 1 to 15 digits, got ${nDPS}`);
  }
  const [tpInsc, inscription] = 'cnpj' in input.provider ? ['2', input.provider.cnpj] : ['1', input.provider.cpf];
  if (!/^\d{14}$/.test(inscription) && !/^\d{11}$/.test(inscription)) {
    throw new Error('buildDpsId: the provider inscription must be a CNPJ (14) or CPF (11) of digits');
  }
  return `DPS${cLocEmi}${tpInsc}${inscription.padStart(14, '0')}${serie.padStart(5, '0')}${String(nDPS).padStart(15, '0')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------------------------------------------

const PHONE = /^\d{6,20}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function phone(value: string | null | undefined): string | null {
  const digits = (value ?? '').replace(/\D/g, '');
  return PHONE.test(digits) ? digits : null;
}

function email(value: string | null | undefined): string | null {
  const v = (value ?? '').trim();
  return v.length >= 1 && v.length <= 80 && EMAIL.test(v) ? toLatin1Line(v, 80) : null;
}

function identification(id: PartyId): string {
  switch (id.kind) {
    case 'cnpj':
      return leaf('CNPJ', id.cnpj);
    case 'cpf':
      return leaf('CPF', id.cpf);
    case 'nif':
      return leaf('NIF', toPlainString(id.nif, 40));
    case 'semNif':
      return leaf('cNaoNIF', String(id.motivo));
  }
}

/** What TCEndereco needs; null when the address cannot fill it. */
function missingAddressParts(address: NormalizedAddress | null, path: string): string[] {
  if (!address) return [path];
  const parts: [unknown, string][] = address.nacional
    ? [
        [address.codigoMunicipio, 'cidade'],
        [address.cep, 'cep'],
        [address.logradouro, 'logradouro'],
        [address.numero, 'numero'],
        [address.bairro, 'bairro'],
      ]
    : [
        [address.cep, 'cep'],
        [address.cidade, 'cidade'],
        [address.estadoProvincia, 'estadoProvincia'],
        [address.logradouro, 'logradouro'],
        [address.numero, 'numero'],
        [address.bairro, 'bairro'],
      ];
  return parts.filter(([v]) => !v).map(([, name]) => `${path}.${name}`);
}

/** TCEndereco (toma, dest): national `endNac` (cMun + CEP) or foreign `endExt`, then street, number, district. */
function addressGroup(address: NormalizedAddress | null): string {
  if (!address || missingAddressParts(address, 'x').length > 0) return '';
  const head = address.nacional
    ? group('endNac', leaf('cMun', address.codigoMunicipio), leaf('CEP', address.cep))
    : group(
        'endExt',
        leaf('cPais', address.pais),
        leaf('cEndPost', toPlainString(address.cep!, 11)),
        leaf('xCidade', toPlainString(address.cidade!, 60)),
        leaf('xEstProvReg', toPlainString(address.estadoProvincia!, 60)),
      );
  return group(
    'end',
    head,
    leaf('xLgr', toLatin1Line(address.logradouro!, 255)),
    leaf('nro', toLatin1Line(address.numero!, 60)),
    address.complemento && leaf('xCpl', toLatin1Line(address.complemento, 156)),
    leaf('xBairro', toLatin1Line(address.bairro!, 60)),
  );
}

/** TCEnderObraEvento / TCEnderecoSimples: CEP (Brazil) or endExt without country, then street, number, district. */
function simpleAddressGroup(address: NormalizedAddress | null): string {
  if (!address?.logradouro || !address.numero || !address.bairro) return '';
  let head: string;
  if (address.nacional) {
    if (!address.cep) return '';
    head = leaf('CEP', address.cep);
  } else {
    if (!address.cep || !address.cidade || !address.estadoProvincia) return '';
    head = group(
      'endExt',
      leaf('cEndPost', toPlainString(address.cep, 11)),
      leaf('xCidade', toPlainString(address.cidade, 60)),
      leaf('xEstProvReg', toPlainString(address.estadoProvincia, 60)),
    );
  }
  return group(
    'end',
    head,
    leaf('xLgr', toLatin1Line(address.logradouro, 255)),
    leaf('nro', toLatin1Line(address.numero, 60)),
    address.complemento && leaf('xCpl', toLatin1Line(address.complemento, 156)),
    leaf('xBairro', toLatin1Line(address.bairro, 60)),
  );
}

function takerGroup(party: NormalizedParty): string {
  const im = party.inscricaoMunicipal ? toPlainString(party.inscricaoMunicipal, 15) : null;
  return group(
    'toma',
    identification(party.id),
    leaf('IM', im),
    leaf('xNome', toPlainString(party.nome, 300)),
    addressGroup(party.endereco),
    leaf('fone', phone(party.telefone)),
    leaf('email', email(party.email)),
  );
}

function recipientGroup(party: NormalizedParty): string {
  return group(
    'dest',
    identification(party.id),
    leaf('xNome', toLatin1Line(party.nome, 150)),
    addressGroup(party.endereco),
    leaf('fone', phone(party.telefone)),
    leaf('email', email(party.email)),
  );
}

function providerGroup(project: ProjectFiscalProfile, invoice: NormalizedInvoice): string {
  const { regime } = invoice;
  const im = project.inscricaoMunicipal?.trim() ? toPlainString(project.inscricaoMunicipal, 15) : null;
  // tpEmit 1: the provider identified by CNPJ is the emitter, so neither xNome (E0121) nor end (E0128).
  return group(
    'prest',
    leaf('CNPJ', project.cnpj),
    leaf('IM', im),
    leaf('fone', phone(project.telefone)),
    leaf('email', email(project.email)),
    group(
      'regTrib',
      leaf('opSimpNac', regime.opSimpNac),
      leaf('regApTribSN', regime.opSimpNac === 3 ? regime.regApTribSN : null),
      leaf('regEspTrib', regime.regEspTrib),
    ),
  );
}

/** E0590/E0591: the country of the result is declared only for an export performed in Brazil whose incidence is at
 * the provider, or at a taker abroad or unknown. */
function declaresCountryOfResult(invoice: NormalizedInvoice): boolean {
  const { iss, servico, tomador } = invoice;
  if (iss.tribISSQN !== 3 || servico.localPrestacao.kind !== 'municipio') return false;
  if (servico.incidencia === 'LP') return false;
  if (servico.incidencia === 'ET') return !tomador.endereco?.nacional;
  return true;
}

function obraGroup(invoice: NormalizedInvoice): string {
  const obra = invoice.servico.obra;
  if (!obra) return '';
  const choice =
    (obra.codigoObra && leaf('cObra', toPlainString(obra.codigoObra, 30))) ||
    (obra.codigoCib && leaf('cCIB', toPlainString(obra.codigoCib, 8))) ||
    simpleAddressGroup(obra.endereco);
  if (!choice) return '';
  return group(
    'obra',
    obra.inscricaoImobiliaria && leaf('inscImobFisc', toPlainString(obra.inscricaoImobiliaria, 30)),
    choice,
  );
}

function eventGroup(invoice: NormalizedInvoice): string {
  const evento = invoice.servico.evento;
  if (!evento) return '';
  const choice = (evento.id && leaf('idAtvEvt', toPlainString(evento.id, 30))) || simpleAddressGroup(evento.endereco);
  if (!choice) return '';
  return group(
    'atvEvento',
    leaf('xNome', toLatin1Line(evento.nome, 255)),
    leaf('dtIni', evento.dataInicio),
    leaf('dtFim', evento.dataFim),
    choice,
  );
}

/**
 * The cTribMun of the national layout (3 digits, XSD TSCodTribMun) of servico.codigoTributacaoMunicipal: a 3-digit
 * breakdown as is; Salvador's 7-digit municipal taxation code (item and subitem `IISS` + activity `NNN`, spec
 * 4.7.4; domain/municipal-breakdowns.ts) carries its item and subitem in cTribNac (they must agree) and its last 3
 * digits here. Null when the value cannot be expressed.
 */
export function nationalCTribMun(code: string | null, cTribNac: string): string | null {
  if (!code) return null;
  if (/^\d{3}$/.test(code)) return code;
  if (/^\d{7}$/.test(code) && code.slice(0, 4) === cTribNac.slice(0, 4)) return code.slice(4);
  return null;
}

function serviceGroup(invoice: NormalizedInvoice): string {
  const { servico, exportacao } = invoice;
  const local = servico.localPrestacao;
  const cTribMun = nationalCTribMun(servico.codigoTributacaoMunicipal, servico.cTribNac);
  return group(
    'serv',
    group(
      'locPrest',
      local.kind === 'municipio' ? leaf('cLocPrestacao', local.codigoMunicipio) : leaf('cPaisPrestacao', local.pais),
    ),
    group(
      'cServ',
      leaf('cTribNac', servico.cTribNac),
      cTribMun && leaf('cTribMun', cTribMun),
      leaf('xDescServ', toDescription(servico.descricao, 2000)),
      leaf('cNBS', servico.nbs),
    ),
    exportacao &&
      group(
        'comExt',
        leaf('mdPrestacao', exportacao.modoPrestacao),
        leaf('vincPrest', exportacao.vinculoPartes),
        leaf('tpMoeda', exportacao.codigoMoeda),
        leaf('vServMoeda', money(exportacao.valorServicoMoeda)),
        leaf('mecAFComexP', exportacao.fomentoPrestador),
        leaf('mecAFComexT', exportacao.fomentoTomador),
        leaf('movTempBens', exportacao.movimentacaoTemporariaBens),
        leaf('nDI', exportacao.declaracaoImportacao && toLatin1Line(exportacao.declaracaoImportacao, 12)),
        leaf('nRE', exportacao.registroExportacao && toLatin1Line(exportacao.registroExportacao, 12)),
        leaf('mdic', exportacao.compartilharMdic ? 1 : 0),
      ),
    obraGroup(invoice),
    eventGroup(invoice),
    group(
      'infoCompl',
      servico.obra?.art && leaf('idDocTec', toPlainString(servico.obra.art, 40)),
      servico.documentoReferencia && leaf('docRef', toLatin1Line(servico.documentoReferencia, 255)),
      servico.pedidoCompra && leaf('xPed', toLatin1Line(servico.pedidoCompra, 60)),
      servico.informacoesComplementares && leaf('xInfComp', toLatin1Line(servico.informacoesComplementares, 2000)),
    ),
  );
}

function valuesGroup(invoice: NormalizedInvoice): string {
  const { iss, federal, totaisTributos, exportacao } = invoice;
  const tribMun = group(
    'tribMun',
    leaf('tribISSQN', iss.tribISSQN),
    declaresCountryOfResult(invoice) && leaf('cPaisResult', exportacao?.paisResultado),
    iss.tribISSQN === 2 && leaf('tpImunidade', iss.tipoImunidade),
    leaf('tpRetISSQN', iss.tpRetISSQN),
    iss.pAliq !== null && leaf('pAliq', rate(iss.pAliq)),
  );
  const pc = federal?.pisCofins;
  const tribFed =
    federal &&
    group(
      'tribFed',
      pc &&
        group(
          'piscofins',
          leaf('CST', pc.cst),
          pc.baseCalculo !== null && leaf('vBCPisCofins', money(pc.baseCalculo)),
          pc.aliquotaPis !== null && leaf('pAliqPis', rate(pc.aliquotaPis)),
          pc.aliquotaCofins !== null && leaf('pAliqCofins', rate(pc.aliquotaCofins)),
          pc.valorPis !== null && leaf('vPis', money(pc.valorPis)),
          pc.valorCofins !== null && leaf('vCofins', money(pc.valorCofins)),
          leaf('tpRetPisCofins', pc.tipoRetencao),
        ),
      federal.retencaoCp !== null && leaf('vRetCP', money(federal.retencaoCp)),
      federal.retencaoIrrf !== null && leaf('vRetIRRF', money(federal.retencaoIrrf)),
      federal.retencaoCsll !== null && leaf('vRetCSLL', money(federal.retencaoCsll)),
    );
  let totTrib: string;
  switch (totaisTributos.kind) {
    case 'valores':
      totTrib = group(
        'vTotTrib',
        leaf('vTotTribFed', money(totaisTributos.federal)),
        leaf('vTotTribEst', money(totaisTributos.estadual)),
        leaf('vTotTribMun', money(totaisTributos.municipal)),
      );
      break;
    case 'percentuais':
      totTrib = group(
        'pTotTrib',
        leaf('pTotTribFed', rate(totaisTributos.federal)),
        leaf('pTotTribEst', rate(totaisTributos.estadual)),
        leaf('pTotTribMun', rate(totaisTributos.municipal)),
      );
      break;
    case 'simples':
      totTrib = leaf('pTotTribSN', rate(totaisTributos.percentual));
      break;
    default:
      totTrib = leaf('indTotTrib', 0);
  }
  return group(
    'valores',
    group('vServPrest', leaf('vServ', money(invoice.total))),
    group('trib', tribMun, tribFed, group('totTrib', totTrib)),
  );
}

function ibsCbsGroup(invoice: NormalizedInvoice): string {
  const ibs = invoice.ibscbs;
  if (!ibs) return '';
  return group(
    'IBSCBS',
    leaf('finNFSe', 0),
    leaf('indFinal', ibs.consumidorFinal ? 1 : 0),
    leaf('cIndOp', ibs.indicadorOperacao),
    leaf('tpOper', ibs.tipoOperacao),
    // tpEnteGov 9 (other) is not in TSRTCTpEnteGov: normalized to null, so omitted.
    leaf('tpEnteGov', ibs.tipoEnteGovernamental),
    leaf('indDest', ibs.indDest),
    ibs.indDest === 1 && ibs.destinatario && recipientGroup(ibs.destinatario),
    group(
      'valores',
      group('trib', group('gIBSCBS', leaf('CST', ibs.cst), leaf('cClassTrib', ibs.classificacaoTributaria))),
    ),
  );
}

/** dCompet: the emission date when the accrual month is the emission month, else the first day of the month. */
function competenceDate(competencia: string, dhEmi: string): string {
  const emissionDay = dhEmi.slice(0, 10);
  if (competencia === emissionDay.slice(0, 7)) return emissionDay;
  if (competencia > emissionDay.slice(0, 7)) {
    throw new Error(`buildDps: competencia ${competencia} is after the emission date ${emissionDay} (E0015)`);
  }
  return `${competencia}-01`;
}

// ---------------------------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------------------------

/**
 * Builds the unsigned DPS. Throws only for programmer errors (series, number, version or project municipality
 * out of their formats, competencia after dhEmi); fiscal data problems are for `checkDpsRequirements`.
 */
export function buildDps(input: BuildDpsInput): BuiltDps {
  const { project, invoice, serie, nDPS, dhEmi, tpAmb, verAplic } = input;
  const cLocEmi = project.codigoMunicipio ?? '';
  if (!/^\d{14}$/.test(project.cnpj)) throw new Error('buildDps: the project CNPJ must be 14 digits');
  if (Number.isNaN(dhEmi.getTime())) throw new Error('buildDps: invalid dhEmi');
  const version = toLatin1Line(verAplic, 20);
  if (!version) throw new Error('buildDps: verAplic is required');
  if (tpAmb !== 1 && tpAmb !== 2) throw new Error('buildDps: tpAmb must be 1 or 2');
  const id = buildDpsId({ cLocEmi, provider: { cnpj: project.cnpj }, serie, nDPS });
  const emitted = formatDateTimeWithOffset(dhEmi, BRASILIA_OFFSET_MINUTES);
  const infDps =
    leaf('tpAmb', tpAmb) +
    leaf('dhEmi', emitted) +
    leaf('verAplic', version) +
    leaf('serie', serie) +
    leaf('nDPS', String(nDPS)) +
    leaf('dCompet', competenceDate(invoice.competencia, emitted)) +
    leaf('tpEmit', 1) +
    leaf('cLocEmi', cLocEmi) +
    providerGroup(project, invoice) +
    takerGroup(invoice.tomador) +
    serviceGroup(invoice) +
    valuesGroup(invoice) +
    ibsCbsGroup(invoice);
  const xml =
    `<DPS xmlns="${NFSE_NAMESPACE}" versao="${DPS_LAYOUT_VERSION}">` +
    `<infDPS Id="${escapeXmlAttr(id)}">${infDps}</infDPS></DPS>`;
  return { xml, id };
}

/**
 * The national environment's own requirements on a normalized invoice (Anexo I business rules that the builder
 * cannot satisfy by itself), as field errors with the body path. Empty when the DPS can be built complete.
 */
export function checkDpsRequirements(project: ProjectFiscalProfile, invoice: NormalizedInvoice): FieldError[] {
  const errors: FieldError[] = [];
  const { tomador, servico, iss, exportacao, regime } = invoice;
  const needAddress = (reason: string, nacional: boolean) => {
    const address = tomador.endereco;
    if (address && address.nacional !== nacional) {
      errors.push({
        field: 'tomador.endereco.pais',
        message: `${reason}: the taker address must be ${nacional ? 'in Brazil' : 'abroad'}`,
      });
      return;
    }
    for (const field of missingAddressParts(address, 'tomador.endereco')) {
      errors.push({ field, message: `required: ${reason}` });
    }
  };
  if (!/^\d{14}$/.test(project.cnpj)) errors.push({ field: 'project.cnpj', message: '14 digits' });
  if (tomador.id.kind === 'cnpj') needAddress('a taker identified by CNPJ needs its national address (E0235)', true);
  else if (iss.retido) needAddress('ISS withheld by the taker needs its national address (E0237)', true);
  else if (servico.incidencia === 'ET' && iss.tribISSQN === 1) {
    if (!tomador.endereco || missingAddressParts(tomador.endereco, 'x').length > 0) {
      for (const field of missingAddressParts(tomador.endereco, 'tomador.endereco')) {
        errors.push({ field, message: 'required: the ISS of this code is due at the taker establishment (E0234)' });
      }
    }
  }
  if (tomador.id.kind === 'nif' || tomador.id.kind === 'semNif') {
    needAddress('a taker abroad needs its foreign address (E0242)', false);
  }
  if (iss.tribISSQN === 2 && !iss.tipoImunidade) {
    errors.push({ field: 'valores.tipoImunidade', message: 'required for immunity (tribISSQN 2, E0592)' });
  }
  const foreignTaker = tomador.endereco ? !tomador.endereco.nacional : false;
  const abroad = servico.localPrestacao.kind === 'pais';
  if (!exportacao && (foreignTaker || abroad || iss.tribISSQN === 3)) {
    errors.push({
      field: 'valores.exportacao',
      message: 'required with a taker abroad, a service performed abroad or an export (E0330)',
    });
  }
  if (!servico.nbs && (foreignTaker || abroad)) {
    errors.push({
      field: 'servico.nbs',
      message: 'required with a taker abroad or a service performed abroad (E0318)',
    });
  }
  if (declaresCountryOfResult(invoice) && !exportacao?.paisResultado) {
    errors.push({ field: 'valores.exportacao.paisResultado', message: 'required for this export (E0590)' });
  }
  const code = servico.cTribNac;
  const requiredGroup = findServiceCode(code)?.requiredGroup ?? null;
  if (requiredGroup === 'obra' && !servico.obra) {
    errors.push({ field: 'servico.obra', message: `required for code ${code} (E0370)` });
  } else if (servico.obra && requiredGroup !== 'obra' && code !== NO_ISS_ICMS_INCIDENCE) {
    errors.push({ field: 'servico.obra', message: `not allowed for code ${code} (E0372)` });
  } else if (
    servico.obra?.endereco &&
    servico.obra.endereco.nacional === abroad &&
    !servico.obra.codigoObra &&
    !servico.obra.codigoCib
  ) {
    errors.push({
      field: 'servico.obra.endereco.pais',
      message: abroad
        ? 'the work is abroad: foreign address (E0384)'
        : 'the work is in Brazil: national address (E0386)',
    });
  } else if (servico.obra && !obraGroup(invoice)) {
    errors.push({
      field: 'servico.obra',
      message: `send codigoObra, codigoCib or a complete endereco (${abroad ? 'cep, cidade, estadoProvincia' : 'cep'}, logradouro, numero, bairro)`,
    });
  }
  if (requiredGroup === 'atvEvento' && !servico.evento) {
    errors.push({ field: 'servico.evento', message: `required for code ${code} (item 12, E0390)` });
  } else if (servico.evento && requiredGroup !== 'atvEvento' && code !== NO_ISS_ICMS_INCIDENCE) {
    errors.push({ field: 'servico.evento', message: `not allowed for code ${code} (E0392)` });
  } else if (servico.evento?.endereco && servico.evento.endereco.nacional === abroad && !servico.evento.id) {
    errors.push({
      field: 'servico.evento.endereco.pais',
      message: abroad
        ? 'the event is abroad: foreign address (E0402)'
        : 'the event is in Brazil: national address (E0404)',
    });
  } else if (servico.evento && !eventGroup(invoice)) {
    errors.push({
      field: 'servico.evento.id',
      message: 'send the event id or a complete endereco (cep, logradouro, numero, bairro)',
    });
  }
  if (regime.simples && invoice.totaisTributos.kind === 'naoInformado') {
    errors.push({
      field: 'valores.totaisTributosAproximados',
      message: 'required for Simples Nacional ME/EPP when the project has no aliquotaSimples (E0712)',
    });
  }
  if (servico.codigoTributacaoMunicipal && !nationalCTribMun(servico.codigoTributacaoMunicipal, servico.cTribNac)) {
    errors.push({
      field: 'servico.codigoTributacaoMunicipal',
      message: `the national layout takes 3 digits (or Salvador's 7: the item and subitem of ${servico.cTribNac}, then 3)`,
    });
  }
  if (invoice.ibscbs?.indDest === 1 && !invoice.ibscbs.destinatario) {
    errors.push({ field: 'valores.ibscbs.destinatario', message: 'required with destinatarioPrincipal 1' });
  }
  return errors;
}
