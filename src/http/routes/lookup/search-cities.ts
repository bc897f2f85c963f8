import { Type } from 'typebox';
import { foldName } from '../../../domain/municipalities.ts';
import { coverageOf } from '../../../engines/routing/coverage.ts';
import { AUTH_KINDS, CREDENTIALS, FAMILY_IDS, PROJECT_FIELDS, TRANSPORTS } from '../../../engines/routing/families.ts';
import { requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, PageQuery } from '../../schemas.ts';
import { assertValid } from '../org/common.ts';

function stringEnum<T extends string>(values: readonly T[], description: string) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], description });
}
const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

const STATUS_DESCRIPTION =
  'covered: an engine serves every tax regime here — the national environment (the municipality adheres to it: ' +
  'ACBr maps it to PadraoNacional, or maps no provider and it is in the national-emitter adhesion list) or the ' +
  "family of the municipality's own provider, which has a production web service; whether this service already " +
  'issues through that engine is `implemented`. ' +
  'not_covered: a municipal provider is known but no production web service for it (awaiting certification, ' +
  'homologation only) or its layout is unknown: non-MEI providers cannot issue here. ' +
  'national_only_mei: no municipal provider is known and the municipality does not adhere to the national ' +
  'environment: only MEI providers can issue here. ' +
  'In every case MEI providers (regimeTributario 2) issue through the national environment.';

const Capabilities = Type.Object(
  {
    cancel: Type.Boolean({ description: 'Issued notes can be cancelled through the engine' }),
    substitution: Type.Boolean({ description: 'A note can be replaced by a new one in one operation' }),
    batch: Type.Boolean({ description: 'Several notes can be sent in one request (a lot)' }),
    mode: stringEnum(
      ['sync', 'async', 'both'] as const,
      'sync: the answer carries the note; async: a protocol to poll; both: the provider offers both',
    ),
    pdf: stringEnum(
      ['local', 'portal', 'none'] as const,
      "local: rendered by this service from the XML; portal: linked to/fetched from the provider's portal; none",
    ),
    homologation: Type.Boolean({ description: 'A homologation (test) environment exists for this municipality' }),
  },
  { description: 'What the engine can do here' },
);

const CityCoverage = Type.Object({
  codigoIbge: Type.String({ description: 'IBGE municipality code, 7 digits' }),
  nome: Type.String({ description: 'Municipality name' }),
  uf: Type.String({ description: 'State abbreviation' }),
  populacao: nullable(Type.Integer(), 'IBGE 2020 population estimate'),
  status: stringEnum(['covered', 'not_covered', 'national_only_mei'] as const, STATUS_DESCRIPTION),
  family: nullable(
    stringEnum(FAMILY_IDS, 'engine family'),
    'Engine family that serves non-MEI providers here (covered) or of the known provider (not_covered); null when none is known',
  ),
  routingId: nullable(
    Type.String(),
    'Routing identifier: `national`, or `<family>:<provider>@<layout version>` (e.g. abrasf-v2:fiorilli@2.00)',
  ),
  provider: nullable(Type.String(), 'Municipal provider (as named in the ACBr table); null when none is mapped'),
  layoutVersion: nullable(Type.String(), 'Layout version of the engine'),
  implemented: Type.Boolean({
    description:
      'Whether this service issues here today for every regime (false: only MEI providers can issue, through the national environment; others get 422 ENGINE_NOT_AVAILABLE at POST /emitir)',
  }),
  nationalEmitterAdherent: Type.Boolean({
    description:
      'Flagged in the official national-emitter adhesion list (Conveniado Ativo + AderenteEmissorNacional); a flag does not displace an own provider, but a project may choose the national environment here (project field emissorNacional)',
  }),
  nationalEmitterByChoice: Type.Boolean({
    description:
      "Whether a project here can issue through the national environment (Sefin Nacional) by its own choice, instead of the municipality's own system: set the project's emissorNacional to true. " +
      "True where the municipality adheres to the national emitter (nationalEmitterAdherent) and its default engine is its own provider's, implemented here or not (`implemented` describes that default engine, not the choice). " +
      'False where the national environment is already the default engine (nothing to choose) or the municipality does not adhere (emissorNacional true is refused with 400).',
  }),
  engine: nullable(
    Type.Object({
      projectFields: Type.Array(stringEnum(PROJECT_FIELDS, 'project field'), {
        description: 'Project fields (spec 2.1) this engine needs besides CNPJ and razão social',
      }),
      credentials: Type.Array(stringEnum(CREDENTIALS, 'credential'), {
        description:
          'Credentials the project must hold: certificate (A1), municipal user/password, Basic Auth user/password, access token, authorization key',
      }),
      auth: stringEnum(
        AUTH_KINDS,
        'How the engine authenticates: mtls, signature (XML only), basic, bearer, header-token, body-credentials',
      ),
      transport: stringEnum(TRANSPORTS, 'Wire transport'),
      xmlSignature: Type.Boolean({ description: 'The XML is signed with the A1 certificate' }),
      capabilities: Capabilities,
    }),
    'Requirements and capabilities of that engine; null when no engine is known',
  ),
});

const CoverageAnswer = Type.Object({
  query: Type.String({ description: 'The query as received (trimmed)' }),
  data: Type.Array(CityCoverage, {
    description: 'Matches: exact names first, then names starting with the query, then containing it',
  }),
  registry: Type.Object(
    {
      generatedAt: Type.String({ description: 'When the municipality registry was generated' }),
      sources: Type.Array(
        Type.Object({ file: Type.String(), date: Type.String(), commit: nullable(Type.String(), 'source commit') }),
        { description: 'The routing data the registry was generated from' },
      ),
    },
    { description: 'Provenance of the routing data' },
  ),
});

/** GET /cobertura/cidades?q=: coverage status, responsible engine and its requirements (spec 4.6). */
export const searchCitiesRoute: RouteModule = (app, ctx) => {
  app.get(
    '/cobertura/cidades',
    {
      onRequest: requireProject(ctx, 'query'),
      attachValidation: true,
      schema: {
        tags: ['lookup'],
        summary: 'Coverage of municipalities: status, engine, required fields',
        description:
          'Needs a project key with the scope query. `q`: at least 2 characters of the municipality name (accents, ' +
          'case and spacing ignored) or a 7-digit IBGE code; anything else is 400 INVALID_QUERY. ' +
          '"sao paulo", "São Paulo" and "3550308" find the same municipality. ' +
          STATUS_DESCRIPTION,
        querystring: Type.Object({
          q: Type.String({ maxLength: 100, description: 'Name (≥ 2 characters) or 7-digit IBGE code' }),
          limit: PageQuery.limit,
        }),
        response: {
          200: documented(CoverageAnswer, {
            name: 'CityCoverageList',
            description: 'The matching municipalities with their coverage, engine and requirements',
            example: {
              query: '4106902',
              data: [
                {
                  codigoIbge: '4106902',
                  nome: 'Curitiba',
                  uf: 'PR',
                  populacao: 1948626,
                  status: 'covered',
                  family: 'national',
                  routingId: 'national',
                  provider: 'PadraoNacional',
                  layoutVersion: '1.01',
                  implemented: true,
                  nationalEmitterAdherent: true,
                  nationalEmitterByChoice: false,
                  engine: {
                    projectFields: ['codigoMunicipio'],
                    credentials: ['certificate'],
                    auth: 'mtls',
                    transport: 'rest-json',
                    xmlSignature: true,
                    capabilities: {
                      cancel: true,
                      substitution: true,
                      batch: false,
                      mode: 'sync',
                      pdf: 'local',
                      homologation: true,
                    },
                  },
                },
              ],
              registry: {
                generatedAt: '2026-11-25T04:36:28.627Z',
                sources: [
                  {
                    file: 'ACBrNFSeXServicos.ini',
                    date: '2026-06-28',
                    commit: '7be4dac253653c416c87830ad37980de58973fcb',
                  },
                  {
                    file: 'emissor_nacional.json',
                    date: '2026-09-28',
                    commit: '8401f8d71efff6b52f6709c6ee51011a775ff1e5',
                  },
                  {
                    file: 'population/populacao-por-municipio-2020.csv',
                    date: '2020 (IBGE estimates)',
                    commit: 'b5dfeb19a80c8e0b58781e995e921c1ee4a7f55a',
                  },
                  { file: 'derived/municipio_provedor_acbr_20260628.csv', date: '2026-06-28', commit: null },
                ],
              },
            },
          }),
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      assertValid(request);
      const q = request.query.q.trim();
      const isCode = /^\d+$/.test(q);
      if (isCode ? q.length !== 7 : foldName(q).length < 2) {
        const message = isCode
          ? 'an IBGE code has 7 digits'
          : 'send at least 2 characters of the municipality name or a 7-digit IBGE code';
        throw new ApiError('INVALID_QUERY', `q: ${message}`, [{ field: 'q', message }]);
      }
      const registry = ctx.engines.municipalities;
      const matches = registry.search(q, request.query.limit ?? 20);
      return {
        query: q,
        data: matches.map((route) => {
          const c = coverageOf(route, registry, ctx.engines.implementedIn);
          return {
            codigoIbge: c.code,
            nome: c.name,
            uf: c.uf,
            populacao: c.population,
            status: c.status,
            family: c.family,
            routingId: c.routingId,
            provider: c.provider,
            layoutVersion: c.layoutVersion,
            implemented: c.implemented,
            nationalEmitterAdherent: c.nationalEmitterAdherent,
            nationalEmitterByChoice: c.nationalEmitterByChoice,
            engine: c.engine,
          };
        }),
        registry: {
          generatedAt: registry.data.generatedAt,
          sources: registry.data.sources.map((s) => ({ file: s.file, date: s.date, commit: s.commit })),
        },
      };
    },
  );
};
