import { Type } from 'typebox';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../access/passwords.ts';
import { createMember } from '../../../db/repositories/members.ts';
import { findOrganization } from '../../../db/repositories/organizations.ts';
import { requireAdmin } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams, isUuid } from '../../schemas.ts';

/** The operator creates a member of an organization (e-mail and password; the CLI's `member create`). */
export const createMemberRoute: RouteModule = (app, ctx) => {
  app.post(
    '/admin/organizations/:id/members',
    {
      onRequest: requireAdmin(ctx),
      schema: {
        tags: ['admin'],
        summary: 'Create a member of an organization (operator key)',
        description:
          'A person who signs in with e-mail and password. The e-mail is stored lowercase and belongs to one ' +
          'organization (409 MEMBER_EMAIL_TAKEN otherwise); the password only as a scrypt hash.',
        params: IdParams,
        body: documentedBody(
          Type.Object(
            {
              email: Type.String({ format: 'email', maxLength: 254 }),
              password: Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH }),
            },
            { additionalProperties: false },
          ),
          {
            name: 'CreateMemberRequest',
            description: "The member's e-mail and password",
            example: { email: 'financeiro@horizontetecnologia.com.br', password: 'Ipê-amarelo-na-Serra-2026' },
          },
        ),
        response: {
          201: documented(
            Type.Object({
              id: Type.String(),
              orgId: Type.String(),
              email: Type.String(),
              createdAt: Type.String({ format: 'date-time' }),
            }),
            {
              name: 'Member',
              description: 'The member is created and can sign in to the dashboard',
              example: {
                id: '866c4218-9fb0-4278-a15a-c6ec517dc397',
                orgId: 'b0b3916f-4812-4303-816d-fabf88b3b4af',
                email: 'financeiro@horizontetecnologia.com.br',
                createdAt: '2026-11-20T13:05:12.418Z',
              },
            },
          ),
          ...errorResponses(400, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await findOrganization(ctx.db, id))) {
        throw new ApiError('NOT_FOUND', 'Organization not found');
      }
      const passwordHash = await hashPassword(request.body.password);
      const member = await createMember(ctx.db, { orgId: id, email: request.body.email, passwordHash });
      if (!member) {
        throw new ApiError(
          'MEMBER_EMAIL_TAKEN',
          `A member with the e-mail ${request.body.email.toLowerCase()} exists`,
          [{ field: 'email', message: 'already belongs to a member' }],
        );
      }
      return reply
        .status(201)
        .send({ id: member.id, orgId: member.orgId, email: member.email, createdAt: member.createdAt.toISOString() });
    },
  );
};
