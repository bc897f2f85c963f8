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
import { documented, documentedBody, errorResponses } from '../../schemas.ts';
import { assertValid } from './common.ts';
import { assertNationalEmitterChoice, readProjectInput } from './project-input.ts';
import {
  CreateProjectBody,
  ENDERECO_EXAMPLE,
  PROJECT_CREATED_EXAMPLE,
  ProjectCreated,
  projectCreatedView,
} from './project-schemas.ts';
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
        body: documentedBody(CreateProjectBody, {
          name: 'CreateProjectRequest',
          description: 'The fiscal company: name, CNPJ and legal name are required',
          example: {
            name: 'Horizonte Tecnologia - Curitiba',
            cnpj: '11.222.333/0001-81',
            razaoSocial: 'Horizonte Tecnologia da Informação Ltda',
            inscricaoMunicipal: '0102345678',
            regimeTributario: '3',
            codigoMunicipio: '4106902',
            email: 'fiscal@horizontetecnologia.com.br',
            telefone: '(41) 3322-4455',
            endereco: ENDERECO_EXAMPLE,
            codigoTributacao: '010701',
            tributacaoIss: 1,
            aliquotaSimples: 6,
          },
        }),
        response: {
          201: documented(
            Type.Object(
              { ...ProjectCreated.properties, warnings: ProjectWarnings },
              { description: 'A created project' },
            ),
            {
              name: 'ProjectCreated',
              description: 'The created project, with the warnings about it (ENGINE_NOT_AVAILABLE)',
              example: { ...PROJECT_CREATED_EXAMPLE, warnings: [] },
            },
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
      assertNationalEmitterChoice(ctx.engines.municipalities, input.columns, null);
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
