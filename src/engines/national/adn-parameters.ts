import type { A1Certificate } from '../../certificates/pkcs12.ts';
import type { ParametrisedRate } from '../../domain/municipal-breakdowns.ts';
import type { GovernmentHttpClient } from '../kit/http-client.ts';
import type { Outcome } from '../types.ts';

/**
 * Client of the ADN "Parâmetros Municipais" API (OpenAPI `API NFS-e - ADN Parâmetros Municipais (v1)`, server
 * `/parametrizacao` on `adn.nfse.gov.br` / `adn.producaorestrita.nfse.gov.br`, brief §1.1): REST + JSON over
 * mutual TLS with the project's A1 certificate, like Sefin. Read operations used here:
 *
 *   GET /{codigoMunicipio}/convenio                               → ResultadoConsultaConfiguracoesConvenio
 *   GET /{codigoMunicipio}/{codigoServico}/{competencia}/aliquota → ResultadoConsultaAliquotas
 *
 * `codigoServico` is `II.SS.DD.NNN` (cTribNac + municipal breakdown, `000` for none), `competencia` an ISO date.
 * A 404 is an answer ("not parametrised"), not a failure; 400 a refusal; anything else transient.
 */

export const ADN_PARAMETERS_LIVE_URLS = {
  1: 'https://adn.nfse.gov.br/parametrizacao',
  2: 'https://adn.producaorestrita.nfse.gov.br/parametrizacao',
} as const;

/** One answer of the API: 200 (found) or 404 (not parametrised), with the official JSON body. */
export interface AdnAnswer {
  status: 200 | 404;
  body: Record<string, unknown> | null;
}

export interface AdnParametersClientOptions {
  clients: GovernmentHttpClient;
  /** base URL per ambiente, without trailing slash, e.g. https://adn.nfse.gov.br/parametrizacao */
  baseUrl: (ambiente: 1 | 2) => string;
}

export class AdnParametersClient {
  constructor(private readonly options: AdnParametersClientOptions) {}

  /** GET `{base}/{path}` (path without leading slash). */
  async get(certificate: A1Certificate, ambiente: 1 | 2, path: string): Promise<Outcome<AdnAnswer>> {
    const url = `${this.options.baseUrl(ambiente)}/${path}`;
    const res = await this.options.clients.send(certificate, 'GET', url, { headers: { accept: 'application/json' } });
    if (res.kind !== 'response') return { kind: 'transient', reason: `ADN parametrização: ${res.reason}` };
    let body: Record<string, unknown> | null = null;
    try {
      const parsed = JSON.parse(res.body) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = null;
    }
    if (res.status === 200 || res.status === 404) {
      if (res.status === 200 && !body) {
        return { kind: 'transient', reason: 'ADN parametrização answered 200 without a JSON object' };
      }
      return { kind: 'ok', value: { status: res.status, body } };
    }
    const message = typeof body?.mensagem === 'string' ? body.mensagem : res.body.slice(0, 200);
    if (res.status === 400 || res.status === 401 || res.status === 403) {
      return {
        kind: 'rejected',
        errorCode: `ADN_HTTP_${res.status}`,
        errorMessage: message || `HTTP ${res.status}`,
        errors: [],
        httpStatus: res.status,
      };
    }
    return { kind: 'transient', reason: `ADN parametrização HTTP ${res.status}: ${message}`, httpStatus: res.status };
  }
}

/** `/{cMun}/convenio` */
export const convenioPath = (municipio: string) => `${municipio}/convenio`;

/** `/{cMun}/{II.SS.DD.NNN}/{YYYY-MM-01}/aliquota` of a competência `YYYY-MM`. */
export const aliquotaPath = (municipio: string, codigoServico: string, competencia: string) =>
  `${municipio}/${codigoServico}/${competencia}-01/aliquota`;

/** A boolean of `TipoSimNao` (1 yes, 0 no, -1 not informed) → true/false/null. */
function simNao(value: unknown): boolean | null {
  if (value === 1 || value === '1') return true;
  if (value === 0 || value === '0') return false;
  return null;
}

export interface ConvenioParameters {
  aderenteAmbienteNacional: boolean | null;
  aderenteEmissorNacional: boolean | null;
}

/** `parametrosConvenio` of a convênio answer, or null when the answer has none. */
export function readConvenio(body: Record<string, unknown> | null): ConvenioParameters | null {
  const p = body?.parametrosConvenio;
  if (!p || typeof p !== 'object') return null;
  const record = p as Record<string, unknown>;
  return {
    aderenteAmbienteNacional: simNao(record.aderenteAmbienteNacional),
    aderenteEmissorNacional: simNao(record.aderenteEmissorNacional),
  };
}

const isoDate = (value: unknown): string | null =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) ? value.slice(0, 10) : null;

/**
 * The rate of `codigoServico` in an aliquota answer (`aliquotas[codigoServico]`, the entry in force: the API answers
 * those of the competência asked; the latest start wins when several come). Field names are read
 * case-insensitively (the ADN uses PascalCase `Aliq`, `DtIni`…). Null when the answer has none for that code.
 */
export function readRate(body: Record<string, unknown> | null, codigoServico: string): ParametrisedRate | null {
  const map = body?.aliquotas;
  if (!map || typeof map !== 'object') return null;
  const list = (map as Record<string, unknown>)[codigoServico];
  if (!Array.isArray(list) || list.length === 0) return null;
  const entries = list
    .filter((e): e is Record<string, unknown> => !!e && typeof e === 'object')
    .map((e) => {
      const field = (name: string) => e[Object.keys(e).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name];
      const aliq = field('Aliq');
      return {
        aliquota: typeof aliq === 'number' && Number.isFinite(aliq) ? aliq : null,
        incidencia: typeof field('Incidencia') === 'string' ? (field('Incidencia') as string) : null,
        inicio: isoDate(field('DtIni')),
        fim: isoDate(field('DtFim')),
      };
    })
    .sort((a, b) => (b.inicio ?? '').localeCompare(a.inicio ?? ''));
  return entries[0] ?? null;
}
