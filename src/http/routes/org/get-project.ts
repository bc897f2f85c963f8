import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams } from '../../schemas.ts';
import { requireOrg } from '../../auth.ts';
import { loadOrgProject } from './common.ts';
import { ProjectView, projectFullView } from './project-schemas.ts';

/** GET /org/projects/{id}: the full project; write-only fields never appear. */
export const getProjectRoute: RouteModule = (app, ctx) => {
  app.get(
    '/org/projects/:id',
    {
      onRequest: requireOrg(ctx, 'projects:read'),
      schema: {
        tags: ['organization'],
        summary: 'Get a project',
        description:
          'Needs the scope projects:read. Deleted (inactive) projects are shown with active=false. basicAuthSenha, cscToken, the certificate and its password are never returned; hasCscToken tells whether a CSC token is stored.',
        params: IdParams,
        response: {
          200: documented(ProjectView, {
            name: 'Project',
            description: 'The project (write-only fields are never returned)',
            example: {
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
              inscricaoMunicipal: '0102345678',
              inscricaoEstadual: null,
              email: 'fiscal@horizontetecnologia.com.br',
              telefone: '(41) 3322-4455',
              description: null,
              endereco: {
                logradouro: 'Rua XV de Novembro',
                numero: '1299',
                complemento: 'Sala 804',
                bairro: 'Centro',
                cidade: 'Curitiba',
                uf: 'PR',
                cep: '80060000',
              },
              codigoTributacao: '010701',
              aliquotaSimples: 6,
              regimeIss: null,
              codigoServicoSp: null,
              cnpjPrefeitura: null,
              endpointOverride: null,
              cnae: '6209100',
              basicAuthUsuario: null,
              cscId: null,
              hasCscToken: false,
              aliquotaPis: null,
              aliquotaCofins: null,
              tipoRetencaoPisCofins: null,
              updatedAt: '2026-11-21T09:15:03.117Z',
            },
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => projectFullView(await loadOrgProject(ctx, request, { includeInactive: true })),
  );
};
