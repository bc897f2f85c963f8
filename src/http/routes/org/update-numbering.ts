import { Type } from 'typebox';
import { raiseLastNumbers } from '../../../db/repositories/numbering.ts';
import { requireOrg } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams } from '../../schemas.ts';
import { assertValid, loadOrgProject } from './common.ts';
import { NUMBERING_EXAMPLE, NumberingView, numberingView } from './numbering-schemas.ts';

/** NFS-e DPS numbers have up to 15 digits; NF-e/NFC-e numbers up to 9. */
const MAX_NFSE = 999_999_999_999_999;
const MAX_NFE = 999_999_999;

/** PATCH /org/projects/{id}/numeracao: rule 4.1.1, numbers never decrease (the greater value wins). */
export const updateNumberingRoute: RouteModule = (app, ctx) => {
  app.patch(
    '/org/projects/:id/numeracao',
    {
      onRequest: requireOrg(ctx, 'projects:write'),
      attachValidation: true,
      schema: {
        tags: ['organization'],
        summary: 'Set the last used numbers of a project',
        description:
          'Needs the scope projects:write. Numbers never decrease: a value lower than the current one is ignored (the greater value wins). Answers the effective values.',
        params: IdParams,
        body: documentedBody(
          Type.Object(
            {
              ultimoNumeroNfse: Type.Optional(
                Type.Integer({ minimum: 0, maximum: MAX_NFSE, description: 'Last NFS-e (DPS) number used' }),
              ),
              ultimoNumeroNfe: Type.Optional(
                Type.Integer({ minimum: 0, maximum: MAX_NFE, description: 'Last NF-e number used' }),
              ),
              ultimoNumeroNfce: Type.Optional(
                Type.Integer({ minimum: 0, maximum: MAX_NFE, description: 'Last NFC-e number used' }),
              ),
            },
            { additionalProperties: false },
          ),
          {
            name: 'UpdateNumberingRequest',
            description: 'The last numbers used before this service (for example by the previous issuer)',
            example: { ultimoNumeroNfse: 1342 },
          },
        ),
        response: {
          200: documented(NumberingView, {
            name: 'Numbering',
            description: 'The effective numbering after the update (numbers never decrease)',
            example: NUMBERING_EXAMPLE,
          }),
          ...errorResponses(400, 404, 413, 415),
        },
      },
    },
    async (request) => {
      const project = await loadOrgProject(ctx, request);
      assertValid(request);
      const body = request.body;
      const last = await raiseLastNumbers(ctx.db, project.id, {
        nfse: body.ultimoNumeroNfse,
        nfe: body.ultimoNumeroNfe,
        nfce: body.ultimoNumeroNfce,
      });
      return numberingView(project, last);
    },
  );
};
