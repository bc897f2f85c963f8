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
 * a client certificate (mutual TLS); the server (../sefin/server.ts) passes whether one was presented.
 * It never uses the service's own client code: only the seed and these shapes.
 */

export interface AdnReply {
  status: number;
  body: unknown;
}

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

const notFound = (mensagem: string, key: string) => ({ status: 404, body: { mensagem, [key]: null } });
const badRequest = (mensagem: string, key: string) => ({ status: 400, body: { mensagem, [key]: null } });

function breakdownOf(ibge: string, codigoServico: string) {
  const municipality = seedMunicipality(ibge);
  if (!municipality) return { municipality: undefined, breakdown: undefined };
  const [ii, ss, dd, nnn] = codigoServico.split('.');
  const breakdown = (municipality.servicos[`${ii}${ss}${dd}`] ?? []).find((b) => b.codigo === nnn);
  return { municipality, breakdown };
}

/** Handles a request below `/parametrizacao` (`path` starts with `/`). */
export function handleParametrizacao(method: string, path: string, hasClientCertificate: boolean): AdnReply {
  const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (!hasClientCertificate) {
    return { status: 403, body: { mensagem: 'Acesso negado: certificado digital do cliente não apresentado.' } };
  }
  if (method !== 'GET') return { status: 405, body: { mensagem: `Método ${method} não permitido.` } };
  const [cMun] = segments;
  const last = segments.at(-1);
  const ibgeOk = !!cMun && /^\d{7}$/.test(cMun);

  if (segments.length === 2 && last === 'convenio') {
    if (!ibgeOk) return badRequest('Código de município inválido.', 'parametrosConvenio');
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

  if ((segments.length === 4 && last === 'aliquota') || (segments.length === 3 && last === 'historicoaliquotas')) {
    const codigoServico = segments[1]!;
    const date = segments.length === 4 ? competenciaDate(segments[2]!) : null;
    if (!ibgeOk) return badRequest('Código de município inválido.', 'aliquotas');
    if (!SERVICE_CODE.test(codigoServico)) {
      return badRequest('Código de serviço inválido: use o formato 00.00.00.000.', 'aliquotas');
    }
    if (segments.length === 4 && !date) return badRequest('Data de competência inválida.', 'aliquotas');
    const { breakdown } = breakdownOf(cMun, codigoServico);
    const rates = breakdown
      ? date
        ? [rateAt(breakdown.historico, date)].filter((r) => !!r)
        : breakdown.historico
      : [];
    if (rates.length === 0) return notFound('Nenhuma alíquota encontrada para os parâmetros informados.', 'aliquotas');
    return {
      status: 200,
      body: { mensagem: 'Alíquotas recuperadas com sucesso.', aliquotas: { [codigoServico]: rates.map(aliquotaOf) } },
    };
  }

  if (segments.length === 4 && last === 'regimes_especiais') {
    if (!ibgeOk || !SERVICE_CODE.test(segments[1]!) || !competenciaDate(segments[2]!)) {
      return badRequest('Parâmetros inválidos.', 'regimesEspeciais');
    }
    const { breakdown } = breakdownOf(cMun, segments[1]!);
    if (!breakdown) return notFound('Nenhum regime especial encontrado.', 'regimesEspeciais');
    return { status: 200, body: { mensagem: 'Regimes especiais recuperados com sucesso.', regimesEspeciais: {} } };
  }

  if (segments.length === 3 && last === 'retencoes') {
    if (!ibgeOk || !competenciaDate(segments[1]!)) return badRequest('Parâmetros inválidos.', 'retencoes');
    if (!seedMunicipality(cMun)) return notFound('Nenhuma retenção encontrada.', 'retencoes');
    return {
      status: 200,
      body: {
        mensagem: 'Retenções recuperadas com sucesso.',
        retencoes: { artigoSexto: { habilitado: false, historico: [] }, retencoesMunicipais: [] },
      },
    };
  }

  if (segments.length === 4 && last === 'beneficio') {
    if (!ibgeOk || !competenciaDate(segments[2]!)) return badRequest('Parâmetros inválidos.', 'beneficio');
    return notFound('Benefício municipal não encontrado.', 'beneficio');
  }

  return { status: 404, body: { mensagem: `Rota não encontrada: ${method} /parametrizacao${path}` } };
}

/** The municipalities of the seed (for the sandbox's own listing, `GET /__sandbox/adn`). */
export function seededMunicipalities() {
  return ADN_SEED.map((m) => ({
    ibge: m.ibge,
    name: m.name,
    servicos: Object.fromEntries(Object.entries(m.servicos).map(([code, list]) => [code, list.map((b) => b.codigo)])),
  }));
}
