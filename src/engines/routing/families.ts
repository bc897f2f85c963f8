import { type Static, type TSchema, Type } from 'typebox';

/**
 * The engine families: the code paths a municipality can be routed to. A family is one payload layout over
 * one kind of transport; the ACBr providers are grouped into them (docs/engine-families.md). A routing
 * identifier names family, provider and layout version (`abrasf-v2:fiorilli@2.00`), so one family serves many
 * providers that differ only by data (endpoints, namespaces, auth kind, quirks).
 *
 * Everything here is data: the engine kit (kit/) runs a family's definition (builders, operations table, parsers)
 * registered under these ids in one typed map (registry.ts `FAMILY_DEFINITIONS`).
 */
export const FAMILY_IDS = [
  'national',
  'dps-provider',
  'abrasf-v1',
  'abrasf-v2',
  'ginfes',
  'sao-paulo',
  'ipm',
  'own-layout',
] as const;
export type FamilyId = (typeof FAMILY_IDS)[number];

export function isFamilyId(value: string): value is FamilyId {
  return (FAMILY_IDS as readonly string[]).includes(value);
}

/** How a request is authenticated at the provider. */
export const AUTH_KINDS = [
  /** the A1 certificate in the TLS handshake (and usually the XML signature) */
  'mtls',
  /** the certificate signs the XML; the TLS handshake carries no client certificate */
  'signature',
  /** HTTP Basic (`Authorization: Basic user:password`) */
  'basic',
  /** `Authorization: Bearer <token>` (a token issued by the provider, or obtained from a token service) */
  'bearer',
  /** a provider key in a request header */
  'header-token',
  /** user/password or keys inside the message body */
  'body-credentials',
] as const;
export type AuthKind = (typeof AUTH_KINDS)[number];

/** Credentials a project must hold for an engine (stored with the project, never sent per invoice: spec 4.8.1). */
export const CREDENTIALS = [
  'certificate',
  'municipalUser',
  'municipalPassword',
  'basicAuthUsuario',
  'basicAuthSenha',
  'accessToken',
  'authorizationKey',
  /** the city hall's CNPJ (Agili `UnidadeGestora`): a public municipal parameter the project sets, not a secret */
  'cnpjPrefeitura',
] as const;
export type Credential = (typeof CREDENTIALS)[number];

/** Project fields (spec 2.1) an engine needs besides CNPJ, razão social and the certificate. */
export const PROJECT_FIELDS = ['codigoMunicipio', 'inscricaoMunicipal', 'cnae', 'codigoServicoSp'] as const;
export type ProjectField = (typeof PROJECT_FIELDS)[number];

export const TRANSPORTS = ['rest-json', 'soap11', 'soap12', 'http-xml', 'multipart'] as const;
export type Transport = (typeof TRANSPORTS)[number];

export interface Capabilities {
  cancel: boolean;
  /** replace an issued note by a new one in one operation (national substitution, ABRASF SubstituirNfse) */
  substitution: boolean;
  /** several notes in one request (a lot) */
  batch: boolean;
  /** sync: the answer carries the note; async: a protocol to poll; both: the provider offers both */
  mode: 'sync' | 'async' | 'both';
  /** local: rendered here from the XML; portal: fetched from / linked to the provider's portal; none */
  pdf: 'local' | 'portal' | 'none';
  /** the provider has a homologation (test) environment for this municipality */
  homologation: boolean;
}

const Url = Type.String({ pattern: '^https?://[^\\s]+$', description: 'absolute http(s) URL' });
/** ACBr operation name (Recepcionar, GerarNFSe, CancelarNFSe, …) → URL */
const OperationUrls = Type.Record(Type.String({ pattern: '^[A-Za-z]+$' }), Url);
const LinkTemplate = Type.String({ minLength: 8, description: 'public note link with %Placeholders%' });

function enumOf<T extends string>(values: readonly T[]) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values] });
}

/**
 * The parameters every routed municipality carries once the provider defaults and the city's own values
 * are merged. A family narrows the layout versions it accepts and what must be present.
 */
function parameterSchema(options: { versions: readonly string[]; description: string }) {
  return Type.Object(
    {
      provider: Type.String({ minLength: 1, description: 'ACBr provider name' }),
      version: enumOf(options.versions),
      endpoints: Type.Object(
        {
          /** empty when ACBr knows no production web service (provider awaiting certification) */
          production: OperationUrls,
          homologation: Type.Optional(OperationUrls),
        },
        { additionalProperties: false },
      ),
      links: Type.Optional(
        Type.Object(
          { production: Type.Optional(LinkTemplate), homologation: Type.Optional(LinkTemplate) },
          { additionalProperties: false },
        ),
      ),
      /** ACBr `Params` of provider and city (e.g. CodigoCidade, AliasCidade, ServicosPadraoNacional) */
      options: Type.Record(Type.String({ minLength: 1 }), Type.Union([Type.String(), Type.Boolean()])),
      /** SOAP namespace / action overrides of the city */
      soap: Type.Optional(
        Type.Record(Type.String({ pattern: '^(Pro|Hom)(NameSpace|SoapAction|XMLNameSpace)$' }), Type.String()),
      ),
      transport: enumOf(TRANSPORTS),
      auth: enumOf(AUTH_KINDS),
      xmlSignature: Type.Boolean(),
      credentials: Type.Array(enumOf(CREDENTIALS), { uniqueItems: true }),
      projectFields: Type.Array(enumOf(PROJECT_FIELDS), { uniqueItems: true }),
    },
    { additionalProperties: false, description: options.description },
  );
}

export type RouteParameters = Static<ReturnType<typeof parameterSchema>>;

export interface FamilyDescriptor {
  id: FamilyId;
  title: string;
  /** the payload layout the family builds */
  layout: 'national-dps' | 'abrasf-1' | 'abrasf-2' | 'ginfes-v3' | 'sao-paulo' | 'ipm' | 'own';
  description: string;
  /** the TypeBox schema every municipality's merged parameters must satisfy (checked at start and in a test) */
  parameters: TSchema;
  /** capabilities before the per-city facts (homologation endpoints, portal link) are applied */
  capabilities: Omit<Capabilities, 'homologation'>;
  /** project fields the family always needs */
  projectFields: readonly ProjectField[];
}

const V1 = ['1.00', '1.01', '1.02', '1.03'] as const;
const V2 = ['2.00', '2.01', '2.02', '2.03', '2.04'] as const;

/** One descriptor per family, keyed by id (the map the engine kit will extend with operations). */
export const FAMILIES = {
  national: {
    id: 'national',
    title: 'Sefin Nacional (national environment)',
    layout: 'national-dps',
    description:
      'The national DPS sent to Sefin Nacional over REST (gzip+base64 JSON) with mTLS. Serves every national-adherent municipality for every regime, and MEI providers everywhere.',
    parameters: parameterSchema({ versions: ['1.00', '1.01'], description: 'national environment' }),
    capabilities: { cancel: true, substitution: true, batch: false, mode: 'sync', pdf: 'local' },
    projectFields: ['codigoMunicipio'],
  },
  'dps-provider': {
    id: 'dps-provider',
    title: 'National DPS over a provider API ("API Própria")',
    layout: 'national-dps',
    description:
      "The same signed DPS as the national environment, sent to the municipal provider's own SOAP or REST API (Betha, Pronim, ABase, Coplan, SimplISS, Citta, SIL/TBW, Infisc, …).",
    parameters: parameterSchema({ versions: ['1.00', '1.01'], description: 'national DPS over a provider API' }),
    capabilities: { cancel: true, substitution: true, batch: false, mode: 'sync', pdf: 'local' },
    projectFields: ['codigoMunicipio', 'inscricaoMunicipal'],
  },
  'abrasf-v1': {
    id: 'abrasf-v1',
    title: 'ABRASF 1.0x',
    layout: 'abrasf-1',
    description: 'ABRASF 1.0x lots (RecepcionarLoteRps, then ConsultarLoteRps), SOAP 1.1, XML-DSig.',
    parameters: parameterSchema({ versions: V1, description: 'ABRASF 1.0x provider' }),
    capabilities: { cancel: true, substitution: false, batch: true, mode: 'async', pdf: 'none' },
    projectFields: ['codigoMunicipio', 'inscricaoMunicipal'],
  },
  'abrasf-v2': {
    id: 'abrasf-v2',
    title: 'ABRASF 2.0x',
    layout: 'abrasf-2',
    description:
      'ABRASF 2.00–2.04 (GerarNfse synchronous, RecepcionarLoteRps asynchronous, SubstituirNfse), SOAP or REST with per-provider namespaces, actions and signature quirks.',
    parameters: parameterSchema({ versions: V2, description: 'ABRASF 2.0x provider' }),
    capabilities: { cancel: true, substitution: true, batch: true, mode: 'both', pdf: 'none' },
    projectFields: ['codigoMunicipio', 'inscricaoMunicipal'],
  },
  ginfes: {
    id: 'ginfes',
    title: 'GINFES (ABRASF 1 "v3")',
    layout: 'ginfes-v3',
    description: 'GINFES schema v3 (ABRASF 1 style) over SOAP 1.1, asynchronous lots; requires the main CNAE.',
    parameters: parameterSchema({ versions: V1, description: 'GINFES' }),
    capabilities: { cancel: true, substitution: false, batch: true, mode: 'async', pdf: 'none' },
    projectFields: ['codigoMunicipio', 'inscricaoMunicipal', 'cnae'],
  },
  'sao-paulo': {
    id: 'sao-paulo',
    title: 'City of São Paulo (NFS-e SP)',
    layout: 'sao-paulo',
    description:
      "São Paulo's own layout (PedidoEnvioRPS / PedidoEnvioLoteRPS) over SOAP 1.1 with mTLS, XML-DSig plus the per-RPS signature string; needs the municipal service code.",
    parameters: parameterSchema({ versions: ['1.00', '2.00'], description: 'São Paulo' }),
    capabilities: { cancel: true, substitution: false, batch: true, mode: 'both', pdf: 'none' },
    projectFields: ['codigoMunicipio', 'inscricaoMunicipal', 'codigoServicoSp'],
  },
  ipm: {
    id: 'ipm',
    title: 'IPM (own layout)',
    layout: 'ipm',
    description: 'IPM own XML layout posted over HTTP (multipart) with HTTP Basic; no client certificate.',
    parameters: parameterSchema({ versions: ['1.00', '1.01', '1.20'], description: 'IPM' }),
    capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none' },
    projectFields: ['codigoMunicipio', 'inscricaoMunicipal'],
  },
  'own-layout': {
    id: 'own-layout',
    title: 'Other own layouts',
    layout: 'own',
    description:
      'Providers with a layout of their own (Aspec, Equiplano, Agili, Conam, SigISSWeb, ISSDSF, Giap, …): each needs its own builder; grouped here until one is written.',
    parameters: parameterSchema({
      versions: ['1.00', '1.01', '1.02', '1.03', '1.20', '2.00', '2.01', '2.02', '2.03', '2.04', '3.00', '3.02'],
      description: 'own layout',
    }),
    capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none' },
    projectFields: ['codigoMunicipio', 'inscricaoMunicipal'],
  },
} as const satisfies Record<FamilyId, FamilyDescriptor>;

export function familyOf(id: FamilyId): FamilyDescriptor {
  return FAMILIES[id];
}
