import { Type } from 'typebox';
import { toFiscalProfile } from '../../../db/repositories/project-profile.ts';
import { monthInBrasilia } from '../../../domain/invoice-request.ts';
import {
  adnServiceCode,
  type ParametrisedRate,
  requiresBreakdown,
  SEVEN_DIGIT_CAPITAL,
} from '../../../domain/municipal-breakdowns.ts';
import { findMunicipality } from '../../../domain/municipalities.ts';
import { findServiceCode } from '../../../domain/service-codes.ts';
import { breakdownTexts, lookupServiceParameters } from '../../../invoices/municipal-parameters.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, Nullable } from '../../schemas.ts';

const Vigencia = {
  aliquota: Nullable(Type.Number({ description: 'ISS rate (%) the municipality parametrised (`Aliq`)' })),
  incidencia: Nullable(Type.String({ description: 'Incidence flag as published (`Incidencia`, e.g. "SIM")' })),
  vigenciaInicio: Nullable(Type.String({ format: 'date', description: 'Start of the rate (`DtIni`)' })),
  vigenciaFim: Nullable(Type.String({ format: 'date', description: 'End of the rate (`DtFim`); null: open-ended' })),
};

export const CodesResponse = Type.Object(
  {
    codigo: Type.String({ description: 'The national service code asked (cTribNac, 6 digits)' }),
    descricao: Type.String({ description: 'Its description in the national service list (Anexo B)' }),
    ibge: Type.String({ description: 'The municipality asked (IBGE, 7 digits)' }),
    municipio: Type.String(),
    uf: Type.String(),
    competencia: Type.String({ description: 'Month the parametrisation is in force for (YYYY-MM)' }),
    exigeDesdobramento: Type.Boolean({
      description:
        'true: the municipality broke the service down and a DPS must carry one breakdown (cTribMun); POST /emitir ' +
        'injects `padrao` when servico.codigoTributacaoMunicipal is not sent',
    }),
    semDesdobramento: Nullable(
      Type.Object(Vigencia, {
        description:
          'The service without breakdown (ADN `II.SS.DD.000`), with its rate; null when the municipality does not ' +
          'publish it. When it exists and there is no breakdown, a sent cTribMun is ignored (CTRIBMUN_IGNORED)',
      }),
    ),
    desdobramentos: Type.Array(
      Type.Object({
        codigoTributacaoMunicipal: Type.String({
          description: 'The value for servico.codigoTributacaoMunicipal (cTribMun, 3 digits)',
        }),
        codigoServicoAdn: Type.String({ description: 'The code as the ADN keys it, `II.SS.DD.NNN`' }),
        descricao: Type.String({
          description:
            "The municipality's text of the breakdown (xTribMun) once an NFS-e with it was issued through this " +
            'service; until then the national description with the breakdown number (the ADN API publishes no text ' +
            'for a breakdown)',
        }),
        origemDescricao: Type.Union([Type.Literal('nfse'), Type.Literal('lista-nacional')], {
          description: '`nfse`: the xTribMun of an issued NFS-e; `lista-nacional`: built from the national list',
        }),
        padrao: Type.Boolean({
          description: 'The breakdown injected when the municipality requires one and none is sent',
        }),
        ...Vigencia,
      }),
      { description: 'Municipal breakdowns of the service, in code order; empty when there are none' },
    ),
    fonte: Type.Object(
      {
        api: Type.Literal('ADN Parâmetros Municipais'),
        ambiente: Type.Union([Type.Literal('producao'), Type.Literal('homologacao')], {
          description: "The project's environment the ADN was asked in",
        }),
        consultadoEm: Type.String({
          format: 'date-time',
          description: 'When the oldest answer used was fetched (answers are cached, NFSE_ADN_PARAMETERS_TTL_SECONDS)',
        }),
      },
      { description: 'Where the data comes from' },
    ),
  },
  { description: 'The municipal breakdowns (cTribMun) of a national service code in a municipality (spec 4.6)' },
);

const vigencia = (rate: ParametrisedRate) => ({
  aliquota: rate.aliquota,
  incidencia: rate.incidencia,
  vigenciaInicio: rate.inicio,
  vigenciaFim: rate.fim,
});

/** GET /codigos?codigo=&ibge=: the municipal breakdowns of a service code in a municipality (spec 4.6, 4.7). */
export const listCodesRoute: RouteModule = (app, ctx) => {
  app.get(
    '/codigos',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['lookup'],
        summary: 'List the municipal breakdowns (cTribMun) of a service code in a municipality',
        description:
          'Needs the scope query. Reads the municipality\'s parametrisation from the ADN "Parâmetros Municipais" ' +
          "API (mutual TLS with the project's A1 certificate; answers cached for NFSE_ADN_PARAMETERS_TTL_SECONDS) in " +
          "the project's environment. 400 INVALID_QUERY naming the parameter when one is missing or malformed; " +
          '404 MUNICIPALITY_NOT_FOUND when the IBGE code does not exist or the municipality is not parametrised in ' +
          'the national environment; 409 PROJECT_CERTIFICATE_REQUIRED without a certificate (and nothing cached); ' +
          `503 when the ADN does not answer. ${SEVEN_DIGIT_CAPITAL.name} (${SEVEN_DIGIT_CAPITAL.ibge}) takes a 7-digit ` +
          'servico.codigoTributacaoMunicipal (item and subitem + the 3 digits listed here).',
        querystring: Type.Object({
          codigo: Type.Optional(Type.String({ description: 'cTribNac, 6 digits (e.g. 010101)' })),
          ibge: Type.Optional(Type.String({ description: 'IBGE municipality code, 7 digits (e.g. 3304557)' })),
          competencia: Type.Optional(Type.String({ description: 'YYYY-MM; default the current month (Brasília)' })),
        }),
        response: {
          200: documented(CodesResponse, {
            name: 'MunicipalBreakdowns',
            description: 'The municipal breakdowns (cTribMun) of the service code in the municipality (spec 4.6)',
            example: {
              codigo: '010101',
              descricao: 'Análise e desenvolvimento de sistemas.',
              ibge: '3304557',
              municipio: 'Rio de Janeiro',
              uf: 'RJ',
              competencia: '2026-11',
              exigeDesdobramento: true,
              semDesdobramento: null,
              desdobramentos: [
                {
                  codigoTributacaoMunicipal: '001',
                  codigoServicoAdn: '01.01.01.001',
                  descricao: 'Análise e desenvolvimento de sistemas. (desdobramento municipal 001)',
                  origemDescricao: 'lista-nacional',
                  padrao: true,
                  aliquota: 2,
                  incidencia: null,
                  vigenciaInicio: '2023-01-01',
                  vigenciaFim: null,
                },
              ],
              fonte: {
                api: 'ADN Parâmetros Municipais',
                ambiente: 'homologacao',
                consultadoEm: '2026-11-26T17:58:03.411Z',
              },
            },
          }),
          ...errorResponses(400, 404, 409, 503),
        },
      },
    },
    async (request) => {
      const principal = projectPrincipal(request);
      const query = request.query as { codigo?: string; ibge?: string; competencia?: string };
      const errors: { field: string; message: string }[] = [];
      const codigo = query.codigo?.trim() ?? '';
      const ibge = query.ibge?.trim() ?? '';
      const competencia = query.competencia?.trim() || monthInBrasilia(ctx.now());
      if (!codigo)
        errors.push({ field: 'codigo', message: 'required: the national service code (cTribNac), 6 digits' });
      else if (!/^\d{6}$/.test(codigo)) errors.push({ field: 'codigo', message: 'must be 6 digits (cTribNac)' });
      else if (!findServiceCode(codigo)) {
        errors.push({ field: 'codigo', message: `${codigo} is not in the national service list` });
      }
      if (!ibge) errors.push({ field: 'ibge', message: 'required: the IBGE municipality code, 7 digits' });
      else if (!/^\d{7}$/.test(ibge)) errors.push({ field: 'ibge', message: 'must be 7 digits (IBGE code)' });
      if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(competencia)) {
        errors.push({ field: 'competencia', message: 'must be YYYY-MM' });
      }
      if (errors.length > 0) {
        throw new ApiError('INVALID_QUERY', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
      }
      const municipality = findMunicipality(ibge);
      if (!municipality) {
        throw new ApiError('MUNICIPALITY_NOT_FOUND', `${ibge} is not an IBGE municipality code`, [
          { field: 'ibge', message: 'unknown IBGE municipality code' },
        ]);
      }
      const project = toFiscalProfile(principal.project);
      const found = await lookupServiceParameters(ctx, {
        projectId: principal.projectId,
        ambiente: project.ambiente,
        municipio: ibge,
        cTribNac: codigo,
        competencia,
      });
      if (found.kind === 'municipality-unknown') {
        throw new ApiError(
          'MUNICIPALITY_NOT_FOUND',
          `${municipality.name}/${municipality.uf} (${ibge}) is not parametrised in the national environment (ADN)`,
          [{ field: 'ibge', message: 'the municipality has no parametrisation (convênio) in the ADN' }],
        );
      }
      if (found.kind === 'unavailable') {
        if (found.code.startsWith('CERTIFICATE_')) {
          throw new ApiError('PROJECT_CERTIFICATE_REQUIRED', `The ADN needs mutual TLS: ${found.reason}`, [], {
            certificateCode: found.code,
          });
        }
        throw new ApiError('SERVICE_UNAVAILABLE', `The ADN parametrização API did not answer: ${found.reason}`);
      }
      const { params } = found;
      const service = findServiceCode(codigo)!;
      const texts = await breakdownTexts(ctx, { ambiente: project.ambiente, municipio: ibge, cTribNac: codigo });
      const required = requiresBreakdown(params);
      return {
        codigo,
        descricao: service.description,
        ibge,
        municipio: municipality.name,
        uf: municipality.uf,
        competencia,
        exigeDesdobramento: required,
        semDesdobramento: params.semDesdobramento ? vigencia(params.semDesdobramento) : null,
        desdobramentos: params.desdobramentos.map((d, index) => ({
          codigoTributacaoMunicipal: d.codigo,
          codigoServicoAdn: adnServiceCode(codigo, d.codigo),
          descricao: texts.get(d.codigo) ?? `${service.description} (desdobramento municipal ${d.codigo})`,
          origemDescricao: texts.has(d.codigo) ? ('nfse' as const) : ('lista-nacional' as const),
          padrao: required && index === 0,
          ...vigencia(d.rate),
        })),
        fonte: {
          api: 'ADN Parâmetros Municipais' as const,
          ambiente: project.ambiente === 1 ? ('producao' as const) : ('homologacao' as const),
          consultadoEm: found.fetchedAt.toISOString(),
        },
      };
    },
  );
};
