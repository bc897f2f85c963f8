import type { RouteModule } from '../../route.ts';
import { requireSession, sessionOf, sessionView } from './session.ts';

/** GET /dashboard/api/session: who is signed in, and the CSRF token of the session (401 when nobody is). */
export const dashboardGetSessionRoute: RouteModule = (app, ctx) => {
  app.get('/dashboard/api/session', { onRequest: requireSession(ctx), schema: { hide: true } }, async (request) =>
    sessionView(sessionOf(request)),
  );
};
