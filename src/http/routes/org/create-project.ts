import { Type } from 'typebox';
import { subscriptionOf } from '../../../db/repositories/organizations.ts';
import {
  countActiveProjects,
  findActiveProjectByCnpj,
  insertProject,
  lockOrganization,
} from '../../../db/repositories/projects.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';
import { assertValid } from './common.ts';
import { readProjectInput } from './project-input.ts';
import { CreateProjectBody, ProjectCreated, projectCreatedView } from './project-schemas.ts';
import { ProjectWarnings, routingWarnings } from './routing-warnings.ts';

/** POST /org/projects: registers a fiscal company (spec 2.1, rule 4.1.2). */
export const createProjectRoute: RouteModule = (app, ctx) => {
  app.post(
    '/org/projects',
    {
      onRequest: requireOrg(ctx, 'projects:write'),
      attachValidation: true,
      schema: {
        tags: ['organization'],
        summary: 'Create a project (fiscal company)',
        description:
          "Needs the scope projects:write. Checks the CNPJ check digits, the IBGE code, the plan's project limit (active projects) and CNPJ duplicates among the organization's active projects (409 with existingProjectId). A project whose municipality and regime no implemented engine serves is created with the warning ENGINE_NOT_AVAILABLE (it cannot issue until one does; MEI always can).",
        body: CreateProjectBody,
        response: {
          201: Type.Object(
            { ...ProjectCreated.properties, warnings: ProjectWarnings },
            { description: 'The created project' },
          ),
          ...errorResponses(400, 409, 413, 415),
        },
      },
    },
    async (request, reply) => {
      assertValid(request);
      const { orgId } = orgPrincipal(request);
      const input = readProjectInput(request.body as Record<string, unknown>, {
        masterKey: ctx.config.masterKey,
        currentEndereco: null,
      });
      const { cnpj, name, razaoSocial, ...rest } = input.columns;
      const row = await ctx.db.transaction(async (tx) => {
        await lockOrganization(tx, orgId);
        const sub = await subscriptionOf(tx, orgId);
        if (!sub) throw new ApiError('UNAUTHENTICATED', 'The organization no longer exists');
        if (input.wantsLogoTemplate && !sub.plan.allowLogo) {
          throw new ApiError(
            'PLAN_LOGO_NOT_ALLOWED',
            `The ${sub.plan.name} plan does not allow the custom-logo DANFSe templates; use padrao or upgrade to Pro`,
            [{ field: 'danfeTemplate', message: 'needs a plan that allows a custom logo' }],
          );
        }
        const limit = sub.plan.projectLimit;
        if (limit !== null && (await countActiveProjects(tx, orgId)) >= limit) {
          throw new ApiError(
            'PLAN_PROJECT_LIMIT',
            `The ${sub.plan.name} plan allows ${limit} active project${limit === 1 ? '' : 's'}; delete one or upgrade the plan`,
            [],
            { projectLimit: limit },
          );
        }
        const existing = await findActiveProjectByCnpj(tx, orgId, cnpj!);
        if (existing) {
          throw new ApiError(
            'CNPJ_ALREADY_REGISTERED',
            `The CNPJ ${cnpj} is already registered in project ${existing.id}`,
            [{ field: 'cnpj', message: 'is already registered in an active project of the organization' }],
            { existingProjectId: existing.id },
          );
        }
        return insertProject(tx, { ...rest, orgId, cnpj: cnpj!, name: name!, razaoSocial: razaoSocial! });
      });
      return reply.status(201).send({ ...projectCreatedView(row), warnings: routingWarnings(ctx, row) });
    },
  );
};
