/**
 * The municipal parametrisation the sandbox's ADN "Parâmetros Municipais" API serves (and the sandbox Sefin
 * applies: E0314 for an unknown cTribMun, the parametrised rate when a DPS has no pAliq, xTribMun in the NFS-e).
 *
 * Sandbox data, not the municipalities' real parameters: the municipalities are real and adhere to the national
 * environment (routing/emissor_nacional.json), the service codes are real national codes (Anexo B), the breakdown
 * numbering follows the ADN's `II.SS.DD.NNN` (`000`: the service without breakdown), and the shapes are the
 * official ones (built in ./parametrizacao.ts). Curitiba's 01.01.01.000 at 5 % from 2022-12-30 is the answer the
 * real produção restrita gave in a public forum post (forum.nfsebrasil.com.br, topic 278), and Rio de Janeiro's
01.01.01.001 at 5 % is what the official sample NFS-e (Rio, 2025-12) applied; the rest is made up to
 * cover every case: a required breakdown, an optional one, none, a rate history, a municipality with a convênio and
 * no service parametrised. Documented in README "Local government sandboxes".
 */

export interface SeedRate {
  /** `Aliq`, % */
  aliq: number;
  /** `Incidencia` */
  incidencia: 'SIM' | 'NAO';
  /** `DtIni` / `DtFim`, YYYY-MM-DD */
  inicio: string;
  fim: string | null;
}

export interface SeedBreakdown {
  /** `NNN` of `II.SS.DD.NNN`; `000` is the service without breakdown */
  codigo: string;
  /** the municipality's text for the breakdown (the sandbox Sefin prints it as xTribMun) */
  descricao: string;
  historico: SeedRate[];
}

export interface SeedMunicipality {
  ibge: string;
  name: string;
  /** convênio: `aderenteAmbienteNacional`, `aderenteEmissorNacional` (TipoSimNao 1), `aderenteMAN` */
  aderenteMAN: 0 | 1;
  permiteAproveitametoDeCreditos: boolean;
  /** by cTribNac (6 digits) */
  servicos: Record<string, SeedBreakdown[]>;
}

const since = (inicio: string, aliq: number, fim: string | null = null): SeedRate => ({
  aliq,
  incidencia: 'SIM',
  inicio,
  fim,
});

export const ADN_SEED: readonly SeedMunicipality[] = [
  {
    ibge: '3304557',
    name: 'Rio de Janeiro',
    aderenteMAN: 0,
    permiteAproveitametoDeCreditos: false,
    servicos: {
      // breakdown required: no 000
      '010101': [
        {
          codigo: '001',
          descricao: 'Análise e desenvolvimento de sistemas sob encomenda',
          historico: [since('2023-01-01', 5)],
        },
        { codigo: '002', descricao: 'Análise de sistemas para órgãos públicos', historico: [since('2023-01-01', 5)] },
      ],
      '010701': [{ codigo: '000', descricao: '', historico: [since('2023-01-01', 5)] }],
      '170101': [
        { codigo: '001', descricao: 'Consultoria empresarial', historico: [since('2023-01-01', 5)] },
        { codigo: '002', descricao: 'Assessoria técnica', historico: [since('2023-01-01', 5)] },
        { codigo: '003', descricao: 'Consultoria em gestão de pessoas', historico: [since('2023-01-01', 5)] },
      ],
    },
  },
  {
    ibge: '4106902',
    name: 'Curitiba',
    aderenteMAN: 0,
    permiteAproveitametoDeCreditos: false,
    servicos: {
      // no breakdown: a sent cTribMun is ignored
      '010101': [{ codigo: '000', descricao: '', historico: [since('2022-12-30', 5)] }],
      '010701': [{ codigo: '000', descricao: '', historico: [since('2022-12-30', 5)] }],
    },
  },
  {
    ibge: '3106200',
    name: 'Belo Horizonte',
    aderenteMAN: 1,
    permiteAproveitametoDeCreditos: false,
    servicos: {
      // optional breakdown: the service is parametrised both with and without one
      '010101': [
        { codigo: '000', descricao: '', historico: [since('2023-01-01', 2.5)] },
        {
          codigo: '001',
          descricao: 'Desenvolvimento de software para exportação',
          historico: [since('2023-01-01', 2)],
        },
      ],
    },
  },
  {
    ibge: '4314902',
    name: 'Porto Alegre',
    aderenteMAN: 0,
    permiteAproveitametoDeCreditos: true,
    servicos: {
      // required breakdown with a rate history (3 % until 2025, 2 % since 2026)
      '010101': [
        {
          codigo: '001',
          descricao: 'Desenvolvimento de programas de computador',
          historico: [since('2023-01-01', 3, '2025-12-31'), since('2026-01-01', 2)],
        },
        { codigo: '002', descricao: 'Análise de sistemas', historico: [since('2023-01-01', 3)] },
      ],
    },
  },
  {
    ibge: '1302603',
    name: 'Manaus',
    aderenteMAN: 0,
    permiteAproveitametoDeCreditos: false,
    // a convênio, no service parametrised yet
    servicos: {},
  },
];

export function seedMunicipality(ibge: string): SeedMunicipality | undefined {
  return ADN_SEED.find((m) => m.ibge === ibge);
}

/** The rate in force at a date (YYYY-MM-DD) of a breakdown's history, or undefined. */
export function rateAt(historico: readonly SeedRate[], date: string): SeedRate | undefined {
  return historico.find((r) => r.inicio <= date && (r.fim === null || r.fim >= date));
}

/**
 * For the sandbox Sefin: the breakdowns of a service in a municipality at a date. `undefined` when the municipality
 * is not in the seed (the sandbox then applies no parametrisation rule), else the entries in force.
 */
export function seedBreakdownsAt(ibge: string, cTribNac: string, date: string): SeedBreakdown[] | undefined {
  const municipality = seedMunicipality(ibge);
  if (!municipality) return undefined;
  return (municipality.servicos[cTribNac] ?? []).filter((b) => rateAt(b.historico, date));
}
