import { Type } from 'typebox';
import { listProjectInvoices } from '../../../db/repositories/invoice-list.ts';
import { findOrgProject } from '../../../db/repositories/projects.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams, isUuid } from '../../schemas.ts';
import { requireSession, sessionOf } from './session.ts';

const STATUSES = ['queued', 'processing', 'issued', 'error', 'cancelled'];

/**
 * GET /dashboard/api/projects/{id}/invoices: the invoices page's list (the JSON API reads one invoice at a time),
 * newest first, filtered by status, creation date (from and to inclusive, YYYY-MM-DD, Brasília time) and taker.
 */
export const dashboardListInvoicesRoute: RouteModule = (app, ctx) => {
  app.get(
    '/dashboard/api/projects/:id/invoices',
    {
      onRequest: requireSession(ctx),
      schema: {
        hide: true,
        params: IdParams,
        querystring: Type.Object(
          {
            status: Type.Optional(Type.Union(STATUSES.map((s) => Type.Literal(s)))),
            from: Type.Optional(Type.String({ format: 'date' })),
            to: Type.Optional(Type.String({ format: 'date' })),
            taker: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          },
          { additionalProperties: false },
        ),
        response: errorResponses(400, 401, 404),
      },
    },
    async (request) => {
      const session = sessionOf(request);
      const { id } = request.params;
      if (!isUuid(id) || !(await findOrgProject(ctx.db, session.orgId, id, { includeInactive: true }))) {
        throw new ApiError('PROJECT_NOT_FOUND');
      }
      const q = request.query;
      const from = q.from ? new Date(`${q.from}T00:00:00-03:00`) : undefined;
      const to = q.to ? new Date(`${q.to}T00:00:00-03:00`) : undefined;
      if (to) to.setUTCDate(to.getUTCDate() + 1); // the whole "to" day, in Brasília time
      const rows = await listProjectInvoices(ctx.db, {
        orgId: session.orgId,
        projectId: id,
        status: q.status,
        from,
        to,
        taker: q.taker?.trim() || undefined,
        limit: q.limit ?? 50,
      });
      return {
        items: rows.map((r) => ({
          ...r,
          createdAt: r.createdAt.toISOString(),
          emittedAt: r.emittedAt?.toISOString() ?? null,
        })),
      };
    },
  );
};
