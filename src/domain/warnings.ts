import { Type } from 'typebox';

/**
 * The one catalogue of warnings: adjustments the service made on the caller's behalf. A warning never
 * refuses anything; it is returned beside the result (`warnings: [{ code, field, message }]`) in the
 * 202 of POST /emitir (and per batch item), in the invoice status, and wherever else a request was
 * accepted with an adjustment. Codes are stable, like the error catalogue's; add new ones here.
 */
export const WARNING_CATALOGUE = {
  FEDERAL_TAXES_IGNORED: 'Federal tax fields are ignored for MEI and Simples Nacional providers',
  IBSCBS_GROUP_OMITTED: 'The IBS/CBS group was omitted: the provider is not obliged to declare it for this competência',
  TIPO_ENTE_GOVERNAMENTAL_NOT_EXPRESSIBLE: 'tipoEnteGovernamental 9 (other) cannot be expressed in the national schema',
  CTRIBMUN_IGNORED: 'The municipality does not require a municipal breakdown (cTribMun); the value sent was ignored',
  CTRIBMUN_INJECTED: 'The municipality requires a municipal breakdown (cTribMun); the first one of its table was used',
  SERVICE_CODE_NORMALIZED: 'The service code was normalised',
  PROJECT_DEFAULT_APPLIED: 'A project default was applied',
  RATE_LIMIT_CAPPED: 'The requested rate limit exceeds the ceiling and was capped',
  ENGINE_NOT_AVAILABLE: "The project's municipality is served by an engine that is not available yet",
  PROJECT_DEFAULT_IGNORED: 'A project default was not applied because it does not fit this request',
  FOREIGN_ADDRESS_DEFAULT_APPLIED:
    'A datum the national layout requires for an address abroad (xEstProvReg, xBairro) was not sent: a documented default was declared',
} as const satisfies Record<string, string>;

export type WarningCode = keyof typeof WARNING_CATALOGUE;

export interface Warning {
  code: WarningCode;
  /** the request field the adjustment concerns (dotted path), or null when it concerns the whole request */
  field: string | null;
  message: string;
}

export function warning(code: WarningCode, field: string | null, message?: string): Warning {
  return { code, field, message: message ?? WARNING_CATALOGUE[code] };
}

/** The `warnings` list of a response (202 of POST /emitir and per batch item, invoice status): OpenAPI schema. */
export const WarningListSchema = Type.Array(
  Type.Object({
    code: Type.String({ description: `Stable code: ${Object.keys(WARNING_CATALOGUE).join(', ')}` }),
    field: Type.Union([Type.String(), Type.Null()], {
      description: 'The request field the adjustment concerns (dotted path), or null for the whole request',
    }),
    message: Type.String({ description: "What the service did on the caller's behalf" }),
  }),
  {
    description:
      "Adjustments the service made on the caller's behalf (fields ignored, defaults applied, groups omitted); empty when none",
  },
);
