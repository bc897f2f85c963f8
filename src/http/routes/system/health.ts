import { Type } from 'typebox';
import type { RouteModule } from '../../route.ts';
import { documented, problemRef } from '../../schemas.ts';

export const health: RouteModule = (app, ctx) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['system'],
        summary: 'Liveness and database reachability',
        security: [],
        response: {
          200: documented(Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }), {
            name: 'Health',
            description: 'The process is up and its database answers',
            example: { status: 'ok', database: 'ok' },
          }),
          // the database is unreachable, or (problem+json SERVICE_UNAVAILABLE) the process is shutting down
          503: Type.Union(
            [Type.Object({ status: Type.Literal('error'), database: Type.Literal('unreachable') }), problemRef],
            {
              title: 'HealthUnavailable',
              'x-response-description': 'The database is unreachable, or the process is shutting down',
            },
          ),
          // Node's HTTP parser refuses over-large headers before any route runs (problem+json, see app.ts)
          431: problemRef,
        },
      },
    },
    async (_request, reply) => {
      if (await ctx.database.ping()) return { status: 'ok' as const, database: 'ok' as const };
      return reply.status(503).send({ status: 'error' as const, database: 'unreachable' as const });
    },
  );
};
