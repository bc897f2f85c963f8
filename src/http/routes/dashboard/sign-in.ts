import { Type } from 'typebox';
import { hashPassword, PASSWORD_MAX_LENGTH, verifyPassword } from '../../../access/passwords.ts';
import type { AppContext } from '../../../context.ts';
import { findMemberByEmail, insertSession } from '../../../db/repositories/dashboard-sessions.ts';
import { createOrgToken } from '../../../db/repositories/organizations.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';
import {
  assertSameOrigin,
  csrfTokenOf,
  hashSecret,
  newSecret,
  SESSION_TTL_MS,
  seal,
  sessionView,
  setSessionCookie,
} from './session.ts';

/** Sign-in attempts per client address and per e-mail address, per minute. */
const ATTEMPTS_PER_ADDRESS = 20;
const ATTEMPTS_PER_EMAIL = 5;

let dummyHash: Promise<string> | null = null;
/** The hash checked when no member has the e-mail: an unknown e-mail costs the same scrypt as a wrong password. */
function unknownMemberHash(): Promise<string> {
  dummyHash ??= hashPassword(newSecret());
  return dummyHash;
}

async function limitAttempts(ctx: AppContext, bucket: string, perMinute: number) {
  const retryAfter = await ctx.rateLimiter.take(bucket, perMinute);
  if (retryAfter !== null) {
    throw new ApiError(
      'RATE_LIMITED',
      `At most ${perMinute} sign-in attempts per minute`,
      [],
      {},
      {
        'retry-after': String(retryAfter),
      },
    );
  }
}

/**
 * POST /dashboard/api/session: a member signs in with e-mail and password (scrypt, src/access/passwords.ts).
 * Rate-limited per address and per e-mail; a wrong password and an unknown e-mail take the same path and answer the
 * same 401. The session acts through an organization token minted for it (every organization scope), sealed in the
 * session row and revoked at sign-out or expiry.
 */
export const dashboardSignInRoute: RouteModule = (app, ctx) => {
  app.post(
    '/dashboard/api/session',
    {
      onRequest: async (request) => {
        assertSameOrigin(request);
        await limitAttempts(ctx, `dashboard-sign-in:${request.ip}`, ATTEMPTS_PER_ADDRESS);
      },
      schema: {
        hide: true,
        body: Type.Object(
          {
            email: Type.String({ minLength: 3, maxLength: 254 }),
            password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
          },
          { additionalProperties: false },
        ),
        response: errorResponses(400, 401, 403, 429),
      },
    },
    async (request, reply) => {
      const email = request.body.email.trim().toLowerCase();
      await limitAttempts(ctx, `dashboard-sign-in:${email}`, ATTEMPTS_PER_EMAIL);
      const found = await findMemberByEmail(ctx.db, email);
      const matches = await verifyPassword(
        request.body.password,
        found?.member.passwordHash ?? (await unknownMemberHash()),
      );
      if (!found || !matches) throw new ApiError('DASHBOARD_SIGN_IN_FAILED', 'Wrong e-mail or password');
      const member = found.member;
      const secret = newSecret();
      const expiresAt = new Date(ctx.now().getTime() + SESSION_TTL_MS);
      const session = await ctx.db.transaction(async (tx) => {
        const { row, token } = await createOrgToken(tx, member.orgId, `dashboard session ${member.email}`);
        return insertSession(tx, {
          orgId: member.orgId,
          memberId: member.id,
          secretHash: hashSecret(secret),
          orgTokenId: row.id,
          orgTokenSealed: seal(ctx, token),
          expiresAt,
        });
      });
      setSessionCookie(ctx, request, reply, `${session.id}.${secret}`, Math.floor(SESSION_TTL_MS / 1000));
      return reply.status(200).send(
        sessionView({
          email: member.email,
          orgId: member.orgId,
          orgName: found.orgName,
          expiresAt,
          csrfToken: csrfTokenOf(secret),
        }),
      );
    },
  );
};
