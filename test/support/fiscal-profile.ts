import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';

/**
 * The fiscal profile of a project as the rules see it (what `toFiscalProfile` makes of a project row), for the
 * pure tests: a regime-1 company of CNPJ 11222333000181 with no optional datum, plus what each suite overrides.
 */
export function fiscalProfile(overrides: Partial<ProjectFiscalProfile> = {}): ProjectFiscalProfile {
  return {
    id: 'prj_test',
    cnpj: '11222333000181',
    razaoSocial: 'EMPRESA EXEMPLO LTDA',
    inscricaoMunicipal: null,
    codigoMunicipio: '3304557',
    regimeTributario: '1',
    regimeIss: null,
    email: null,
    telefone: null,
    endereco: null,
    codigoTributacao: '010101',
    tributacaoIss: 1,
    serieNfse: '1',
    aliquotaSimples: null,
    cnae: null,
    ambiente: 2,
    cstPisCofins: null,
    aliquotaPis: null,
    aliquotaCofins: null,
    tipoRetencaoPisCofins: null,
    defaultCstIbscbs: null,
    defaultClassificacaoTributaria: null,
    defaultIndicadorOperacao: null,
    defaultNbs: null,
    codigoServicoSp: null,
    ...overrides,
  };
}

/**
 * The IBS/CBS framing a project carries as defaults (NBS, operation indicator, cClassTrib, CST) where the layout or the
 * city requires it: the values every suite uses.
 */
export const IBS_CBS_FRAMING = {
  defaultNbs: '115021000',
  defaultIndicadorOperacao: '100301',
  defaultClassificacaoTributaria: '000001',
  defaultCstIbscbs: '000',
} satisfies Partial<ProjectFiscalProfile>;
