import { Type } from 'typebox';
import type { RouteModule } from '../../route.ts';

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
          503: Type.Object({ status: Type.Literal('error'), database: Type.Literal('unreachable') }),
        },
      },
    },
    async (_request, reply) => {
      if (await ctx.database.ping()) return { status: 'ok' as const, database: 'ok' as const };
      return reply.status(503).send({ status: 'error' as const, database: 'unreachable' as const });
    },
  );
};
