import { eq } from 'drizzle-orm';
import { Type } from 'typebox';
import { organizations } from '../../../db/schema.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import { scheduleDomainCheck } from '../../../domains/verification.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses } from '../../schemas.ts';
import { assertValid, orNull } from './common.ts';
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
          'Needs the scope settings:write. storageBaseUrl must use https and a public domain (no localhost, no IP address, no .local, no host without a domain); null removes it. The CNAME of the domain must then be pointed manually at the service target named in the message; the status stays pending_verification until a verification job has resolved that CNAME (checked at once, then on a schedule; GET /org/settings shows the status and the reason), and document URLs keep the current base (the last verified domain, or the default) until then. Setting the domain that is already verified keeps it active.',
        body: documentedBody(
          Type.Object(
            {
              storageBaseUrl: orNull(
                Type.String({ maxLength: 2048, description: 'https URL on a public domain, or null to remove it' }),
              ),
            },
            { additionalProperties: false },
          ),
          {
            name: 'UpdateSettingsRequest',
            description: 'The white-label base URL of document links, or null to remove it',
            example: { storageBaseUrl: 'https://notas.horizontetecnologia.com.br' },
          },
        ),
        response: {
          200: documented(
            Type.Object(
              {
                storageBaseUrl: Type.Union([Type.String(), Type.Null()]),
                status: Type.Union(
                  [Type.Literal('pending_verification'), Type.Literal('active'), Type.Literal('removed')],
                  {
                    description:
                      'pending_verification until the CNAME is verified; active when this domain is already the ' +
                      'verified one; removed after null',
                  },
                ),
                message: Type.String({ description: 'What to do next (the CNAME to set)' }),
              },
              { description: 'A white-label domain and what to do next' },
            ),
            {
              name: 'StorageDomain',
              description: 'The white-label domain and what to do next',
              example: {
                storageBaseUrl: 'https://notas.horizontetecnologia.com.br',
                status: 'pending_verification',
                message:
                  'Create a CNAME record for notas.horizontetecnologia.com.br pointing to docs.nfse-service.example.com. The domain stays pending_verification until the CNAME is verified (checked at once, then every 600 s); document URLs keep their current base until then.',
              },
            },
          ),
          ...errorResponses(400, 413, 415),
        },
      },
    },
    async (request) => {
      assertValid(request);
      const { orgId } = orgPrincipal(request);
      const given = request.body.storageBaseUrl;
      if (given === null) {
        await ctx.db
          .update(organizations)
          .set({
            storageBaseUrl: null,
            storageBaseUrlStatus: null,
            storageBaseUrlActive: null,
            storageBaseUrlReason: null,
            storageBaseUrlCheckedAt: null,
          })
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
      const status = await ctx.db.transaction(async (tx) => {
        const [current] = await tx
          .select({ active: organizations.storageBaseUrlActive })
          .from(organizations)
          .where(eq(organizations.id, orgId))
          .for('update');
        if (current?.active === check.value) {
          await tx
            .update(organizations)
            .set({ storageBaseUrl: check.value, storageBaseUrlStatus: 'active', storageBaseUrlReason: null })
            .where(eq(organizations.id, orgId));
          return 'active' as const;
        }
        await tx
          .update(organizations)
          .set({
            storageBaseUrl: check.value,
            storageBaseUrlStatus: 'pending_verification',
            storageBaseUrlReason: null,
            storageBaseUrlCheckedAt: null,
          })
          .where(eq(organizations.id, orgId));
        await scheduleDomainCheck(ctx, tx, { orgId, storageBaseUrl: check.value, check: 0 });
        return 'pending_verification' as const;
      });
      if (status === 'pending_verification') ctx.queue.wake('domain.verify');
      return {
        storageBaseUrl: check.value,
        status,
        message:
          status === 'active'
            ? `${check.host} is already verified; document URLs use it.`
            : `Create a CNAME record for ${check.host} pointing to ${ctx.config.cnameTarget}. The domain stays pending_verification until the CNAME is verified (checked at once, then every ${ctx.config.domainVerificationRetrySeconds} s); document URLs keep their current base until then.`,
      };
    },
  );
};
