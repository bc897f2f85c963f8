import type { AppContext } from '../../../context.ts';
import type { ProjectFiscalProfile } from '../../../domain/project-profile.ts';
import type { EngineId } from '../../../engines/registry.ts';
import { ApiError } from '../../errors.ts';

/**
 * Routes the project to an implemented engine, or refuses with 422 ENGINE_NOT_AVAILABLE naming the
 * municipality, its provider and coverage status (`coverageStatus`, as in GET /cobertura/cidades). Runs before any credit or number is spent.
 */
export function engineFor(ctx: AppContext, project: ProjectFiscalProfile): EngineId {
  const decision = ctx.engines.route(project);
  if (decision.ok) {
    if (!ctx.engines.isImplemented(decision.family)) throw new Error(`routed to ${decision.family}, not implemented`);
    return decision.family;
  }
  const route = decision.route;
  throw new ApiError(
    'ENGINE_NOT_AVAILABLE',
    decision.message,
    [{ field: 'project.codigoMunicipio', message: decision.message }],
    {
      municipality: route
        ? { codigoIbge: route.code, nome: route.name, uf: route.uf }
        : { codigoIbge: project.codigoMunicipio, nome: null, uf: null },
      provider: route?.provider ?? null,
      family: decision.family,
      routingId: route?.routingId ?? null,
      coverageStatus: decision.status,
      regimeTributario: project.regimeTributario,
    },
  );
}
