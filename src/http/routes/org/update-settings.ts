import { eq } from 'drizzle-orm';
import { Type } from 'typebox';
import { organizations } from '../../../db/schema.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';
import { assertNoNulCharacters, assertValid, orNull } from './common.ts';
import { checkStorageBaseUrl } from './storage-base-url.ts';

/** PATCH /org/settings: sets or removes the white-label storage domain (rule 4.1.3). */
export const updateSettingsRoute: RouteModule = (app, ctx) => {
  app.patch(
    '/org/settings',
    {
      onRequest: requireOrg(ctx, 'settings:write'),
      attachValidation: true,
      schema: {
        tags: ['organization'],
        summary: 'Set the white-label storage domain',
        description:
          'Needs the scope settings:write. storageBaseUrl must use https and a public domain (no localhost, no IP address, no .local, no host without a domain); null removes it. The CNAME of the domain must then be pointed manually at the service target named in the message; the status stays pending_verification until then.',
        body: Type.Object(
          {
            storageBaseUrl: orNull(
              Type.String({ maxLength: 2048, description: 'https URL on a public domain, or null to remove it' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              storageBaseUrl: Type.Union([Type.String(), Type.Null()]),
              status: Type.Union([Type.Literal('pending_verification'), Type.Literal('removed')], {
                description: 'pending_verification until the CNAME is configured; removed after null',
              }),
              message: Type.String({ description: 'What to do next (the CNAME to set)' }),
            },
            { description: 'The white-label domain and what to do next' },
          ),
          ...errorResponses(400, 413, 415),
        },
      },
    },
    async (request) => {
      assertValid(request);
      assertNoNulCharacters(request.body);
      const { orgId } = orgPrincipal(request);
      const given = request.body.storageBaseUrl;
      if (given === null) {
        await ctx.db
          .update(organizations)
          .set({ storageBaseUrl: null, storageBaseUrlStatus: null })
          .where(eq(organizations.id, orgId));
        return {
          storageBaseUrl: null,
          status: 'removed' as const,
          message: 'The white-label domain was removed; document URLs use the default domain again.',
        };
      }
      const check = checkStorageBaseUrl(given);
      if (!check.ok) {
        throw new ApiError('INVALID_STORAGE_BASE_URL', `storageBaseUrl ${check.reason}`, [
          { field: 'storageBaseUrl', message: check.reason },
        ]);
      }
      await ctx.db
        .update(organizations)
        .set({ storageBaseUrl: check.value, storageBaseUrlStatus: 'pending_verification' })
        .where(eq(organizations.id, orgId));
      return {
        storageBaseUrl: check.value,
        status: 'pending_verification' as const,
        message: `Create a CNAME record for ${check.host} pointing to ${ctx.config.cnameTarget}. The domain stays pending_verification until the CNAME is configured.`,
      };
    },
  );
};
