import { Type } from 'typebox';
import { toFiscalProfile } from '../../../db/repositories/project-profile.ts';
import { checkInvoiceRequest, InvoiceRequestSchema } from '../../../domain/invoice-request.ts';
import { hashBody, InvoiceIntake, newInvoiceId, pollUrl } from '../../../invoices/intake.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';

export const IssueAccepted = Type.Object({
  queued: Type.Boolean(),
  invoiceId: Type.String(),
  status: Type.Literal('queued'),
  pollUrl: Type.String({ description: 'Path of the status endpoint' }),
});

/** Raises the 400 of a body the domain refuses (fields named), incl. the ambiguous IBS/CBS framing. */
export function refuseInvoice(
  checked: { code: string; errors: { field: string; message: string }[]; details?: unknown },
  fieldPrefix = '',
): never {
  const errors = checked.errors.map((e) => ({ field: `${fieldPrefix}${e.field}`, message: e.message }));
  const code = checked.code === 'IBSCBS_FRAMING_AMBIGUOUS' ? 'IBSCBS_FRAMING_AMBIGUOUS' : 'VALIDATION_FAILED';
  throw new ApiError(
    code,
    errors.map((e) => `${e.field}: ${e.message}`).join('; '),
    errors,
    checked.details && typeof checked.details === 'object' ? (checked.details as Record<string, unknown>) : {},
  );
}

export const issueInvoiceRoute: RouteModule = (app, ctx) => {
  const intake = new InvoiceIntake(ctx);
  app.post(
    '/emitir',
    {
      preHandler: requireProject(ctx, 'emit'),
      schema: {
        tags: ['issuing'],
        summary: 'Queue an NFS-e for issuing (asynchronous)',
        description:
          'Validates the invoice, commits it with its job and answers 202 at once. Poll `pollUrl` or listen to webhooks. ' +
          'Optional `Idempotency-Key` header: the same key with the same body returns the first response; with a different body, 409 IDEMPOTENCY_KEY_REUSED (keys are kept 48 h, per project). ' +
          'Each accepted invoice consumes one plan credit (402 PAYMENT_REQUIRED_CREDITS_EXHAUSTED on plans with a hard limit).',
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        }),
        body: InvoiceRequestSchema,
        response: { 202: IssueAccepted, ...errorResponses(400, 402, 409) },
      },
    },
    async (request, reply) => {
      const principal = projectPrincipal(request);
      const project = toFiscalProfile(principal.project);
      const checked = checkInvoiceRequest(request.body, project);
      if (!checked.ok) refuseInvoice(checked);
      const engineId = ctx.engines.engineIdFor(project);
      const unmet = ctx.engines.get(engineId).checkRequest(project, checked.value);
      if (unmet.length > 0) refuseInvoice({ code: 'VALIDATION_FAILED', errors: unmet });

      const id = newInvoiceId();
      const body = { queued: true, invoiceId: id, status: 'queued' as const, pollUrl: pollUrl(id) };
      const acceptance = {
        orgId: principal.orgId,
        projectId: principal.projectId,
        engine: engineId,
        ambiente: project.ambiente,
        drafts: [
          {
            id,
            request: request.body as Record<string, unknown>,
            referencia: (request.body as { referencia?: string }).referencia ?? null,
          },
        ],
      };
      const idempotencyKey = request.headers['idempotency-key'];
      if (typeof idempotencyKey === 'string' && idempotencyKey) {
        const result = await intake.acceptIdempotent(acceptance, idempotencyKey, hashBody(request.body), {
          status: 202,
          body,
        });
        if (result.kind === 'mismatch') {
          throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different body', [
            { field: 'headers.idempotency-key', message: 'was used with a different body' },
          ]);
        }
        if (result.kind === 'replay') {
          return reply
            .status(result.status as 202)
            .header('idempotent-replayed', 'true')
            .send(result.body as never);
        }
        if (result.kind === 'refused') throw new ApiError('PAYMENT_REQUIRED_CREDITS_EXHAUSTED');
        return reply.status(202).send(body);
      }
      const result = await intake.accept(acceptance);
      if (!result.ok) {
        throw new ApiError(
          'PAYMENT_REQUIRED_CREDITS_EXHAUSTED',
          "The plan's credits for this period are used up; upgrade the plan to keep issuing",
        );
      }
      return reply.status(202).send(body);
    },
  );
};
