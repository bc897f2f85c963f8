import { type Static, Type } from 'typebox';
import type { ProjectRow } from '../../../db/repositories/projects.ts';
import { Nullable } from '../../schemas.ts';
import { iso, orNull } from './common.ts';

/** The request and response shapes of a project (spec 2.1), shared by the project routes. */

export const REGIMES_TRIBUTARIOS = ['1', '2', '3', '3e'] as const;
export const DANFE_TEMPLATES = ['padrao', 'retrato_logo', 'paisagem_logo'] as const;
export const LOGO_TEMPLATES: readonly string[] = ['retrato_logo', 'paisagem_logo'];
export const UFS = [
  'AC',
  'AL',
  'AM',
  'AP',
  'BA',
  'CE',
  'DF',
  'ES',
  'GO',
  'MA',
  'MG',
  'MS',
  'MT',
  'PA',
  'PB',
  'PE',
  'PI',
  'PR',
  'RJ',
  'RN',
  'RO',
  'RR',
  'RS',
  'SC',
  'SE',
  'SP',
  'TO',
] as const;

const text = (maxLength: number, description: string) => orNull(Type.String({ maxLength, description }));
const digits = (count: number, description: string) =>
  orNull(Type.String({ pattern: `^[0-9]{${count}}$`, description }));
const intEnum = (values: number[], description: string) => orNull(integerEnum(values, description));
/** `{type, enum}` (TypeBox's Enum has no `type`, which the OpenAPI document and type coercion want). */
function integerEnum(values: number[], description: string) {
  return Type.Unsafe<number>({ type: 'integer', enum: values, description });
}
function stringEnum<T extends string>(values: readonly T[], description: string) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], description });
}
const percent = (description: string) => orNull(Type.Number({ minimum: 0, maximum: 100, description }));

const Endereco = Type.Object(
  {
    logradouro: Type.Optional(text(255, 'Street')),
    numero: Type.Optional(text(60, 'Number')),
    complemento: Type.Optional(text(156, 'Complement')),
    bairro: Type.Optional(text(60, 'District')),
    cidade: Type.Optional(text(60, 'City name')),
    uf: Type.Optional(orNull(stringEnum(UFS, 'State abbreviation (UF)'))),
    cep: Type.Optional(orNull(Type.String({ pattern: '^[0-9]{8}$', description: 'Postal code, 8 digits only' }))),
  },
  { additionalProperties: false, description: 'Company address; on update, the given parts replace the stored ones' },
);

/** The project's choice of the national environment (spec 2.1 field of this service, issue #13). */
export const EMISSOR_NACIONAL_DESCRIPTION =
  "Issue through the national environment (Sefin Nacional) instead of the municipality's own system. Only for " +
  'municipalities that adhere to the national emitter (see GET /cobertura/cidades → nationalEmitterAdherent). ' +
  'Default false. true with a codigoMunicipio that does not adhere is a 400 naming emissorNacional; if the ' +
  'municipality leaves the adhesion list later, POST /emitir answers 422 ENGINE_NOT_AVAILABLE (the notes are never ' +
  'sent to another system than the one chosen). MEI projects issue through the national environment either way.';

/** Every project field but the three required ones; all accept null (null removes the value), but emissorNacional. */
const optionalFields = {
  inscricaoMunicipal: Type.Optional(text(30, 'Municipal registration (inscrição municipal)')),
  inscricaoEstadual: Type.Optional(text(30, 'State registration (inscrição estadual)')),
  regimeTributario: Type.Optional(
    orNull(
      stringEnum(
        REGIMES_TRIBUTARIOS,
        '1 not opted-in (regime normal), 2 MEI, 3 Simples Nacional ME/EPP, 3e Simples Nacional sublimit excess',
      ),
    ),
  ),
  codigoMunicipio: Type.Optional(
    orNull(
      Type.String({
        maxLength: 7,
        description: 'IBGE municipality code, 7 digits; must exist in the table of the 5,571 municipalities',
      }),
    ),
  ),
  email: Type.Optional(orNull(Type.String({ format: 'email', maxLength: 254, description: 'Company e-mail' }))),
  telefone: Type.Optional(
    orNull(Type.String({ pattern: '^[0-9()+\\-\\s]{6,20}$', description: 'Company phone (digits, spaces, ( ) + -)' })),
  ),
  description: Type.Optional(text(1000, 'Project description')),
  endereco: Type.Optional(orNull(Endereco)),
  codigoTributacao: Type.Optional(
    text(20, 'National taxation code (LC 116/2003); pre-fills servico.codigo when issuing'),
  ),
  tributacaoIss: Type.Optional(
    intEnum([1, 2, 3, 4], 'ISS taxation: 1 taxable, 2 outside scope, 3 export, 4 no incidence'),
  ),
  serieNfse: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,5}$', description: 'NFS-e series, 1 to 5 digits (default 1608)' }),
  ),
  aliquotaSimples: Type.Optional(percent('Effective DAS rate (%) for Simples Nacional ME/EPP')),
  regimeIss: Type.Optional(intEnum([1, 2, 3], 'ISS regime: 1 inside the DAS, 2 separate, 3 both separate')),
  codigoServicoSp: Type.Optional(digits(5, 'City-of-São-Paulo service code, 5 digits; required for São Paulo')),
  cnpjPrefeitura: Type.Optional(
    orNull(
      Type.String({
        maxLength: 18,
        description:
          "The city hall's CNPJ (14 digits, formatted or not, valid check digits): a public municipal parameter required " +
          'by the engines that write it into every message (Agili `UnidadeGestora`). null removes it.',
      }),
    ),
  ),
  endpointOverride: Type.Optional(
    orNull(
      Type.String({
        maxLength: 500,
        pattern: '^https?://[^\\s/?#]+[^\\s]*$',
        description:
          "Spec 4.8.3: the base URL the project's municipal engine sends to, taking precedence over the municipality " +
          "registry's (a provider's new address before the registry knows it). Not used by the national environment. " +
          'null removes it.',
      }),
    ),
  ),
  emissorNacional: Type.Optional(
    Type.Boolean({
      description: EMISSOR_NACIONAL_DESCRIPTION,
    }),
  ),
  cnae: Type.Optional(
    orNull(
      Type.String({
        pattern: '^[0-9]{4}-?[0-9]/?[0-9]{2}$',
        description: 'Main CNAE, 7 digits (formatted or not); required by GINFES and the Federal District',
      }),
    ),
  ),
  basicAuthUsuario: Type.Optional(text(120, 'User for municipalities that use HTTP Basic Auth')),
  basicAuthSenha: Type.Optional(text(256, 'Basic Auth password; write-only: stored encrypted and never returned')),
  ambiente: Type.Optional(integerEnum([1, 2], '1 production, 2 homologation (default 2)')),
  serieNfe: Type.Optional(
    orNull(Type.Integer({ minimum: 1, maximum: 999, description: 'NF-e (model 55) series, 1 to 999' })),
  ),
  serieNfce: Type.Optional(
    orNull(Type.Integer({ minimum: 1, maximum: 999, description: 'NFC-e (model 65) series, 1 to 999' })),
  ),
  cscId: Type.Optional(text(36, 'CSC id from the state tax portal')),
  cscToken: Type.Optional(text(256, 'CSC token; write-only: stored encrypted and never returned')),
  cstPisCofins: Type.Optional(
    digits(2, 'Default PIS/COFINS CST, 2 digits; used for regime 1 only (ignored for MEI and Simples)'),
  ),
  aliquotaPis: Type.Optional(percent('Default PIS rate (%)')),
  aliquotaCofins: Type.Optional(percent('Default COFINS rate (%)')),
  tipoRetencaoPisCofins: Type.Optional(
    intEnum(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      'PIS/COFINS/CSLL withholding (tpRetPisCofins): 0 not withheld (default), 1 PIS/COFINS withheld, 3 all withheld, …',
    ),
  ),
  defaultCstIbscbs: Type.Optional(digits(3, 'Default IBS/CBS CST, 3 digits')),
  defaultClassificacaoTributaria: Type.Optional(digits(6, 'Default IBS/CBS cClassTrib, 6 digits')),
  defaultIndicadorOperacao: Type.Optional(digits(6, 'Default cIndOp, 6 digits')),
  defaultNbs: Type.Optional(digits(9, 'Default NBS code, 9 digits')),
  danfeTemplate: Type.Optional(
    orNull(
      stringEnum(
        DANFE_TEMPLATES,
        'DANFSe layout: padrao (default), retrato_logo, paisagem_logo; the logo layouts need a plan that allows a custom logo (Pro or higher); null restores padrao',
      ),
    ),
  ),
};

export const CreateProjectBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Project name' }),
    cnpj: Type.String({
      minLength: 1,
      maxLength: 32,
      description: '14 digits, formatted (00.000.000/0000-00) or not; check digits validated; immutable',
    }),
    razaoSocial: Type.String({ minLength: 1, maxLength: 300, description: 'Company legal name' }),
    ...optionalFields,
  },
  { additionalProperties: false, description: 'A fiscal company (spec 2.1)' },
);

export const UpdateProjectBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Project name' })),
    razaoSocial: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'Company legal name' })),
    cnpj: Type.Optional(
      Type.String({
        maxLength: 32,
        description: 'Immutable: accepted only when equal to the stored CNPJ (any other value is a 400)',
      }),
    ),
    ...optionalFields,
  },
  { additionalProperties: false, description: 'Any subset of the project fields but cnpj; null removes a value' },
);

const nullableString = (description: string) => Nullable(Type.String({ description }));
const nullableInteger = (description: string) => Nullable(Type.Integer({ description }));
const nullableNumber = (description: string) => Nullable(Type.Number({ description }));

/** Response fields of POST /org/projects (spec 2.1). */
const createdFields = {
  id: Type.String({ description: 'Project id (UUID)' }),
  name: Type.String(),
  cnpj: Type.String({ description: '14 digits' }),
  razaoSocial: Type.String(),
  codigoMunicipio: nullableString('IBGE municipality code'),
  ambiente: Type.Integer({ description: '1 production, 2 homologation' }),
  regimeTributario: nullableString('1, 2, 3 or 3e'),
  crt: nullableInteger(
    'Tax regime code derived from regimeTributario: 1 Simples Nacional, 2 Simples sublimit excess, 3 regime normal, 4 MEI',
  ),
  serieNfse: Type.String(),
  serieNfe: nullableInteger('NF-e series'),
  serieNfce: nullableInteger('NFC-e series'),
  tributacaoIss: nullableInteger('1 taxable, 2 outside scope, 3 export, 4 no incidence'),
  cstPisCofins: nullableString('Default PIS/COFINS CST'),
  defaultCstIbscbs: nullableString('Default IBS/CBS CST'),
  defaultClassificacaoTributaria: nullableString('Default cClassTrib'),
  defaultIndicadorOperacao: nullableString('Default cIndOp'),
  defaultNbs: nullableString('Default NBS'),
  danfeTemplate: Type.String({ description: 'padrao, retrato_logo or paisagem_logo' }),
  active: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
};

export const ProjectCreated = Type.Object(createdFields, { description: 'The created project' });

export const ProjectView = Type.Object(
  {
    ...createdFields,
    inscricaoMunicipal: nullableString('Municipal registration'),
    inscricaoEstadual: nullableString('State registration'),
    email: nullableString('Company e-mail'),
    telefone: nullableString('Company phone'),
    description: nullableString('Project description'),
    endereco: Type.Object(
      {
        logradouro: nullableString('Street'),
        numero: nullableString('Number'),
        complemento: nullableString('Complement'),
        bairro: nullableString('District'),
        cidade: nullableString('City'),
        uf: nullableString('State abbreviation'),
        cep: nullableString('Postal code, 8 digits'),
      },
      { description: 'Company address (parts without a value are null)' },
    ),
    codigoTributacao: nullableString('National taxation code'),
    aliquotaSimples: nullableNumber('Effective DAS rate (%)'),
    regimeIss: nullableInteger('1 inside the DAS, 2 separate, 3 both separate'),
    codigoServicoSp: nullableString('City-of-São-Paulo service code'),
    cnpjPrefeitura: nullableString("The city hall's CNPJ (Agili UnidadeGestora)"),
    endpointOverride: nullableString("Base URL of the project's municipal engine, before the registry's"),
    emissorNacional: Type.Boolean({
      description:
        "Issues through the national environment (Sefin Nacional) instead of the municipality's own system, by the project's choice",
    }),
    cnae: nullableString('Main CNAE, 7 digits'),
    basicAuthUsuario: nullableString('Basic Auth user (the password is write-only)'),
    cscId: nullableString('CSC id'),
    hasCscToken: Type.Boolean({ description: 'Whether a CSC token is stored (the token itself is write-only)' }),
    aliquotaPis: nullableNumber('Default PIS rate (%)'),
    aliquotaCofins: nullableNumber('Default COFINS rate (%)'),
    tipoRetencaoPisCofins: nullableInteger('PIS/COFINS/CSLL withholding (tpRetPisCofins)'),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  {
    description:
      'Full project. basicAuthSenha, cscToken, the certificate and its password are write-only and never returned.',
  },
);

/** The address of the project of the OpenAPI examples (the create request sends it, the project shows it). */
export const ENDERECO_EXAMPLE = {
  logradouro: 'Rua XV de Novembro',
  numero: '1299',
  complemento: 'Sala 804',
  bairro: 'Centro',
  cidade: 'Curitiba',
  uf: 'PR',
  cep: '80060000',
} as const;

/** The project the OpenAPI examples show: as created (POST /org/projects) … */
export const PROJECT_CREATED_EXAMPLE: Static<typeof ProjectCreated> = {
  id: 'a408dbd1-361b-4349-ae99-111df8564c37',
  name: 'Horizonte Tecnologia - Curitiba',
  cnpj: '11222333000181',
  razaoSocial: 'Horizonte Tecnologia da Informação Ltda',
  codigoMunicipio: '4106902',
  ambiente: 2,
  regimeTributario: '3',
  crt: 1,
  serieNfse: '1608',
  serieNfe: null,
  serieNfce: null,
  tributacaoIss: 1,
  cstPisCofins: null,
  defaultCstIbscbs: null,
  defaultClassificacaoTributaria: null,
  defaultIndicadorOperacao: null,
  defaultNbs: null,
  danfeTemplate: 'padrao',
  active: true,
  createdAt: '2026-11-20T13:07:44.902Z',
};

/** … and in full (GET /org/projects/{id}), after a later change. */
export const PROJECT_EXAMPLE: Static<typeof ProjectView> = {
  ...PROJECT_CREATED_EXAMPLE,
  inscricaoMunicipal: '0102345678',
  inscricaoEstadual: null,
  email: 'fiscal@horizontetecnologia.com.br',
  telefone: '(41) 3322-4455',
  description: null,
  endereco: ENDERECO_EXAMPLE,
  codigoTributacao: '010701',
  aliquotaSimples: 6,
  regimeIss: null,
  codigoServicoSp: null,
  cnpjPrefeitura: null,
  endpointOverride: null,
  emissorNacional: false,
  cnae: '6209100',
  basicAuthUsuario: null,
  cscId: null,
  hasCscToken: false,
  aliquotaPis: null,
  aliquotaCofins: null,
  tipoRetencaoPisCofins: null,
  updatedAt: '2026-11-21T09:15:03.117Z',
};

/** CRT of the NF-e family derived from the project's regime (spec 2.1 `crt`). */
export function crtOf(regime: string | null): number | null {
  switch (regime) {
    case '1':
      return 3;
    case '2':
      return 4;
    case '3':
      return 1;
    case '3e':
      return 2;
    default:
      return null;
  }
}

export function projectCreatedView(row: ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    cnpj: row.cnpj,
    razaoSocial: row.razaoSocial,
    codigoMunicipio: row.codigoMunicipio,
    ambiente: row.ambiente,
    regimeTributario: row.regimeTributario,
    crt: crtOf(row.regimeTributario),
    serieNfse: row.serieNfse,
    serieNfe: row.serieNfe,
    serieNfce: row.serieNfce,
    tributacaoIss: row.tributacaoIss,
    cstPisCofins: row.cstPisCofins,
    defaultCstIbscbs: row.defaultCstIbscbs,
    defaultClassificacaoTributaria: row.defaultClassificacaoTributaria,
    defaultIndicadorOperacao: row.defaultIndicadorOperacao,
    defaultNbs: row.defaultNbs,
    danfeTemplate: row.danfeTemplate,
    active: row.active,
    createdAt: iso(row.createdAt)!,
  };
}

export function projectFullView(row: ProjectRow) {
  const e = row.endereco ?? {};
  const part = (k: string) => (typeof e[k] === 'string' ? (e[k] as string) : null);
  return {
    ...projectCreatedView(row),
    inscricaoMunicipal: row.inscricaoMunicipal,
    inscricaoEstadual: row.inscricaoEstadual,
    email: row.email,
    telefone: row.telefone,
    description: row.description,
    endereco: {
      logradouro: part('logradouro'),
      numero: part('numero'),
      complemento: part('complemento'),
      bairro: part('bairro'),
      cidade: part('cidade'),
      uf: part('uf'),
      cep: part('cep'),
    },
    codigoTributacao: row.codigoTributacao,
    aliquotaSimples: row.aliquotaSimples === null ? null : Number(row.aliquotaSimples),
    regimeIss: row.regimeIss,
    codigoServicoSp: row.codigoServicoSp,
    cnpjPrefeitura: row.cnpjPrefeitura,
    endpointOverride: row.endpointOverride,
    emissorNacional: row.emissorNacional,
    cnae: row.cnae,
    basicAuthUsuario: row.basicAuthUsuario,
    cscId: row.cscId,
    hasCscToken: row.cscTokenSealed !== null,
    aliquotaPis: row.aliquotaPis === null ? null : Number(row.aliquotaPis),
    aliquotaCofins: row.aliquotaCofins === null ? null : Number(row.aliquotaCofins),
    tipoRetencaoPisCofins: row.tipoRetencaoPisCofins,
    updatedAt: iso(row.updatedAt)!,
  };
}
