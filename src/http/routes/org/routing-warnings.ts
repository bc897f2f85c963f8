import { Type } from 'typebox';
import type { AppContext } from '../../../context.ts';
import { type Warning, warning } from '../../../domain/warnings.ts';

/** `warnings: [{code, field, message}]` of a project answer (codes from src/domain/warnings.ts). */
export const ProjectWarnings = Type.Array(
  Type.Object({
    code: Type.String({ description: 'Stable warning code (e.g. ENGINE_NOT_AVAILABLE)' }),
    field: Type.Union([Type.String(), Type.Null()], { description: 'The field the warning concerns' }),
    message: Type.String(),
  }),
  {
    description:
      'Things to know about the saved project. ENGINE_NOT_AVAILABLE: no engine this service implements can issue for ' +
      'this municipality and regime; POST /emitir will answer 422 ENGINE_NOT_AVAILABLE until one does (MEI providers ' +
      'always issue through the national environment; where the municipality adheres to the national emitter, ' +
      'emissorNacional true issues there). See GET /cobertura/cidades.',
  },
);

/** ENGINE_NOT_AVAILABLE when the project, as saved, cannot be routed to an implemented engine. */
export function routingWarnings(
  ctx: AppContext,
  project: { codigoMunicipio: string | null; regimeTributario: string | null; emissorNacional: boolean },
): Warning[] {
  const regime = project.regimeTributario;
  const decision = ctx.engines.route({
    codigoMunicipio: project.codigoMunicipio,
    regimeTributario: regime === '1' || regime === '2' || regime === '3' || regime === '3e' ? regime : null,
    emissorNacional: project.emissorNacional,
  });
  return decision.ok ? [] : [warning('ENGINE_NOT_AVAILABLE', decision.field, decision.message)];
}
