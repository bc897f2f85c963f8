import type { AppContext } from '../../../context.ts';
import type { ProjectFiscalProfile } from '../../../domain/project-profile.ts';
import type { EngineId } from '../../../engines/registry.ts';
import type { Credential } from '../../../engines/routing/families.ts';
import { type ProjectRequirementsInput, unmetProjectRequirements } from '../../../engines/routing/requirements.ts';
import type { projects } from '../../../db/schema.ts';
import { ApiError } from '../../errors.ts';

type ProjectRow = typeof projects.$inferSelect;

/** The project's values and credentials an engine may require (spec 4.8), from its row. */
function requirementsInput(project: ProjectFiscalProfile, row: ProjectRow): ProjectRequirementsInput {
  const credentials = new Set<Credential>();
  if (row.basicAuthUsuario) credentials.add('basicAuthUsuario').add('municipalUser');
  if (row.basicAuthSenhaSealed) credentials.add('basicAuthSenha').add('municipalPassword');
  if (row.cscTokenSealed) credentials.add('accessToken').add('authorizationKey');
  if (row.cnpjPrefeitura) credentials.add('cnpjPrefeitura');
  return {
    fields: {
      codigoMunicipio: project.codigoMunicipio,
      inscricaoMunicipal: project.inscricaoMunicipal,
      cnae: project.cnae,
      codigoServicoSp: project.codigoServicoSp,
    },
    credentials,
  };
}

/**
 * Routes the project (municipality, regime and its `emissorNacional` choice) to an implemented engine, or refuses
 * with 422 ENGINE_NOT_AVAILABLE naming the municipality, its provider and coverage status (`coverageStatus`, as in
 * GET /cobertura/cidades) and the project field at fault. Runs before any credit or number is spent.
 */
export function engineFor(ctx: AppContext, project: ProjectFiscalProfile, row: ProjectRow): EngineId {
  const decision = ctx.engines.route({ ...project, emissorNacional: row.emissorNacional });
  if (decision.ok) {
    if (!ctx.engines.isImplemented(decision.engine)) throw new Error(`routed to ${decision.engine}, not implemented`);
    // the national environment needs nothing beyond the certificate; a municipal engine may (spec 4.8)
    const unmet =
      decision.family === 'national' ? [] : unmetProjectRequirements(decision.route, requirementsInput(project, row));
    if (unmet.length > 0) {
      throw new ApiError('VALIDATION_FAILED', unmet.map((u) => `${u.field}: ${u.message}`).join('; '), unmet);
    }
    return decision.engine;
  }
  const route = decision.route;
  throw new ApiError(
    'ENGINE_NOT_AVAILABLE',
    decision.message,
    [{ field: `project.${decision.field}`, message: decision.message }],
    {
      municipality: route
        ? { codigoIbge: route.code, nome: route.name, uf: route.uf }
        : { codigoIbge: project.codigoMunicipio, nome: null, uf: null },
      provider: route?.provider ?? null,
      family: decision.family,
      routingId: route?.routingId ?? null,
      coverageStatus: decision.status,
      regimeTributario: project.regimeTributario,
      emissorNacional: row.emissorNacional,
    },
  );
}
