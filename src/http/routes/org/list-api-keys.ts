import { Type } from 'typebox';
import { listProjectApiKeys } from '../../../db/repositories/api-keys.ts';
import { requireOrg } from '../../auth.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses, IdParams } from '../../schemas.ts';
import { iso, loadOrgProject } from './common.ts';

/** GET /org/projects/{id}/api-keys: every key of the project, revoked ones with active=false; never the key. */
export const listApiKeysRoute: RouteModule = (app, ctx) => {
  app.get(
    '/org/projects/:id/api-keys',
    {
      onRequest: requireOrg(ctx, 'api_keys:manage'),
      schema: {
        tags: ['organization'],
        summary: 'List the API keys of a project',
        description: 'Needs the scope api_keys:manage. The full key is never returned after its creation.',
        params: IdParams,
        response: {
          200: documented(
            Type.Object(
              {
                data: Type.Array(
                  Type.Object({
                    id: Type.String(),
                    name: Type.String(),
                    keyPrefix: Type.String(),
                    scopes: Type.Array(Type.String()),
                    rateLimitPerMinute: Type.Integer(),
                    active: Type.Boolean({ description: 'false once revoked' }),
                    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
                    createdAt: Type.String({ format: 'date-time' }),
                  }),
                ),
              },
              { description: "A project's keys" },
            ),
            {
              name: 'ApiKeyList',
              description: 'Every key of the project, revoked ones included',
              example: {
                data: [
                  {
                    id: '11bc92aa-c5ea-477a-b232-dd7f4e755cb7',
                    name: 'ERP production',
                    keyPrefix: 'svc_d0e7cf96',
                    scopes: ['emit', 'cancel', 'query'],
                    rateLimitPerMinute: 120,
                    active: true,
                    lastUsedAt: '2026-11-26T18:42:09.731Z',
                    createdAt: '2026-11-20T13:12:30.004Z',
                  },
                ],
              },
            },
          ),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const project = await loadOrgProject(ctx, request);
      const rows = await listProjectApiKeys(ctx.db, project.id);
      return {
        data: rows.map((k) => ({
          id: k.id,
          name: k.name,
          keyPrefix: k.prefix,
          scopes: k.scopes,
          rateLimitPerMinute: k.rateLimitPerMinute,
          active: k.active,
          lastUsedAt: iso(k.lastUsedAt),
          createdAt: iso(k.createdAt)!,
        })),
      };
    },
  );
};
