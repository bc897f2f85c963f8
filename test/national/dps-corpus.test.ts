import { spawnSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { buildDps, checkDpsRequirements } from '../../src/engines/national/dps-builder.ts';
import { type SignatureAlgorithm, type SigningKey, signXml } from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { hasTool } from '../support/tools.ts';

const XMLSEC1 = hasTool('xmlsec1');
const NOW = new Date('2026-08-20T15:00:00Z');
const DH_EMI = new Date(NOW.getTime() - 60_000);
const SAO_PAULO = '3550308'; // uses the national emitter
const CAMPINAS = '3509502'; // does not

function project(overrides: Partial<ProjectFiscalProfile> = {}): ProjectFiscalProfile {
  return fiscalProfile({
    id: 'prj_corpus',
    razaoSocial: 'ACME SERVICOS LTDA',
    inscricaoMunicipal: '12345678',
    codigoMunicipio: SAO_PAULO,
    email: 'fiscal@acme.com.br',
    telefone: '(11) 3333-4444',
    codigoTributacao: '170801',
    serieNfse: '1608',
    ...overrides,
  });
}

const NATIONAL_ADDRESS = {
  logradouro: 'Avenida Paulista',
  numero: '1000',
  complemento: 'Conjunto 101',
  bairro: 'Bela Vista',
  cidade: 'São Paulo',
  uf: 'SP',
  cep: '01310100',
};
const GERMAN_ADDRESS = {
  pais: 'DE',
  uf: 'EX',
  logradouro: 'Unter den Linden',
  numero: '5',
  bairro: 'Mitte',
  cidade: 'Berlin',
  estadoProvincia: 'Berlin',
  cep: '10117',
};
const US_ADDRESS = {
  pais: 'US',
  logradouro: 'Congress Avenue',
  numero: '100',
  bairro: 'Downtown',
  cidade: 'Austin',
  uf: 'TX',
  cep: '78701',
};
const EXPORT = { modoPrestacao: 1 as const, codigoMoeda: '220', valorServicoMoeda: 290.5, paisResultado: 'US' };
const SOFTWARE_EXPORT_FRAMING = { indicadorOperacao: '100301', classificacaoTributaria: '410027' };

function body(change: (b: InvoiceRequest) => void = () => {}): InvoiceRequest {
  const b: InvoiceRequest = {
    tomador: {
      cnpj: '11444777000161',
      nome: 'Cliente Exemplo SA',
      endereco: { ...NATIONAL_ADDRESS },
    },
    servico: { descricao: 'Cessão de direito de uso de marca (franquia)' },
    valores: { total: 1500, aliquotaIss: 2 },
  };
  change(b);
  return b;
}

interface CorpusCase {
  name: string;
  project?: ProjectFiscalProfile;
  body: InvoiceRequest;
  /** Fragments the DPS must contain. */
  contains?: string[];
  /** Fragments it must not contain. */
  lacks?: string[];
}

const CORPUS: CorpusCase[] = [
  {
    name: 'CNPJ taker, IBS/CBS from the table (17.08), regime 1 in a national-emitter municipality',
    body: body(),
    contains: [
      '<toma><CNPJ>11444777000161</CNPJ><xNome>Cliente Exemplo SA</xNome><end><endNac><cMun>3550308</cMun><CEP>01310100</CEP></endNac><xLgr>Avenida Paulista</xLgr><nro>1000</nro><xCpl>Conjunto 101</xCpl><xBairro>Bela Vista</xBairro></end></toma>',
      '<cTribNac>170801</cTribNac><xDescServ>Cessão de direito de uso de marca (franquia)</xDescServ><cNBS>111100000</cNBS>',
      '<tribMun><tribISSQN>1</tribISSQN><tpRetISSQN>1</tpRetISSQN></tribMun>',
      '<totTrib><indTotTrib>0</indTotTrib></totTrib>',
      '<IBSCBS><finNFSe>0</finNFSe><indFinal>0</indFinal><cIndOp>100301</cIndOp><indDest>0</indDest><valores><trib><gIBSCBS><CST>000</CST><cClassTrib>000001</cClassTrib></gIBSCBS></trib></valores></IBSCBS>',
      '<prest><CNPJ>11222333000181</CNPJ><IM>12345678</IM><fone>1133334444</fone><email>fiscal@acme.com.br</email><regTrib><opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib></regTrib></prest>',
    ],
    lacks: ['<pAliq>', '<xNome>ACME', '<tribFed>'],
  },
  {
    name: 'CPF taker with a national address',
    body: body((b) => {
      b.tomador = { cpf: '52998224725', nome: 'Maria da Silva', endereco: { ...NATIONAL_ADDRESS } };
    }),
    contains: ['<toma><CPF>52998224725</CPF><xNome>Maria da Silva</xNome><end><endNac>'],
  },
  {
    name: 'CPF taker without address',
    body: body((b) => {
      b.tomador = { cpf: '11144477735', nome: 'João Souza' };
    }),
    contains: ['<toma><CPF>11144477735</CPF><xNome>João Souza</xNome></toma>'],
  },
  {
    name: 'taker with municipal registration, phone and e-mail',
    body: body((b) => {
      b.tomador.inscricaoMunicipal = '99887766';
      b.tomador.telefone = '11987654321';
      b.tomador.email = 'contas@cliente.com.br';
    }),
    contains: [
      '<toma><CNPJ>11444777000161</CNPJ><IM>99887766</IM><xNome>',
      '</end><fone>11987654321</fone><email>contas@cliente.com.br</email></toma>',
    ],
  },
  {
    name: 'NIF taker abroad, export with the country of the result and an explicit framing',
    project: project({ codigoTributacao: '010101' }),
    body: body((b) => {
      b.tomador = { nif: 'DE811907980', nome: 'Kunde GmbH', endereco: { ...GERMAN_ADDRESS } };
      b.servico.nbs = '115022000';
      b.valores.aliquotaIss = 0;
      b.valores.exportacao = { ...EXPORT, codigoMoeda: '978', paisResultado: 'DE', compartilharMdic: true };
      b.valores.ibscbs = { ...SOFTWARE_EXPORT_FRAMING };
    }),
    contains: [
      '<toma><NIF>DE811907980</NIF><xNome>Kunde GmbH</xNome><end><endExt><cPais>DE</cPais><cEndPost>10117</cEndPost><xCidade>Berlin</xCidade><xEstProvReg>Berlin</xEstProvReg></endExt>',
      '<comExt><mdPrestacao>1</mdPrestacao><vincPrest>0</vincPrest><tpMoeda>978</tpMoeda><vServMoeda>290.50</vServMoeda><mecAFComexP>01</mecAFComexP><mecAFComexT>01</mecAFComexT><movTempBens>1</movTempBens><mdic>1</mdic></comExt>',
      '<tribMun><tribISSQN>3</tribISSQN><cPaisResult>DE</cPaisResult><tpRetISSQN>1</tpRetISSQN></tribMun>',
      '<cIndOp>100301</cIndOp><indDest>0</indDest><valores><trib><gIBSCBS><CST>410</CST><cClassTrib>410027</cClassTrib>',
    ],
  },
  {
    name: 'taker abroad without NIF (cNaoNIF), export without IBS/CBS framing',
    project: project({ codigoTributacao: '010101' }),
    body: body((b) => {
      b.tomador = { motivoNaoNif: 1, nome: 'Client Inc', endereco: { ...US_ADDRESS } };
      b.servico.nbs = '115021000';
      b.valores.aliquotaIss = 0;
      b.valores.exportacao = { ...EXPORT };
    }),
    contains: [
      '<toma><cNaoNIF>1</cNaoNIF><xNome>Client Inc</xNome><end><endExt><cPais>US</cPais>',
      '<cNBS>115021000</cNBS>',
    ],
    lacks: ['<IBSCBS>'],
  },
  {
    name: 'taker abroad with a non-Latin name (kept as is) and a description with characters outside Latin-1',
    project: project({ codigoTributacao: '010101' }),
    body: body((b) => {
      b.tomador = {
        nif: 'JP-1234567890123',
        nome: '株式会社テスト',
        endereco: {
          pais: 'JP',
          logradouro: 'Chiyoda 1-1',
          numero: '1',
          bairro: 'Chiyoda',
          cidade: 'Tokyo',
          estadoProvincia: 'Tokyo',
          cep: '100-0001',
        },
      };
      b.servico.descricao = 'Consultoria 🚀 em “software” — fase 1';
      b.servico.nbs = '115021000';
      b.valores.aliquotaIss = 0;
      b.valores.exportacao = { ...EXPORT, codigoMoeda: '470', paisResultado: 'JP' };
    }),
    contains: [
      '<NIF>JP-1234567890123</NIF><xNome>株式会社テスト</xNome>',
      '<cPais>JP</cPais><cEndPost>100-0001</cEndPost>',
      '<xDescServ>Consultoria em "software" - fase 1</xDescServ>',
    ],
  },
  {
    name: 'service performed abroad (cPaisPrestacao)',
    project: project({ codigoTributacao: '010101' }),
    body: body((b) => {
      b.tomador = { nif: '12-3456789', nome: 'Client Inc', endereco: { ...US_ADDRESS } };
      b.servico.localPrestacao = 'US';
      b.servico.nbs = '115021000';
      b.valores.aliquotaIss = 0;
      b.valores.exportacao = { ...EXPORT, modoPrestacao: 3 };
    }),
    contains: ['<locPrest><cPaisPrestacao>US</cPaisPrestacao></locPrest>', '<mdPrestacao>3</mdPrestacao>'],
    lacks: ['<cPaisResult>', '<IBSCBS>'],
  },
  {
    name: 'export with temporary movement of goods and export registration',
    project: project({ codigoTributacao: '010101' }),
    body: body((b) => {
      b.tomador = { nif: '12-3456789', nome: 'Client Inc', endereco: { ...US_ADDRESS } };
      b.servico.nbs = '115021000';
      b.valores.aliquotaIss = 0;
      b.valores.exportacao = {
        ...EXPORT,
        modoPrestacao: 4,
        vinculoPartes: 2,
        fomentoPrestador: '02',
        fomentoTomador: '24',
        movimentacaoTemporariaBens: 3,
        registroExportacao: '260012345',
      };
    }),
    contains: [
      '<vincPrest>2</vincPrest>',
      '<mecAFComexP>02</mecAFComexP><mecAFComexT>24</mecAFComexT><movTempBens>3</movTempBens><nRE>260012345</nRE><mdic>0</mdic>',
    ],
  },
  {
    name: 'building work (07.02) with CNO and ART, in a municipality outside the national emitter',
    body: body((b) => {
      b.servico.codigo = '070201';
      b.servico.descricao = 'Execução de obra de construção civil';
      b.servico.localPrestacao = CAMPINAS;
      b.servico.obra = { codigoObra: '900012345678', art: 'ART-SP-2026-000123' };
      b.valores.ibscbs = { nbs: '101011100', classificacaoTributaria: '200046' };
    }),
    contains: [
      '<locPrest><cLocPrestacao>3509502</cLocPrestacao></locPrest>',
      '<obra><cObra>900012345678</cObra></obra><infoCompl><idDocTec>ART-SP-2026-000123</idDocTec></infoCompl>',
      '<tpRetISSQN>1</tpRetISSQN><pAliq>2.00</pAliq>',
      '<cIndOp>020201</cIndOp>',
      '<CST>200</CST><cClassTrib>200046</cClassTrib>',
    ],
  },
  {
    name: 'building work identified by its address and fiscal registration',
    body: body((b) => {
      b.servico.codigo = '070202';
      b.servico.descricao = 'Empreitada de obra';
      b.servico.obra = {
        inscricaoImobiliaria: '012.345.678-9',
        endereco: {
          logradouro: 'Rua das Obras',
          numero: 's/n',
          bairro: 'Centro',
          cidade: 'São Paulo',
          uf: 'SP',
          cep: '01002000',
        },
      };
      b.valores.ibscbs = { nbs: '101021200' };
    }),
    contains: [
      '<obra><inscImobFisc>012.345.678-9</inscImobFisc><end><CEP>01002000</CEP><xLgr>Rua das Obras</xLgr><nro>s/n</nro><xBairro>Centro</xBairro></end></obra>',
    ],
  },
  {
    name: 'event (item 12) identified by its id',
    body: body((b) => {
      b.servico.codigo = '120101';
      b.servico.descricao = 'Espetáculo teatral';
      b.servico.evento = {
        nome: 'Festival de Inverno',
        dataInicio: '2026-07-10',
        dataFim: '2026-07-12',
        id: 'EVT-2026-77',
      };
      b.valores.ibscbs = { classificacaoTributaria: '000001' };
    }),
    contains: [
      '<atvEvento><xNome>Festival de Inverno</xNome><dtIni>2026-07-10</dtIni><dtFim>2026-07-12</dtFim><idAtvEvt>EVT-2026-77</idAtvEvt></atvEvento>',
      '<cIndOp>040101</cIndOp>',
    ],
  },
  {
    name: 'event identified by its address',
    body: body((b) => {
      b.servico.codigo = '120101';
      b.servico.descricao = 'Show musical';
      b.servico.evento = {
        nome: 'Show de Verão',
        dataInicio: '2026-08-01',
        dataFim: '2026-08-01',
        endereco: {
          logradouro: 'Praça Central',
          numero: '1',
          bairro: 'Centro',
          cidade: 'São Paulo',
          uf: 'SP',
          cep: '01001000',
        },
      };
      b.valores.ibscbs = { classificacaoTributaria: '200039' };
    }),
    contains: [
      '<dtFim>2026-08-01</dtFim><end><CEP>01001000</CEP><xLgr>Praça Central</xLgr>',
      '<cClassTrib>200039</cClassTrib>',
    ],
  },
  {
    name: 'ISS withheld by the taker, regime 1 outside the national emitter (pAliq required, E0619)',
    project: project({ codigoMunicipio: CAMPINAS }),
    body: body((b) => {
      b.valores.issRetido = true;
      b.valores.aliquotaIss = 3.5;
    }),
    contains: [
      '<cLocEmi>3509502</cLocEmi>',
      '<tribMun><tribISSQN>1</tribISSQN><tpRetISSQN>2</tpRetISSQN><pAliq>3.50</pAliq></tribMun>',
    ],
  },
  {
    name: 'Simples ME/EPP with withholding (E0621) and the DAS rate as approximate taxes',
    project: project({ regimeTributario: '3', regimeIss: 1, aliquotaSimples: 6 }),
    body: body((b) => {
      b.valores.issRetido = true;
      b.valores.aliquotaIss = 2.5;
    }),
    contains: [
      '<regTrib><opSimpNac>3</opSimpNac><regApTribSN>1</regApTribSN><regEspTrib>0</regEspTrib></regTrib>',
      '<tpRetISSQN>2</tpRetISSQN><pAliq>2.50</pAliq>',
      '<totTrib><pTotTribSN>6.00</pTotTribSN></totTrib>',
    ],
  },
  {
    name: 'Simples ME/EPP without withholding (E0625) and approximate taxes in %',
    project: project({ regimeTributario: '3', regimeIss: 1, aliquotaSimples: 6 }),
    body: body((b) => {
      b.valores.totaisTributosAproximados = {
        percentualTributacaoFederal: 4.5,
        percentualTributacaoEstadual: 0,
        percentualTributacaoMunicipal: 2,
      };
    }),
    contains: [
      '<totTrib><pTotTrib><pTotTribFed>4.50</pTotTribFed><pTotTribEst>0.00</pTotTribEst><pTotTribMun>2.00</pTotTribMun></pTotTrib></totTrib>',
    ],
    lacks: ['<pAliq>', '<pTotTribSN>'],
  },
  {
    name: 'Simples above the sublimit (3e), ISS and federal outside the DAS, outside the national emitter (E0640)',
    project: project({ regimeTributario: '3e', regimeIss: 3, aliquotaSimples: 11.2, codigoMunicipio: CAMPINAS }),
    body: body((b) => {
      b.valores.aliquotaIss = 5;
    }),
    contains: [
      '<opSimpNac>3</opSimpNac><regApTribSN>3</regApTribSN>',
      '<pAliq>5.00</pAliq>',
      '<pTotTribSN>11.20</pTotTribSN>',
    ],
  },
  {
    name: 'Simples above the sublimit (3e) without regimeIss: ISS outside the DAS',
    project: project({ regimeTributario: '3e', regimeIss: null, aliquotaSimples: 9 }),
    body: body(),
    contains: ['<opSimpNac>3</opSimpNac><regApTribSN>2</regApTribSN>'],
    lacks: ['<pAliq>'],
  },
  {
    name: 'MEI: no rate, no federal block even when sent, no approximate taxes',
    project: project({ regimeTributario: '2' }),
    body: body((b) => {
      b.valores.pisCofins = { cst: '01', aliquotaPis: 0.65, aliquotaCofins: 3 };
      b.valores.retencaoIrrf = 15;
    }),
    contains: [
      '<regTrib><opSimpNac>2</opSimpNac><regEspTrib>0</regEspTrib></regTrib>',
      '<totTrib><indTotTrib>0</indTotTrib></totTrib>',
    ],
    lacks: ['<pAliq>', '<tribFed>', '<regApTribSN>'],
  },
  {
    name: 'MEI with approximate taxes in BRL',
    project: project({ regimeTributario: '2' }),
    body: body((b) => {
      b.valores.totaisTributosAproximados = { valorTributacaoFederal: 0, valorTributacaoMunicipal: 75 };
    }),
    contains: [
      '<vTotTrib><vTotTribFed>0.00</vTotTribFed><vTotTribEst>0.00</vTotTribEst><vTotTribMun>75.00</vTotTribMun></vTotTrib>',
    ],
  },
  {
    name: 'federal block generated from the project (CST 01 and rates)',
    project: project({ cstPisCofins: '01', aliquotaPis: 0.65, aliquotaCofins: 3 }),
    body: body(),
    contains: [
      '<tribFed><piscofins><CST>01</CST><vBCPisCofins>1500.00</vBCPisCofins><pAliqPis>0.65</pAliqPis><pAliqCofins>3.00</pAliqCofins><vPis>9.75</vPis><vCofins>45.00</vCofins><tpRetPisCofins>0</tpRetPisCofins></piscofins></tribFed>',
    ],
  },
  {
    name: 'PIS/COFINS from the request overriding the project: CST 06 at zero rate, withheld',
    project: project({ cstPisCofins: '01', aliquotaPis: 0.65, aliquotaCofins: 3 }),
    body: body((b) => {
      b.valores.pisCofins = { cst: '06', aliquotaPis: 0, aliquotaCofins: 0, tipoRetencao: 1 };
    }),
    contains: [
      '<piscofins><CST>06</CST><vBCPisCofins>1500.00</vBCPisCofins><pAliqPis>0.00</pAliqPis><pAliqCofins>0.00</pAliqCofins><vPis>0.00</vPis><vCofins>0.00</vCofins><tpRetPisCofins>1</tpRetPisCofins></piscofins>',
    ],
  },
  {
    name: 'PIS/COFINS CST 08 (no incidence): no base',
    body: body((b) => {
      b.valores.pisCofins = { cst: '08' };
    }),
    contains: ['<tribFed><piscofins><CST>08</CST><tpRetPisCofins>0</tpRetPisCofins></piscofins></tribFed>'],
  },
  {
    name: 'federal retentions CP, IRRF and CSLL',
    body: body((b) => {
      b.valores.retencaoCp = 10;
      b.valores.retencaoIrrf = 22.5;
      b.valores.retencaoCsll = 15;
    }),
    contains: ['<tribFed><vRetCP>10.00</vRetCP><vRetIRRF>22.50</vRetIRRF><vRetCSLL>15.00</vRetCSLL></tribFed>'],
  },
  {
    name: 'approximate taxes in BRL',
    body: body((b) => {
      b.valores.totaisTributosAproximados = {
        valorTributacaoFederal: 100.1,
        valorTributacaoEstadual: 0,
        valorTributacaoMunicipal: 30,
      };
    }),
    contains: [
      '<vTotTrib><vTotTribFed>100.10</vTotTribFed><vTotTribEst>0.00</vTotTribEst><vTotTribMun>30.00</vTotTribMun></vTotTrib>',
    ],
  },
  {
    name: 'approximate taxes in %',
    body: body((b) => {
      b.valores.totaisTributosAproximados = { percentualTributacaoFederal: 13.45, percentualTributacaoMunicipal: 2 };
    }),
    contains: [
      '<pTotTrib><pTotTribFed>13.45</pTotTribFed><pTotTribEst>0.00</pTotTribEst><pTotTribMun>2.00</pTotTribMun></pTotTrib>',
    ],
  },
  {
    name: 'IBS/CBS explicit in valores.ibscbs with every field',
    project: project({ codigoTributacao: '010101' }),
    body: body((b) => {
      b.servico.descricao = 'Desenvolvimento de sistema para órgão público';
      b.valores.ibscbs = {
        nbs: '115029000',
        indicadorOperacao: '100301',
        classificacaoTributaria: '200043',
        cst: '200',
        consumidorFinal: true,
        tipoOperacao: 1,
        tipoEnteGovernamental: 1,
      };
    }),
    contains: [
      '<cNBS>115029000</cNBS>',
      '<IBSCBS><finNFSe>0</finNFSe><indFinal>1</indFinal><cIndOp>100301</cIndOp><tpOper>1</tpOper><tpEnteGov>1</tpEnteGov><indDest>0</indDest><valores><trib><gIBSCBS><CST>200</CST><cClassTrib>200043</cClassTrib></gIBSCBS></trib></valores></IBSCBS>',
    ],
  },
  {
    name: 'IBS/CBS in servico.ibscbs with aliases',
    project: project({ codigoTributacao: '010101' }),
    body: body((b) => {
      b.servico.ibscbs = { codigoNbs: '115022000', cIndOp: '100301', cClassTrib: '000001', indFinal: '1', tpOper: '5' };
    }),
    contains: [
      '<cNBS>115022000</cNBS>',
      '<indFinal>1</indFinal><cIndOp>100301</cIndOp><tpOper>5</tpOper><indDest>0</indDest>',
    ],
  },
  {
    name: 'IBS/CBS from the project defaults',
    project: project({
      codigoTributacao: '010101',
      defaultNbs: '115024000',
      defaultIndicadorOperacao: '100301',
      defaultClassificacaoTributaria: '000001',
      defaultCstIbscbs: '000',
    }),
    body: body(),
    contains: ['<cNBS>115024000</cNBS>', '<CST>000</CST><cClassTrib>000001</cClassTrib>'],
  },
  {
    name: 'IBS/CBS from the table (39.01, single framing)',
    project: project({ codigoTributacao: '390101' }),
    body: body((b) => {
      b.servico.descricao = 'Serviços de ourivesaria e lapidação';
    }),
    contains: ['<cTribNac>390101</cTribNac>', '<cNBS>120022000</cNBS>', '<cIndOp>050101</cIndOp>'],
  },
  {
    name: 'IBS/CBS with a recipient other than the taker (indDest 1)',
    body: body((b) => {
      b.valores.ibscbs = {
        destinatarioPrincipal: '1',
        destinatario: {
          cpf: '52998224725',
          nome: 'Maria da Silva',
          email: 'maria@example.com',
          endereco: { ...NATIONAL_ADDRESS, complemento: undefined },
        },
      };
    }),
    contains: [
      '<indDest>1</indDest><dest><CPF>52998224725</CPF><xNome>Maria da Silva</xNome><end><endNac><cMun>3550308</cMun><CEP>01310100</CEP></endNac><xLgr>Avenida Paulista</xLgr><nro>1000</nro><xBairro>Bela Vista</xBairro></end><email>maria@example.com</email></dest><valores>',
    ],
  },
  {
    name: 'IBS/CBS government entity "other" (9) is omitted',
    body: body((b) => {
      b.valores.ibscbs = { tipoEnteGovernamental: '9', tipoOperacao: 2 };
    }),
    contains: ['<cIndOp>100301</cIndOp><tpOper>2</tpOper><indDest>0</indDest>'],
    lacks: ['<tpEnteGov>'],
  },
  {
    name: 'immunity with its type',
    body: body((b) => {
      b.valores.tribISSQN = 2;
      b.valores.tipoImunidade = 3;
      b.valores.aliquotaIss = 0;
    }),
    contains: ['<tribMun><tribISSQN>2</tribISSQN><tpImunidade>3</tpImunidade><tpRetISSQN>1</tpRetISSQN></tribMun>'],
    lacks: ['<pAliq>'],
  },
  {
    name: 'service without ISS incidence (990101): tribISSQN 4, no IBS/CBS framing available',
    project: project({ codigoTributacao: '990101' }),
    body: body((b) => {
      b.servico.descricao = 'Serviço sem incidência de ISSQN e ICMS';
      b.valores.aliquotaIss = 0;
    }),
    contains: ['<cTribNac>990101</cTribNac>', '<tribISSQN>4</tribISSQN>'],
    lacks: ['<IBSCBS>', '<pAliq>'],
  },
  {
    name: 'complementary information, purchase order, reference document and escaping',
    body: body((b) => {
      b.tomador.nome = 'Irmãos Souza & Cia <Ltda>';
      b.servico.descricao = 'Linha 1 – “franquia”\nLinha 2 > fim';
      b.servico.informacoesComplementares = 'Contrato nº 12 & aditivo <2>\nparcela 1/3';
      b.servico.pedidoCompra = 'PO-778';
      b.servico.documentoReferencia = 'CT-2026/001';
    }),
    contains: [
      '<xNome>Irmãos Souza &amp; Cia &lt;Ltda&gt;</xNome>',
      '<xDescServ>Linha 1 - "franquia"\nLinha 2 &gt; fim</xDescServ>',
      '<infoCompl><docRef>CT-2026/001</docRef><xPed>PO-778</xPed><xInfComp>Contrato nº 12 &amp; aditivo &lt;2&gt; parcela 1/3</xInfComp></infoCompl>',
    ],
  },
  {
    name: 'municipal breakdown (cTribMun)',
    body: body((b) => {
      b.servico.codigoTributacaoMunicipal = '001';
    }),
    contains: ['<cTribNac>170801</cTribNac><cTribMun>001</cTribMun><xDescServ>'],
  },
  {
    name: 'labour supply (17.05) due at the taker establishment',
    project: project({ codigoTributacao: '170501', codigoMunicipio: CAMPINAS }),
    body: body((b) => {
      b.servico.descricao = 'Fornecimento de mão de obra temporária';
      b.servico.nbs = '118012100';
      b.tomador.endereco = {
        logradouro: 'Avenida Rio Branco',
        numero: '1',
        bairro: 'Centro',
        cidade: 'Rio de Janeiro',
        uf: 'RJ',
        cep: '20090003',
      };
    }),
    // incidence in Rio de Janeiro, which uses the national emitter: regime 1 declares no rate (E0617)
    contains: ['<cLocEmi>3509502</cLocEmi>', '<cMun>3304557</cMun>', '<cNBS>118012100</cNBS>'],
    lacks: ['<pAliq>'],
  },
  {
    name: 'previous accrual month',
    body: body((b) => {
      b.competencia = '2026-07';
    }),
    contains: ['<dCompet>2026-07-01</dCompet>'],
  },
];

let key: SigningKey;

/** RSA-2048 key (Node) with a self-signed certificate built with node-forge, like an ICP-Brasil A1. */
function createSigningKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '0a1b2c3d4e5f';
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 86_400_000);
  const subject = [
    { name: 'commonName', value: 'ACME SERVICOS LTDA:11222333000181' },
    { name: 'organizationName', value: 'ICP-Brasil' },
    { name: 'countryName', value: 'BR' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, keyEncipherment: true, keyCertSign: true },
  ]);
  cert.sign(
    forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()),
    forge.md.sha256.create(),
  );
  return {
    privateKey: createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' })),
    certificatePem: forge.pki.certificateToPem(cert),
  };
}

function verifyWithXmlsec1(xml: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dps-corpus-'));
  try {
    writeFileSync(join(dir, 'cert.pem'), key.certificatePem);
    writeFileSync(join(dir, 'dps.xml'), xml);
    const run = spawnSync(
      'xmlsec1',
      ['--verify', '--id-attr:Id', 'infDPS', '--trusted-pem', join(dir, 'cert.pem'), join(dir, 'dps.xml')],
      { encoding: 'utf8' },
    );
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function normalize(c: CorpusCase): NormalizedInvoice {
  const result = checkInvoiceRequest(c.body, c.project ?? project(), { now: NOW });
  if (!result.ok) throw new Error(`${c.name}: ${result.code} ${JSON.stringify(result.errors)}`);
  return result.value;
}

beforeAll(() => {
  key = createSigningKey();
});

describe('DPS corpus: every optional group, XSD-valid, signed and verified', () => {
  it('has at least 30 payloads', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(30);
  });

  CORPUS.forEach((c, index) => {
    const algorithm: SignatureAlgorithm = index % 2 === 0 ? 'rsa-sha1' : 'rsa-sha256';
    it(`${c.name} (${algorithm})`, () => {
      const prj = c.project ?? project();
      const invoice = normalize(c);
      expect(checkDpsRequirements(prj, invoice)).toEqual([]);
      const nDPS = 1000 + index;
      const { xml, id } = buildDps({
        project: prj,
        invoice,
        serie: prj.serieNfse,
        nDPS,
        dhEmi: DH_EMI,
        tpAmb: 2,
        verAplic: 'corpus-1.0',
      });

      expect(id).toBe(
        `DPS${prj.codigoMunicipio}211222333000181${prj.serieNfse.padStart(5, '0')}${String(nDPS).padStart(15, '0')}`,
      );
      expect(xml.startsWith(`<DPS xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infDPS Id="${id}">`)).toBe(
        true,
      );
      expect(xml).toContain(
        `<tpAmb>2</tpAmb><dhEmi>2026-08-20T11:59:00-03:00</dhEmi><verAplic>corpus-1.0</verAplic><serie>${prj.serieNfse}</serie><nDPS>${nDPS}</nDPS>`,
      );
      expect(xml).not.toMatch(/>\s+</);
      for (const fragment of c.contains ?? []) expect(xml).toContain(fragment);
      for (const fragment of c.lacks ?? []) expect(xml).not.toContain(fragment);

      const unsigned = validateXml('DPS', xml);
      expect(unsigned.ok ? [] : unsigned.errors).toEqual([]);

      const signed = signXml(xml, { elementName: 'infDPS', key, algorithm });
      expect(signed).toContain('</infDPS><Signature xmlns="http://www.w3.org/2000/09/xmldsig#">');
      const signedCheck = validateXml('DPS', signed);
      expect(signedCheck.ok ? [] : signedCheck.errors).toEqual([]);
      if (XMLSEC1) {
        const verified = verifyWithXmlsec1(signed);
        expect(verified.ok, verified.output).toBe(true);
      }
    });
  });

  it.skipIf(!XMLSEC1)('xmlsec1 detects a DPS altered after signing', () => {
    const invoice = normalize(CORPUS[0]);
    const { xml } = buildDps({
      project: project(),
      invoice,
      serie: '1608',
      nDPS: 1,
      dhEmi: DH_EMI,
      tpAmb: 2,
      verAplic: 'corpus-1.0',
    });
    const signed = signXml(xml, { elementName: 'infDPS', key });
    expect(verifyWithXmlsec1(signed).ok).toBe(true);
    expect(verifyWithXmlsec1(signed.replace('<vServ>1500.00</vServ>', '<vServ>15.00</vServ>')).ok).toBe(false);
  });
});

describe('buildDps and checkDpsRequirements', () => {
  it('writes the serie as given in the element and zero-padded in the Id', () => {
    const invoice = normalize(CORPUS[0]);
    const { xml, id } = buildDps({
      project: project(),
      invoice,
      serie: '7',
      nDPS: 123456789012345,
      dhEmi: DH_EMI,
      tpAmb: 1,
      verAplic: 'v',
    });
    expect(id).toBe('DPS3550308211222333000181000071' + '23456789012345');
    expect(id).toHaveLength(45);
    expect(xml).toContain('<tpAmb>1</tpAmb>');
    expect(xml).toContain('<serie>7</serie><nDPS>123456789012345</nDPS>');
  });

  it('throws for programmer errors: serie, number, competencia after the emission', () => {
    const invoice = normalize(CORPUS[0]);
    const input = { project: project(), invoice, serie: '1', nDPS: 1, dhEmi: DH_EMI, tpAmb: 2 as const, verAplic: 'v' };
    expect(() => buildDps({ ...input, serie: '123456' })).toThrow(/series/);
    expect(() => buildDps({ ...input, nDPS: 0 })).toThrow(/nDPS/);
    expect(() => buildDps({ ...input, dhEmi: new Date('2026-07-31T12:00:00Z') })).toThrow(/E0015/);
  });

  it('names the national requirements a payload misses, and still builds an XSD-valid DPS without the group', () => {
    const cases: [string, InvoiceRequest, ProjectFiscalProfile, string][] = [
      ['CNPJ taker without address (E0235)', body((b) => delete b.tomador.endereco), project(), 'tomador.endereco'],
      [
        'CNPJ taker with a partial address',
        body((b) => delete b.tomador.endereco?.cep),
        project(),
        'tomador.endereco.cep',
      ],
      [
        'NIF taker with a partial foreign address (E0242)',
        body((b) => {
          b.tomador = { nif: 'X1', nome: 'Client', endereco: { pais: 'US', cidade: 'Austin' } };
          b.servico.nbs = '111100000';
          b.valores.aliquotaIss = 0;
          b.valores.exportacao = { ...EXPORT };
        }),
        project(),
        'tomador.endereco.logradouro',
      ],
      [
        'immunity without its type (E0592)',
        body((b) => {
          b.valores.tribISSQN = 2;
          b.valores.aliquotaIss = 0;
        }),
        project(),
        'valores.tipoImunidade',
      ],
      [
        'building work code without obra (E0370)',
        body((b) => {
          b.servico.codigo = '070201';
          b.valores.ibscbs = { nbs: '101011100', classificacaoTributaria: '200046' };
        }),
        project(),
        'servico.obra',
      ],
      [
        'obra on a code that does not admit it (E0372)',
        body((b) => (b.servico.obra = { codigoObra: '123' })),
        project(),
        'servico.obra',
      ],
      [
        'event without id nor complete address',
        body((b) => {
          b.servico.codigo = '120101';
          b.servico.evento = { nome: 'Show', dataInicio: '2026-08-01', dataFim: '2026-08-02' };
          b.valores.ibscbs = { classificacaoTributaria: '000001' };
        }),
        project(),
        'servico.evento.id',
      ],
      [
        'Simples ME/EPP without any approximate taxes (E0712)',
        body(),
        project({ regimeTributario: '3', aliquotaSimples: null }),
        'valores.totaisTributosAproximados',
      ],
      [
        'a 7-digit municipal breakdown',
        body((b) => (b.servico.codigoTributacaoMunicipal = '1234567')),
        project(),
        'servico.codigoTributacaoMunicipal',
      ],
    ];
    for (const [name, request, prj, field] of cases) {
      const checked = checkInvoiceRequest(request, prj, { now: NOW });
      if (!checked.ok) throw new Error(`${name}: ${JSON.stringify(checked.errors)}`);
      expect(
        checkDpsRequirements(prj, checked.value).map((e) => e.field),
        name,
      ).toContain(field);
      const { xml } = buildDps({
        project: prj,
        invoice: checked.value,
        serie: '1',
        nDPS: 5,
        dhEmi: DH_EMI,
        tpAmb: 2,
        verAplic: 'v',
      });
      const valid = validateXml('DPS', xml);
      expect(valid.ok ? [] : valid.errors, name).toEqual([]);
    }
  });
});
