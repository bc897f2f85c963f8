import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();

/** Plans are data: the seed rows are inserted by the first migration. */
export const plans = pgTable('plans', {
  slug: text('slug').primaryKey(),
  name: text('name').notNull(),
  /** null: unlimited */
  projectLimit: integer('project_limit'),
  creditsLimit: integer('credits_limit').notNull(),
  allowOverage: boolean('allow_overage').notNull(),
  allowLogo: boolean('allow_logo').notNull(),
  /** ceiling of a project key's rateLimitPerMinute on this plan (null: NFSE_MAX_KEY_RATE_LIMIT alone) */
  keyRateLimitCeiling: integer('key_rate_limit_ceiling'),
});

export const organizations = pgTable('organizations', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  slug: text('slug').notNull().unique(),
  planSlug: text('plan_slug')
    .notNull()
    .references(() => plans.slug),
  storageBaseUrl: text('storage_base_url'),
  /** pending_verification | active | failed (white-label domain, verified by the domain.verify job) */
  storageBaseUrlStatus: text('storage_base_url_status'),
  /** why the last verification failed (or is still pending) */
  storageBaseUrlReason: text('storage_base_url_reason'),
  storageBaseUrlCheckedAt: ts('storage_base_url_checked_at'),
  /** the verified domain documents use while a new one is pending (null: the default public base) */
  storageBaseUrlActive: text('storage_base_url_active'),
  /** set by the operator: raises (or lowers) this organization's key rate ceiling over the plan's */
  keyRateLimitCeiling: integer('key_rate_limit_ceiling'),
  /** Start of the current monthly credit period. */
  periodStart: ts('period_start').notNull().defaultNow(),
  creditsUsed: integer('credits_used').notNull().default(0),
  createdAt: createdAt(),
});

export const orgTokens = pgTable(
  'org_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    prefix: text('prefix').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('org_tokens_org_idx').on(t.orgId)],
);

export const projects = pgTable(
  'projects',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    cnpj: text('cnpj').notNull(),
    razaoSocial: text('razao_social').notNull(),
    inscricaoMunicipal: text('inscricao_municipal'),
    inscricaoEstadual: text('inscricao_estadual'),
    regimeTributario: text('regime_tributario'),
    codigoMunicipio: text('codigo_municipio'),
    email: text('email'),
    telefone: text('telefone'),
    description: text('description'),
    endereco: jsonb('endereco').$type<Record<string, string | null>>(),
    codigoTributacao: text('codigo_tributacao'),
    tributacaoIss: integer('tributacao_iss'),
    serieNfse: text('serie_nfse').notNull().default('1608'),
    aliquotaSimples: numeric('aliquota_simples', { mode: 'number' }),
    regimeIss: integer('regime_iss'),
    codigoServicoSp: text('codigo_servico_sp'),
    /** the city hall's CNPJ (Agili `UnidadeGestora`): a public municipal parameter, validated with its check digits */
    cnpjPrefeitura: text('cnpj_prefeitura'),
    /** spec 4.8.3: the URL the project's municipal engine sends to, before the registry's (absolute precedence) */
    endpointOverride: text('endpoint_override'),
    /**
     * issue through the national environment (Sefin Nacional) instead of the municipality's own provider, by the
     * project's choice: only where the municipality adheres to the national emitter (registry `nationalEmitter`)
     */
    emissorNacional: boolean('emissor_nacional').notNull().default(false),
    cnae: text('cnae'),
    basicAuthUsuario: text('basic_auth_usuario'),
    /** sealed with the master key (AES-256-GCM), base64 */
    basicAuthSenhaSealed: text('basic_auth_senha_sealed'),
    ambiente: integer('ambiente').notNull().default(2),
    serieNfe: integer('serie_nfe'),
    serieNfce: integer('serie_nfce'),
    cscId: text('csc_id'),
    cscTokenSealed: text('csc_token_sealed'),
    cstPisCofins: text('cst_pis_cofins'),
    aliquotaPis: numeric('aliquota_pis', { mode: 'number' }),
    aliquotaCofins: numeric('aliquota_cofins', { mode: 'number' }),
    tipoRetencaoPisCofins: integer('tipo_retencao_pis_cofins'),
    defaultCstIbscbs: text('default_cst_ibscbs'),
    defaultClassificacaoTributaria: text('default_classificacao_tributaria'),
    defaultIndicadorOperacao: text('default_indicador_operacao'),
    defaultNbs: text('default_nbs'),
    danfeTemplate: text('danfe_template').notNull().default('padrao'),
    logoKey: text('logo_key'),
    logoMimeType: text('logo_mime_type'),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    deletedAt: ts('deleted_at'),
  },
  (t) => [
    index('projects_org_idx').on(t.orgId, t.createdAt, t.id),
    uniqueIndex('projects_org_cnpj_active_uq').on(t.orgId, t.cnpj).where(sql`${t.active}`),
  ],
);

export const certificates = pgTable(
  'certificates',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    fileName: text('file_name').notNull(),
    subjectCn: text('subject_cn').notNull(),
    cnpj: text('cnpj'),
    validFrom: ts('valid_from').notNull(),
    validUntil: ts('valid_until').notNull(),
    fingerprint: text('fingerprint').notNull(),
    /** the PKCS#12 file and its password, sealed with the master key, base64 */
    pfxSealed: text('pfx_sealed').notNull(),
    passwordSealed: text('password_sealed').notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('certificates_project_active_uq').on(t.projectId).where(sql`${t.active}`)],
);

export const numbering = pgTable(
  'numbering',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    /** nfse | nfe | nfce */
    kind: text('kind').notNull(),
    lastNumber: bigint('last_number', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.kind] })],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull().unique(),
    prefix: text('prefix').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    rateLimitPerMinute: integer('rate_limit_per_minute').notNull().default(60),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('api_keys_project_idx').on(t.projectId)],
);

/** Fixed-window rate-limit counters, shared by every API process. */
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    bucket: text('bucket').notNull(),
    windowStart: ts('window_start').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.windowStart] })],
);

export const batches = pgTable(
  'batches',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    total: integer('total').notNull(),
    completedAt: ts('completed_at'),
    createdAt: createdAt(),
  },
  (t) => [index('batches_project_idx').on(t.projectId)],
);

export const invoices = pgTable(
  'invoices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    orgId: uuid('org_id').notNull(),
    batchId: uuid('batch_id'),
    batchIndex: integer('batch_index'),
    /** queued | processing | issued | error | cancelled */
    status: text('status').notNull(),
    engine: text('engine').notNull(),
    referencia: text('referencia'),
    request: jsonb('request').notNull(),
    ambiente: integer('ambiente').notNull(),
    serie: text('serie'),
    /** the declaration's number in the project's series (national DPS nDPS, municipal RPS number) */
    declarationNumber: bigint('declaration_number', { mode: 'number' }),
    /** the declaration's identifier at the government (national DPS Id), used to reconcile */
    declarationId: text('declaration_id'),
    /** the signed declaration, stored before sending so every retry sends the same bytes */
    declarationXml: text('declaration_xml'),
    /**
     * prepared | sending | pending | done: `sending` means a request may have reached the government; `pending`
     * means the government holds it under `protocol` (polled, never sent again)
     */
    transmission: text('transmission').notNull().default('none'),
    attempts: integer('attempts').notNull().default(0),
    /** the engine's reference of the note: the national access key, or the municipal number and code */
    accessKey: text('access_key'),
    numeroNfse: text('numero_nfse'),
    verificationCode: text('verification_code'),
    /** the provider's protocol of an asynchronous submission (recorded before anything else) */
    protocol: text('protocol'),
    emittedAt: ts('emitted_at'),
    nfseXml: text('nfse_xml'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    errors: jsonb('errors').$type<{ Codigo: string; Descricao: string; Complemento?: string | null }[]>(),
    /** adjustments made on the caller's behalf at acceptance (domain/warnings.ts), shown in the status */
    warnings: jsonb('warnings')
      .$type<{ code: string; field: string | null; message: string }[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    /** null | requested | rejected | done */
    cancellationStatus: text('cancellation_status'),
    cancelMotivo: text('cancel_motivo'),
    cancelRequestedAt: ts('cancel_requested_at'),
    cancelledAt: ts('cancelled_at'),
    cancelXml: text('cancel_xml'),
    cancelErrorCode: text('cancel_error_code'),
    cancelErrorMessage: text('cancel_error_message'),
    xmlKey: text('xml_key'),
    pdfKey: text('pdf_key'),
    cancelXmlKey: text('cancel_xml_key'),
    documentsCached: boolean('documents_cached').notNull().default(false),
    /** partial | complete | failed (the documents job ran out of attempts) */
    documentsStatus: text('documents_status'),
    documentsErrorCode: text('documents_error_code'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('invoices_project_idx').on(t.projectId, t.createdAt),
    index('invoices_batch_idx').on(t.batchId),
    uniqueIndex('invoices_fiscal_number_uq').on(t.projectId, t.serie, t.declarationNumber),
  ],
);

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    projectId: uuid('project_id').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    statusCode: integer('status_code').notNull(),
    response: jsonb('response').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.key] })],
);

/** The event outbox: written in the same transaction as the state change that causes it. */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id').notNull(),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    invoiceId: uuid('invoice_id'),
    batchId: uuid('batch_id'),
    /** set once deliveries have been fanned out to the endpoints */
    dispatchedAt: ts('dispatched_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('events_project_idx').on(t.projectId, t.createdAt),
    index('events_undispatched_idx').on(t.createdAt).where(sql`${t.dispatchedAt} is null`),
  ],
);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    url: text('url').notNull(),
    description: text('description'),
    events: jsonb('events').$type<string[]>().notNull(),
    secret: text('secret'),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    deletedAt: ts('deleted_at'),
  },
  (t) => [index('webhook_endpoints_project_idx').on(t.projectId)],
);

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    projectId: uuid('project_id').notNull(),
    eventId: uuid('event_id'),
    eventType: text('event_type').notNull(),
    /** the exact JSON body sent on every attempt */
    body: text('body').notNull(),
    /** pending | succeeded | failed */
    status: text('status').notNull().default('pending'),
    attemptCount: integer('attempt_count').notNull().default(0),
    /** 5 on the automatic schedule; a manual retry allows exactly one more attempt; a test delivery 1 */
    attemptLimit: integer('attempt_limit').notNull().default(5),
    /** when the next attempt is due; while an attempt runs, when it counts as lost (lease) */
    nextAttemptAt: ts('next_attempt_at'),
    /** when the attempt in flight was claimed; still set at the next claim: that attempt was interrupted (crash) */
    attemptStartedAt: ts('attempt_started_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    completedAt: ts('completed_at'),
  },
  (t) => [
    index('webhook_deliveries_project_idx').on(t.projectId, t.createdAt),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    // a retried fan-out never delivers an event twice to one endpoint
    uniqueIndex('webhook_deliveries_event_endpoint_uq').on(t.eventId, t.endpointId),
  ],
);

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id),
    attemptNumber: integer('attempt_number').notNull(),
    attemptedAt: ts('attempted_at').notNull(),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
    responseSnippet: text('response_snippet'),
  },
  (t) => [uniqueIndex('webhook_attempts_delivery_number_uq').on(t.deliveryId, t.attemptNumber)],
);

/**
 * Cache of the ADN "Parâmetros Municipais" API (src/engines/national/adn-parameters.ts): one row per environment and
 * request path (e.g. `3304557/01.01.01.001/2026-11-01/aliquota`), holding the HTTP status (200 found, 404 not
 * parametrised) and the official JSON answer. Shared by every process; refreshed on demand once older than
 * NFSE_ADN_PARAMETERS_TTL_SECONDS.
 */
export const adnParametersCache = pgTable(
  'adn_parameters_cache',
  {
    ambiente: integer('ambiente').notNull(),
    path: text('path').notNull(),
    status: integer('status').notNull(),
    body: jsonb('body'),
    fetchedAt: ts('fetched_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.ambiente, t.path] })],
);

/**
 * The municipality's own text of a municipal breakdown (xTribMun), learned from the NFS-e the government returned:
 * the ADN parametrisation API publishes no text for a breakdown, the NFS-e does. Shown by GET /codigos.
 */
export const municipalBreakdownTexts = pgTable(
  'municipal_breakdown_texts',
  {
    ambiente: integer('ambiente').notNull(),
    municipio: text('municipio').notNull(),
    cTribNac: text('c_trib_nac').notNull(),
    cTribMun: text('c_trib_mun').notNull(),
    descricao: text('descricao').notNull(),
    seenAt: ts('seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.ambiente, t.municipio, t.cTribNac, t.cTribMun] })],
);

/**
 * The people of an organization who sign in with e-mail and password (the dashboard); the first is created by the
 * operator CLI (`npm run admin -- member create`). An e-mail (stored lowercase) belongs to one organization. The
 * password is kept only as a scrypt hash (src/access/passwords.ts).
 */
export const orgMembers = pgTable(
  'org_members',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    email: text('email').notNull().unique(),
    passwordHash: text('password_hash').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('org_members_org_idx').on(t.orgId)],
);

/**
 * Dashboard sign-in sessions of members (`/dashboard`): the cookie carries `<id>.<secret>`, only the secret's
 * SHA-256 is stored (the CSRF token is an HMAC of the secret). A session acts through credentials of the API minted for it (an
 * organization token, and a project key per project it touches), kept sealed with the master key and revoked when
 * the session ends (sign-out or expiry).
 */
export const dashboardSessions = pgTable(
  'dashboard_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    memberId: uuid('member_id')
      .notNull()
      .references(() => orgMembers.id),
    secretHash: text('secret_hash').notNull(),
    orgTokenId: uuid('org_token_id').notNull(),
    orgTokenSealed: text('org_token_sealed').notNull(),
    /** projectId → the session's project key (id and sealed key) */
    projectKeys: jsonb('project_keys').$type<Record<string, { keyId: string; sealed: string }>>().notNull().default({}),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    endedAt: ts('ended_at'),
  },
  (t) => [index('dashboard_sessions_member_idx').on(t.memberId)],
);
