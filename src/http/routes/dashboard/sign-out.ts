import { endSession } from '../../../db/repositories/dashboard-sessions.ts';
import type { RouteModule } from '../../route.ts';
import { clearSessionCookie, requireSession, sessionOf } from './session.ts';

/** DELETE /dashboard/api/session: signs out (CSRF-checked); the credentials minted for the session are revoked. */
export const dashboardSignOutRoute: RouteModule = (app, ctx) => {
  app.delete(
    '/dashboard/api/session',
    { onRequest: requireSession(ctx), schema: { hide: true } },
    async (request, reply) => {
      const session = sessionOf(request);
      await ctx.db.transaction((tx) => endSession(tx, session.id, ctx.now()));
      clearSessionCookie(ctx, request, reply);
      return reply.status(204).send();
    },
  );
};
