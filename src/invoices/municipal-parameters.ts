import { and, eq, sql } from 'drizzle-orm';
import type { A1Certificate } from '../certificates/pkcs12.ts';
import type { AppContext } from '../context.ts';
import { prepared } from '../db/prepared.ts';
import { adnParametersCache, municipalBreakdownTexts } from '../db/schema.ts';
import { sharedReads } from '../db/table-changes.ts';
import { describeFailure } from '../engines/types.ts';
import {
  adnServiceCode,
  type MunicipalBreakdown,
  type MunicipalServiceParameters,
} from '../domain/municipal-breakdowns.ts';
import {
  type AdnAnswer,
  aliquotaPath,
  type ConvenioParameters,
  convenioPath,
  readConvenio,
  readRate,
} from '../engines/national/adn-parameters.ts';
import { descendantText, parseXml, withoutSignatures } from '../xml/read.ts';

/**
 * The municipality's parametrisation of one service (breakdowns and rates), read from the ADN "Parâmetros
 * Municipais" API through a cache table shared by every process (`adn_parameters_cache`): an answer younger than
 * NFSE_ADN_PARAMETERS_TTL_SECONDS is reused, an older one is asked again on demand (and kept when the ADN does not
 * answer, stale but better than nothing). The ADN needs mutual TLS: the project's A1 certificate is loaded only
 * when something has to be fetched.
 *
 * The API has no "list the breakdowns" operation: it answers per `II.SS.DD.NNN`. So the service without breakdown
 * (`.000`) is asked, then `.001`, `.002`… until the first code the municipality does not have (breakdowns are
 * numbered in sequence by the municipal panel), at most MAX_BREAKDOWNS.
 */

export const MAX_BREAKDOWNS = 99;

export type ParametersLookup =
  | {
      kind: 'ok';
      convenio: ConvenioParameters | null;
      params: MunicipalServiceParameters;
      /** when the oldest answer used was fetched from the ADN */
      fetchedAt: Date;
    }
  /** the ADN has no convênio for the municipality (404): it is not parametrised in the national environment */
  | { kind: 'municipality-unknown' }
  /** the ADN could not be asked (no certificate, unreachable, refused) and nothing is cached */
  | { kind: 'unavailable'; code: string; reason: string };

export interface LookupInput {
  projectId: string;
  ambiente: 1 | 2;
  /** IBGE code, 7 digits */
  municipio: string;
  /** cTribNac, 6 digits */
  cTribNac: string;
  /** YYYY-MM */
  competencia: string;
}

type Fetched = { kind: 'ok'; answer: AdnAnswer; fetchedAt: Date } | { kind: 'failed'; code: string; reason: string };

/** Requests in flight per process, so a batch of 100 items of one service asks the ADN once. */
const inFlight = new WeakMap<AppContext, Map<string, Promise<Fetched>>>();
type CacheRow = typeof adnParametersCache.$inferSelect;

class CachedAdn {
  private certificate: Promise<
    { ok: true; certificate: A1Certificate } | { ok: false; code: string; reason: string }
  > | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly projectId: string,
    private readonly ambiente: 1 | 2,
  ) {}

  private loadCertificate() {
    this.certificate ??= this.ctx.certificates
      .forProject(this.projectId, this.ctx.now())
      .then((loaded) =>
        loaded.ok
          ? { ok: true as const, certificate: loaded.certificate }
          : { ok: false as const, code: loaded.code, reason: loaded.message },
      );
    return this.certificate;
  }

  /**
   * The cache's row of a path. Concurrent reads of one path share a query (a burst of notes of one service reads it
   * once); on the embedded database the row is kept in memory until the table changes (`db/table-changes.ts`),
   * elsewhere nothing is kept once it answers: a refreshed row is seen by the next read, and an aged one is
   * judged by its `fetchedAt` at each use.
   */
  private readRow(path: string) {
    const reads = sharedReads<CacheRow | undefined>(this.ctx.db, 'adn_parameters_row', this.ctx.database.changes, [
      'adn_parameters_cache',
    ]);
    return reads.get(`${this.ambiente}:${path}`, () =>
      // every POST /emitir reads two or three rows: prepared once (building the query was most of its cost)
      prepared(this.ctx.db, 'adn_parameters_row', (db) =>
        db
          .select()
          .from(adnParametersCache)
          .where(
            and(
              eq(adnParametersCache.ambiente, sql.placeholder('ambiente')),
              eq(adnParametersCache.path, sql.placeholder('path')),
            ),
          )
          .limit(1)
          .prepare('adn_parameters_row'),
      )
        .execute({ ambiente: this.ambiente, path })
        .then(([row]) => row),
    );
  }

  /** The answer for a path: from the cache when fresh, else from the ADN (stored), else the stale copy. */
  async get(path: string): Promise<Fetched> {
    const now = this.ctx.now();
    const row = await this.readRow(path);
    const ttlMs = this.ctx.config.adnParametersTtlSeconds * 1000;
    const cached =
      row && (row.status === 200 || row.status === 404)
        ? {
            answer: { status: row.status, body: row.body as Record<string, unknown> | null } as AdnAnswer,
            fetchedAt: row.fetchedAt,
          }
        : null;
    if (cached && now.getTime() - cached.fetchedAt.getTime() < ttlMs) return { kind: 'ok', ...cached };

    const running = inFlight.get(this.ctx) ?? new Map<string, Promise<Fetched>>();
    inFlight.set(this.ctx, running);
    const key = `${this.ambiente}:${path}`;
    let pending = running.get(key);
    if (!pending) {
      pending = this.fetch(path).finally(() => running.delete(key));
      running.set(key, pending);
    }
    const fetched = await pending;
    if (fetched.kind === 'failed' && cached) {
      this.ctx.logger.warn(
        { path, reason: fetched.reason },
        'ADN parametrização unavailable; using the stale cached answer',
      );
      return { kind: 'ok', ...cached };
    }
    return fetched;
  }

  private async fetch(path: string): Promise<Fetched> {
    const cert = await this.loadCertificate();
    if (!cert.ok) return { kind: 'failed', code: cert.code, reason: cert.reason };
    const outcome = await this.ctx.engines.adnParameters.get(cert.certificate, this.ambiente, path);
    if (outcome.kind !== 'ok') {
      const reason = describeFailure(outcome);
      return { kind: 'failed', code: 'ADN_UNAVAILABLE', reason };
    }
    const fetchedAt = this.ctx.now();
    await this.ctx.db
      .insert(adnParametersCache)
      .values({ ambiente: this.ambiente, path, status: outcome.value.status, body: outcome.value.body, fetchedAt })
      .onConflictDoUpdate({
        target: [adnParametersCache.ambiente, adnParametersCache.path],
        set: { status: sql`excluded.status`, body: sql`excluded.body`, fetchedAt: sql`excluded.fetched_at` },
      });
    return { kind: 'ok', answer: outcome.value, fetchedAt };
  }
}

/** The parametrisation of a service in a municipality at a competência (see the module comment). */
export async function lookupServiceParameters(ctx: AppContext, input: LookupInput): Promise<ParametersLookup> {
  const adn = new CachedAdn(ctx, input.projectId, input.ambiente);
  const convenio = await adn.get(convenioPath(input.municipio));
  if (convenio.kind === 'failed') return { kind: 'unavailable', code: convenio.code, reason: convenio.reason };
  if (convenio.answer.status === 404) return { kind: 'municipality-unknown' };
  let oldest = convenio.fetchedAt;

  const rateOf = async (breakdown: string) => {
    const code = adnServiceCode(input.cTribNac, breakdown);
    const fetched = await adn.get(aliquotaPath(input.municipio, code, input.competencia));
    if (fetched.kind === 'failed') return fetched;
    if (fetched.fetchedAt < oldest) oldest = fetched.fetchedAt;
    return { kind: 'ok' as const, rate: fetched.answer.status === 200 ? readRate(fetched.answer.body, code) : null };
  };

  const plain = await rateOf('000');
  if (plain.kind === 'failed') return { kind: 'unavailable', code: plain.code, reason: plain.reason };
  const desdobramentos: MunicipalBreakdown[] = [];
  for (let n = 1; n <= MAX_BREAKDOWNS; n++) {
    const codigo = String(n).padStart(3, '0');
    const found = await rateOf(codigo);
    if (found.kind === 'failed') return { kind: 'unavailable', code: found.code, reason: found.reason };
    if (!found.rate) break;
    desdobramentos.push({ codigo, rate: found.rate });
  }
  return {
    kind: 'ok',
    convenio: readConvenio(convenio.answer.body),
    params: {
      municipio: input.municipio,
      cTribNac: input.cTribNac,
      competencia: input.competencia,
      semDesdobramento: plain.rate,
      desdobramentos,
    },
    fetchedAt: oldest,
  };
}

const XTRIBMUN_TAG = /<([A-Za-z_][\w.-]*:)?xTribMun[\s>]/;

/** The breakdown text of an NFS-e (`xTribMun` with its cTribMun, cTribNac and municipality of incidence), or null. */
export function breakdownTextOf(
  nfseXml: string,
): { municipio: string; cTribNac: string; cTribMun: string; descricao: string } | null {
  // most notes carry no breakdown: without an xTribMun start tag (any prefix) there is nothing to parse for
  if (!XTRIBMUN_TAG.test(nfseXml)) return null;
  const parsed = parseXml(withoutSignatures(nfseXml));
  if (!parsed.ok) return null;
  const pick = (name: string) => descendantText(parsed.root, name);
  const municipio = pick('cLocIncid');
  const descricao = pick('xTribMun');
  const cTribNac = pick('cTribNac');
  const cTribMun = pick('cTribMun');
  if (!municipio || !descricao || !cTribNac || !cTribMun) return null;
  if (!/^\d{7}$/.test(municipio) || !/^\d{6}$/.test(cTribNac) || !/^\d{3}$/.test(cTribMun)) return null;
  return { municipio, cTribNac, cTribMun, descricao };
}

/**
 * Keeps the municipality's text of a breakdown from an NFS-e the government returned (the ADN API has none).
 * Best effort: a failure is logged, never raised (the note is issued either way).
 */
export async function rememberBreakdownText(ctx: AppContext, ambiente: number, nfseXml: string): Promise<void> {
  const found = breakdownTextOf(nfseXml);
  if (!found?.descricao) return;
  try {
    const seenAt = ctx.now();
    await ctx.db
      .insert(municipalBreakdownTexts)
      .values({ ambiente, ...found, seenAt })
      .onConflictDoUpdate({
        target: [
          municipalBreakdownTexts.ambiente,
          municipalBreakdownTexts.municipio,
          municipalBreakdownTexts.cTribNac,
          municipalBreakdownTexts.cTribMun,
        ],
        set: { descricao: found.descricao, seenAt },
      });
  } catch (err) {
    ctx.logger.warn({ err }, 'could not keep the breakdown text of an NFS-e');
  }
}

/** The known texts of the breakdowns of a service in a municipality, by cTribMun. */
export async function breakdownTexts(
  ctx: AppContext,
  input: { ambiente: number; municipio: string; cTribNac: string },
): Promise<Map<string, string>> {
  const rows = await ctx.db
    .select({ cTribMun: municipalBreakdownTexts.cTribMun, descricao: municipalBreakdownTexts.descricao })
    .from(municipalBreakdownTexts)
    .where(
      and(
        eq(municipalBreakdownTexts.ambiente, input.ambiente),
        eq(municipalBreakdownTexts.municipio, input.municipio),
        eq(municipalBreakdownTexts.cTribNac, input.cTribNac),
      ),
    );
  return new Map(rows.map((r) => [r.cTribMun, r.descricao]));
}
