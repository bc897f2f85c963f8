import { sealSecret } from '../../../certificates/vault.ts';
import type { ProjectChanges } from '../../../db/repositories/projects.ts';
import { findMunicipality } from '../../../domain/municipalities.ts';
import type { MunicipalityRegistry } from '../../../engines/routing/municipality-registry.ts';
import { nationalEmitterChoiceProblem } from '../../../engines/routing/route.ts';
import { normalizeCnpj, onlyDigits } from '../../../domain/tax-ids.ts';
import { ApiError, type ErrorCode, type FieldError } from '../../errors.ts';
import { LOGO_TEMPLATES } from './project-schemas.ts';

/**
 * Turns a schema-valid project body (create or update) into column values: trims text (empty means null),
 * checks what a JSON schema cannot (CNPJ check digits, IBGE code in the municipality table), seals the
 * write-only secrets under the master key and merges the address parts. Only the fields present in the body
 * are returned, so the same code serves POST and PATCH.
 */

type Body = Record<string, unknown>;

interface Problem extends FieldError {
  code: ErrorCode;
}

/** Plain nullable text columns: body field = column name. */
const TEXT_FIELDS = [
  'inscricaoMunicipal',
  'inscricaoEstadual',
  'email',
  'telefone',
  'description',
  'codigoTributacao',
  'codigoServicoSp',
  'endpointOverride',
  'basicAuthUsuario',
  'cscId',
  'cstPisCofins',
  'defaultCstIbscbs',
  'defaultClassificacaoTributaria',
  'defaultIndicadorOperacao',
  'defaultNbs',
  'regimeTributario',
] as const;

/** Nullable numeric columns: body field = column name. */
const NUMBER_FIELDS = [
  'tributacaoIss',
  'regimeIss',
  'tipoRetencaoPisCofins',
  'serieNfe',
  'serieNfce',
  'aliquotaSimples',
  'aliquotaPis',
  'aliquotaCofins',
] as const;

const ADDRESS_PARTS = ['logradouro', 'numero', 'complemento', 'bairro', 'cidade', 'uf', 'cep'] as const;

function cleanText(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

export interface ProjectInput {
  columns: ProjectChanges & { cnpj?: string };
  /** the requested danfeTemplate needs a plan that allows a custom logo */
  wantsLogoTemplate: boolean;
}

export function readProjectInput(
  body: Body,
  options: { masterKey: Buffer; currentEndereco: Record<string, string | null> | null },
): ProjectInput {
  const problems: Problem[] = [];
  const columns: ProjectInput['columns'] = {};
  const has = (key: string) => Object.hasOwn(body, key) && body[key] !== undefined;

  for (const key of ['name', 'razaoSocial'] as const) {
    if (!has(key)) continue;
    const value = cleanText(body[key]);
    if (value === null) problems.push({ code: 'VALIDATION_FAILED', field: key, message: 'must not be blank' });
    else columns[key] = value;
  }

  if (has('cnpj')) {
    const cnpj = typeof body.cnpj === 'string' ? normalizeCnpj(body.cnpj.trim()) : null;
    if (cnpj === null) {
      problems.push({
        code: 'INVALID_CNPJ',
        field: 'cnpj',
        message: 'must be a CNPJ of 14 digits (formatted or not) with valid check digits',
      });
    } else columns.cnpj = cnpj;
  }

  for (const key of TEXT_FIELDS) if (has(key)) columns[key] = cleanText(body[key]);
  for (const key of NUMBER_FIELDS) if (has(key)) columns[key] = typeof body[key] === 'number' ? body[key] : null;

  if (has('cnpjPrefeitura')) {
    const given = cleanText(body.cnpjPrefeitura);
    const cnpj = given === null ? null : normalizeCnpj(given);
    if (given !== null && cnpj === null) {
      problems.push({
        code: 'INVALID_CNPJ',
        field: 'cnpjPrefeitura',
        message: "must be the city hall's CNPJ of 14 digits (formatted or not) with valid check digits",
      });
    } else columns.cnpjPrefeitura = cnpj;
  }

  if (has('emissorNacional')) columns.emissorNacional = body.emissorNacional === true;
  if (has('serieNfse')) columns.serieNfse = String(body.serieNfse);
  if (has('ambiente')) columns.ambiente = body.ambiente as number;
  if (has('cnae')) columns.cnae = typeof body.cnae === 'string' ? onlyDigits(body.cnae) || null : null;

  if (has('codigoMunicipio')) {
    const code = cleanText(body.codigoMunicipio);
    if (code !== null && (!/^[0-9]{7}$/.test(code) || !findMunicipality(code))) {
      problems.push({
        code: 'UNKNOWN_MUNICIPALITY',
        field: 'codigoMunicipio',
        message: `${code} is not a 7-digit IBGE municipality code of the municipality table`,
      });
    } else columns.codigoMunicipio = code;
  }

  if (has('endereco')) {
    const given = body.endereco as Record<string, unknown> | null;
    if (given === null) columns.endereco = null;
    else {
      const merged: Record<string, string | null> = {};
      for (const part of ADDRESS_PARTS) {
        merged[part] = Object.hasOwn(given, part) ? cleanText(given[part]) : (options.currentEndereco?.[part] ?? null);
      }
      columns.endereco = Object.values(merged).some((v) => v !== null) ? merged : null;
    }
  }

  const seal = (value: unknown) => {
    const plain = typeof value === 'string' && value !== '' ? value : null;
    return plain === null ? null : sealSecret(Buffer.from(plain, 'utf8'), options.masterKey).toString('base64');
  };
  if (has('basicAuthSenha')) columns.basicAuthSenhaSealed = seal(body.basicAuthSenha);
  if (has('cscToken')) columns.cscTokenSealed = seal(body.cscToken);

  let wantsLogoTemplate = false;
  if (has('danfeTemplate')) {
    const template = typeof body.danfeTemplate === 'string' ? body.danfeTemplate : 'padrao';
    columns.danfeTemplate = template;
    wantsLogoTemplate = LOGO_TEMPLATES.includes(template);
  }

  if (problems.length > 0) {
    throw new ApiError(
      problems[0]!.code,
      problems.map((p) => `${p.field} ${p.message}`).join('; '),
      problems.map(({ field, message }) => ({ field, message })),
    );
  }
  return { columns, wantsLogoTemplate };
}

/**
 * `emissorNacional: true` (the national environment by the project's choice) needs a municipality in the national-
 * emitter adhesion list: 400 VALIDATION_FAILED naming the field otherwise. Checked against the values the project will
 * hold whenever the body sets either field (an unrelated change of a project whose municipality left the list later
 * is not refused here: POST /emitir refuses it with 422 ENGINE_NOT_AVAILABLE).
 */
export function assertNationalEmitterChoice(
  registry: MunicipalityRegistry,
  changes: ProjectInput['columns'],
  current: { emissorNacional: boolean; codigoMunicipio: string | null } | null,
): void {
  if (changes.emissorNacional === undefined && changes.codigoMunicipio === undefined) return;
  const chosen = changes.emissorNacional ?? current?.emissorNacional ?? false;
  if (!chosen) return;
  const code = changes.codigoMunicipio !== undefined ? changes.codigoMunicipio : (current?.codigoMunicipio ?? null);
  const problem = nationalEmitterChoiceProblem(code, code ? registry.find(code) : null);
  if (problem) {
    throw new ApiError('VALIDATION_FAILED', `emissorNacional: ${problem}`, [
      { field: 'emissorNacional', message: problem },
    ]);
  }
}
