import type { SandboxReply, SandboxRequest, SandboxRoute, SandboxService } from '../kit/server.ts';
import { ADN_SEED, rateAt, type SeedRate, seedMunicipality } from './seed.ts';

/**
 * A local stand-in of the ADN "Parâmetros Municipais" API (OpenAPI `API NFS-e - ADN Parâmetros Municipais (v1)`,
 * server `/parametrizacao`), read-only operations, answering from ./seed.ts in the official response shapes:
 *
 *   GET /{codigoMunicipio}/convenio                                   ResultadoConsultaConfiguracoesConvenio
 *   GET /{codigoMunicipio}/{codigoServico}/{competencia}/aliquota     ResultadoConsultaAliquotas
 *   GET /{codigoMunicipio}/{codigoServico}/historicoaliquotas         ResultadoConsultaAliquotas
 *   GET /{codigoMunicipio}/{codigoServico}/{competencia}/regimes_especiais  ResultadoConsultaRegimesEspeciais
 *   GET /{codigoMunicipio}/{competencia}/retencoes                    ResultadoConsultaRetencoes
 *   GET /{codigoMunicipio}/{numeroBeneficio}/{competencia}/beneficio  ResultadoConsultaBeneficio
 *
 * `codigoServico` is `II.SS.DD.NNN` (national code + municipal breakdown, `000` for none); `competencia` a date or
 * date-time. 400 and 404 carry the same shape with `mensagem` (as the OpenAPI declares). Like the real API it needs
 * a client certificate (mutual TLS): without one every request is refused (403), as is any method but GET (405).
 * A kit service (../kit/server.ts) of the national family, served beside Sefin; faults are not injected into it.
 * It never uses the service's own client code: only the seed and these shapes.
 */

const SERVICE_CODE = /^\d{2}\.\d{2}\.\d{2}\.\d{3}$/;

/** `2026-11-01`, `2026-11-01T00:00:00` (optionally with a zone) → `2026-11-01`; null when not a date. */
function competenciaDate(raw: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(raw);
  if (!match) return null;
  const date = `${match[1]}-${match[2]}-${match[3]}`;
  const parsed = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date ? null : date;
}

const dateTime = (date: string | null) => (date === null ? null : `${date}T00:00:00`);

function aliquotaOf(rate: SeedRate) {
  return { Incidencia: rate.incidencia, Aliq: rate.aliq, DtIni: dateTime(rate.inicio), DtFim: dateTime(rate.fim) };
}

const notFound = (mensagem: string, key: string): SandboxReply => ({ status: 404, body: { mensagem, [key]: null } });
const badRequest = (mensagem: string, key: string): SandboxReply => ({ status: 400, body: { mensagem, [key]: null } });

function breakdownOf(ibge: string, codigoServico: string) {
  const municipality = seedMunicipality(ibge);
  if (!municipality) return { municipality: undefined, breakdown: undefined };
  const [ii, ss, dd, nnn] = codigoServico.split('.');
  const breakdown = (municipality.servicos[`${ii}${ss}${dd}`] ?? []).find((b) => b.codigo === nnn);
  return { municipality, breakdown };
}

function convenio(cMun: string): SandboxReply {
  if (!/^\d{7}$/.test(cMun)) return badRequest('Código de município inválido.', 'parametrosConvenio');
  const municipality = seedMunicipality(cMun);
  if (!municipality) return notFound('Convênio não encontrado para o município informado.', 'parametrosConvenio');
  return {
    status: 200,
    body: {
      mensagem: 'Parâmetros do convênio recuperados com sucesso.',
      parametrosConvenio: {
        tipoConvenioDeserializationSetter: 1,
        aderenteAmbienteNacional: 1,
        aderenteEmissorNacional: 1,
        situacaoEmissaoPadraoContribuintesRFB: 1,
        aderenteMAN: municipality.aderenteMAN,
        permiteAproveitametoDeCreditos: municipality.permiteAproveitametoDeCreditos,
      },
    },
  };
}

/** `aliquota` (the rate in force at `competencia`) and `historicoaliquotas` (competencia null: every rate). */
function aliquotas(cMun: string, codigoServico: string, competencia: string | null): SandboxReply {
  const date = competencia === null ? null : competenciaDate(competencia);
  if (!/^\d{7}$/.test(cMun)) return badRequest('Código de município inválido.', 'aliquotas');
  if (!SERVICE_CODE.test(codigoServico)) {
    return badRequest('Código de serviço inválido: use o formato 00.00.00.000.', 'aliquotas');
  }
  if (competencia !== null && !date) return badRequest('Data de competência inválida.', 'aliquotas');
  const { breakdown } = breakdownOf(cMun, codigoServico);
  const rates = breakdown ? (date ? [rateAt(breakdown.historico, date)].filter((r) => !!r) : breakdown.historico) : [];
  if (rates.length === 0) return notFound('Nenhuma alíquota encontrada para os parâmetros informados.', 'aliquotas');
  return {
    status: 200,
    body: { mensagem: 'Alíquotas recuperadas com sucesso.', aliquotas: { [codigoServico]: rates.map(aliquotaOf) } },
  };
}

function regimesEspeciais(cMun: string, codigoServico: string, competencia: string): SandboxReply {
  if (!/^\d{7}$/.test(cMun) || !SERVICE_CODE.test(codigoServico) || !competenciaDate(competencia)) {
    return badRequest('Parâmetros inválidos.', 'regimesEspeciais');
  }
  const { breakdown } = breakdownOf(cMun, codigoServico);
  if (!breakdown) return notFound('Nenhum regime especial encontrado.', 'regimesEspeciais');
  return { status: 200, body: { mensagem: 'Regimes especiais recuperados com sucesso.', regimesEspeciais: {} } };
}

function retencoes(cMun: string, competencia: string): SandboxReply {
  if (!/^\d{7}$/.test(cMun) || !competenciaDate(competencia)) return badRequest('Parâmetros inválidos.', 'retencoes');
  if (!seedMunicipality(cMun)) return notFound('Nenhuma retenção encontrada.', 'retencoes');
  return {
    status: 200,
    body: {
      mensagem: 'Retenções recuperadas com sucesso.',
      retencoes: { artigoSexto: { habilitado: false, historico: [] }, retencoesMunicipais: [] },
    },
  };
}

function beneficio(cMun: string, competencia: string): SandboxReply {
  if (!/^\d{7}$/.test(cMun) || !competenciaDate(competencia)) return badRequest('Parâmetros inválidos.', 'beneficio');
  return notFound('Benefício municipal não encontrado.', 'beneficio');
}

const ROUTES: SandboxRoute[] = [
  { method: 'GET', path: '/:cMun/convenio', handler: (req) => convenio(req.params.cMun) },
  {
    method: 'GET',
    path: '/:cMun/:servico/:competencia/aliquota',
    handler: ({ params }) => aliquotas(params.cMun, params.servico, params.competencia),
  },
  {
    method: 'GET',
    path: '/:cMun/:servico/historicoaliquotas',
    handler: ({ params }) => aliquotas(params.cMun, params.servico, null),
  },
  {
    method: 'GET',
    path: '/:cMun/:servico/:competencia/regimes_especiais',
    handler: ({ params }) => regimesEspeciais(params.cMun, params.servico, params.competencia),
  },
  {
    method: 'GET',
    path: '/:cMun/:competencia/retencoes',
    handler: ({ params }) => retencoes(params.cMun, params.competencia),
  },
  {
    method: 'GET',
    path: '/:cMun/:numero/:competencia/beneficio',
    handler: ({ params }) => beneficio(params.cMun, params.competencia),
  },
];

/** Every request needs a client certificate (403), then only GET is allowed (405). */
function refuse(req: SandboxRequest): SandboxReply | null {
  if (!req.clientCertificate) {
    return { status: 403, body: { mensagem: 'Acesso negado: certificado digital do cliente não apresentado.' } };
  }
  if (req.method !== 'GET') return { status: 405, body: { mensagem: `Método ${req.method} não permitido.` } };
  return null;
}

/** The ADN Parâmetros Municipais service below `/{producao|producaorestrita}/parametrizacao`. */
export function createAdnParametersService(): SandboxService {
  return {
    family: 'national',
    name: 'ADN',
    mount: '/:ambiente(producao|producaorestrita)/parametrizacao',
    routes: ROUTES,
    before: refuse,
    notFound: (req) => ({
      status: 404,
      body: { mensagem: `Rota não encontrada: ${req.method} /parametrizacao${req.subPath}` },
    }),
    admin: [{ method: 'GET', path: '/__sandbox/adn', handler: () => ({ status: 200, body: seededMunicipalities() }) }],
  };
}

/** The municipalities of the seed (for the sandbox's own listing, `GET /__sandbox/adn`). */
export function seededMunicipalities() {
  return ADN_SEED.map((m) => ({
    ibge: m.ibge,
    name: m.name,
    servicos: Object.fromEntries(Object.entries(m.servicos).map(([code, list]) => [code, list.map((b) => b.codigo)])),
  }));
}
