import { Type } from 'typebox';
import { subscriptionOf } from '../../../db/repositories/organizations.ts';
import { updateOrgProject } from '../../../db/repositories/projects.ts';
import { normalizeCnpj } from '../../../domain/tax-ids.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams } from '../../schemas.ts';
import { assertValid, loadOrgProject } from './common.ts';
import { assertNationalEmitterChoice, readProjectInput } from './project-input.ts';
import { UpdateProjectBody } from './project-schemas.ts';
import { ProjectWarnings, routingWarnings } from './routing-warnings.ts';

/** PATCH /org/projects/{id}: changes any subset of the fields but the CNPJ; null removes a value. */
export const updateProjectRoute: RouteModule = (app, ctx) => {
  app.patch(
    '/org/projects/:id',
    {
      onRequest: requireOrg(ctx, 'projects:write'),
      attachValidation: true,
      schema: {
        tags: ['organization'],
        summary: 'Update a project',
        description:
          'Needs the scope projects:write. Same fields as create except cnpj (immutable); all optional; nullable fields accept null to remove the value (danfeTemplate null restores padrao). The endereco parts given replace the stored ones. Changing codigoMunicipio or regimeTributario to a combination no implemented engine serves answers the warning ENGINE_NOT_AVAILABLE. emissorNacional true needs a codigoMunicipio that adheres to the national emitter (400 VALIDATION_FAILED naming emissorNacional otherwise), checked whenever either field is sent.',
        params: IdParams,
        body: documentedBody(UpdateProjectBody, {
          name: 'UpdateProjectRequest',
          description: 'The fields to change; null removes a value',
          example: { cnae: '6209100', email: 'nfse@horizontetecnologia.com.br', inscricaoEstadual: null },
        }),
        response: {
          200: documented(
            Type.Object(
              { updated: Type.Literal(true), id: Type.String(), warnings: ProjectWarnings },
              { description: 'An updated project' },
            ),
            {
              name: 'ProjectUpdated',
              description: 'The project was updated',
              example: { updated: true, id: 'a408dbd1-361b-4349-ae99-111df8564c37', warnings: [] },
            },
          ),
          ...errorResponses(400, 404, 413, 415),
        },
      },
    },
    async (request) => {
      const project = await loadOrgProject(ctx, request);
      assertValid(request);
      const { orgId } = orgPrincipal(request);
      const body = { ...(request.body as Record<string, unknown>) };
      if (body.cnpj !== undefined) {
        if (typeof body.cnpj !== 'string' || normalizeCnpj(body.cnpj.trim()) !== project.cnpj) {
          throw new ApiError('VALIDATION_FAILED', 'cnpj is immutable after creation', [
            { field: 'cnpj', message: 'is immutable after creation' },
          ]);
        }
        delete body.cnpj;
      }
      const input = readProjectInput(body, {
        masterKey: ctx.config.masterKey,
        currentEndereco: project.endereco,
      });
      if (input.wantsLogoTemplate) {
        const sub = await subscriptionOf(ctx.db, orgId);
        if (!sub?.plan.allowLogo) {
          throw new ApiError(
            'PLAN_LOGO_NOT_ALLOWED',
            `The ${sub?.plan.name ?? 'current'} plan does not allow the custom-logo DANFSe templates; use padrao or upgrade to Pro`,
            [{ field: 'danfeTemplate', message: 'needs a plan that allows a custom logo' }],
          );
        }
      }
      assertNationalEmitterChoice(ctx.engines.municipalities, input.columns, project);
      const row = await updateOrgProject(ctx.db, orgId, project.id, input.columns);
      if (!row) throw new ApiError('PROJECT_NOT_FOUND', 'Project not found');
      // routing depends on municipality, regime and the emissorNacional choice: warn when a change leaves the project
      // without an engine
      const routingChanged = 'codigoMunicipio' in body || 'regimeTributario' in body || 'emissorNacional' in body;
      return { updated: true as const, id: row.id, warnings: routingChanged ? routingWarnings(ctx, row) : [] };
    },
  );
};
