import { Type } from 'typebox';
import type { RouteModule } from '../../route.ts';
import { problemRef } from '../../schemas.ts';

export const health: RouteModule = (app, ctx) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['system'],
        summary: 'Liveness and database reachability',
        security: [],
        response: {
          200: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }),
          // the database is unreachable, or (problem+json SERVICE_UNAVAILABLE) the process is shutting down
          503: Type.Union([
            Type.Object({ status: Type.Literal('error'), database: Type.Literal('unreachable') }),
            problemRef,
          ]),
        },
      },
    },
    async (_request, reply) => {
      if (await ctx.database.ping()) return { status: 'ok' as const, database: 'ok' as const };
      return reply.status(503).send({ status: 'error' as const, database: 'unreachable' as const });
    },
  );
};
