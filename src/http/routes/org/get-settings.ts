import { Type } from 'typebox';
import { subscriptionOf } from '../../../db/repositories/organizations.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, errorResponses } from '../../schemas.ts';

/** GET /org/settings (spec 2.6): the organization, its white-label domain and its subscription figures. */
export const getSettingsRoute: RouteModule = (app, ctx) => {
  app.get(
    '/org/settings',
    {
      onRequest: requireOrg(ctx, 'settings:read'),
      schema: {
        tags: ['organization'],
        summary: 'Get the organization settings',
        description: 'Needs the scope settings:read.',
        response: {
          200: documented(
            Type.Object(
              {
                name: Type.String(),
                slug: Type.String(),
                storageBaseUrl: Type.Union([Type.String(), Type.Null()], {
                  description: 'White-label base URL of document links (as set), or null',
                }),
                storageBaseUrlStatus: Type.Union(
                  [
                    Type.Object({
                      status: Type.Union(
                        [Type.Literal('pending_verification'), Type.Literal('active'), Type.Literal('failed')],
                        {
                          description:
                            'pending_verification → active once its CNAME resolves to the target, or failed (reason)',
                        },
                      ),
                      reason: Type.Union([Type.String(), Type.Null()], {
                        description: 'Why it is not active yet (or failed)',
                      }),
                      checkedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
                      cnameTarget: Type.String({ description: 'The host the CNAME must point to' }),
                      activeBaseUrl: Type.Union([Type.String(), Type.Null()], {
                        description: 'The base document URLs use now (the last verified domain; null: the default)',
                      }),
                    }),
                    Type.Null(),
                  ],
                  { description: 'Verification of the white-label domain; null without one' },
                ),
                subscription: Type.Object({
                  planName: Type.String(),
                  planSlug: Type.String(),
                  creditsUsed: Type.Integer({ description: 'Credits used in the current monthly period' }),
                  creditsLimit: Type.Integer({ description: 'Credits included in the plan per period' }),
                  daysLeft: Type.Integer({ description: 'Days until the current period ends' }),
                }),
              },
              { description: 'Organization settings (spec 2.6)' },
            ),
            {
              name: 'OrganizationSettings',
              description: 'The organization settings (spec 2.6)',
              example: {
                name: 'Horizonte Tecnologia',
                slug: 'horizonte-tecnologia',
                storageBaseUrl: 'https://notas.horizontetecnologia.com.br',
                storageBaseUrlStatus: {
                  status: 'active',
                  reason: null,
                  checkedAt: '2026-11-21T10:02:41.266Z',
                  cnameTarget: 'docs.nfse-service.example.com',
                  activeBaseUrl: 'https://notas.horizontetecnologia.com.br',
                },
                subscription: {
                  planName: 'Pro',
                  planSlug: 'pro',
                  creditsUsed: 137,
                  creditsLimit: 2000,
                  daysLeft: 4,
                },
              },
            },
          ),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const { orgId } = orgPrincipal(request);
      const sub = await subscriptionOf(ctx.db, orgId, ctx.now());
      if (!sub) throw new ApiError('UNAUTHENTICATED', 'The organization no longer exists');
      const { org, subscription: s } = sub;
      return {
        name: org.name,
        slug: org.slug,
        storageBaseUrl: org.storageBaseUrl,
        storageBaseUrlStatus: org.storageBaseUrl
          ? {
              status: (org.storageBaseUrlStatus ?? 'pending_verification') as 'pending_verification',
              reason: org.storageBaseUrlReason,
              checkedAt: org.storageBaseUrlCheckedAt?.toISOString() ?? null,
              cnameTarget: ctx.config.cnameTarget,
              activeBaseUrl: org.storageBaseUrlActive,
            }
          : null,
        subscription: {
          planName: s.planName,
          planSlug: s.planSlug,
          creditsUsed: s.creditsUsed,
          creditsLimit: s.creditsLimit,
          daysLeft: s.daysLeft,
        },
      };
    },
  );
};
