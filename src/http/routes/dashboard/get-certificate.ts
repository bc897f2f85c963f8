import { findActiveCertificate } from '../../../db/repositories/certificates.ts';
import { findOrgProject } from '../../../db/repositories/projects.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { requireSession, sessionOf } from './session.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * GET /dashboard/api/projects/{id}/certificate: the project's active A1 certificate (never its file or password),
 * for the expiry shown on the certificate page; `certificate: null` when none was uploaded.
 */
export const dashboardGetCertificateRoute: RouteModule = (app, ctx) => {
  app.get(
    '/dashboard/api/projects/:id/certificate',
    { onRequest: requireSession(ctx), schema: { hide: true, params: IdParams, response: errorResponses(401, 404) } },
    async (request) => {
      const session = sessionOf(request);
      const { id } = request.params;
      if (!isUuid(id) || !(await findOrgProject(ctx.db, session.orgId, id))) throw new ApiError('PROJECT_NOT_FOUND');
      const row = await findActiveCertificate(ctx.db, id);
      if (!row) return { certificate: null };
      return {
        certificate: {
          fileName: row.fileName,
          subjectCN: row.subjectCn,
          cnpj: row.cnpj,
          validFrom: row.validFrom.toISOString(),
          validUntil: row.validUntil.toISOString(),
          daysUntilExpiration: Math.floor((row.validUntil.getTime() - ctx.now().getTime()) / DAY_MS),
        },
      };
    },
  );
};
