import { Type } from 'typebox';
import type { AppContext } from '../../../context.ts';
import { toFiscalProfile } from '../../../db/repositories/project-profile.ts';
import { checkInvoiceRequest, InvoiceRequestSchema } from '../../../domain/invoice-request.ts';
import { type Warning, WarningListSchema } from '../../../domain/warnings.ts';
import type { ProjectFiscalProfile } from '../../../domain/project-profile.ts';
import { applyMunicipalBreakdown } from '../../../invoices/breakdown-step.ts';
import { hashBody, InvoiceIntake, newInvoiceId, pollUrl } from '../../../invoices/intake.ts';
import type { ParametersLookup } from '../../../invoices/municipal-parameters.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses } from '../../schemas.ts';
import { strictValidatorCompiler } from '../../strict-validation.ts';
import { acceptOnce } from './accept-once.ts';
import { engineFor } from './engine-routing.ts';
import { IBSCBS_OMITTED_WARNING_EXAMPLE, INVOICE_REQUEST_EXAMPLE } from './examples.ts';

export const IssueAccepted = Type.Object({
  queued: Type.Boolean(),
  invoiceId: Type.String(),
  status: Type.Literal('queued'),
  pollUrl: Type.String({ description: 'Path of the status endpoint' }),
  warnings: WarningListSchema,
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

/**
 * Refuses at the door what cannot succeed: without an active, unexpired A1 certificate the government call can
 * only fail, so the request is answered 422 before a credit or a DPS number is spent.
 */
export async function assertCertificateReady(ctx: AppContext, projectId: string): Promise<void> {
  const ready = await ctx.certificates.readiness(projectId, ctx.now());
  if (ready.ok) return;
  throw new ApiError(
    ready.code === 'CERTIFICATE_MISSING' ? 'PROJECT_CERTIFICATE_MISSING' : 'PROJECT_CERTIFICATE_EXPIRED',
    ready.message,
  );
}

/**
 * The checks of one invoice before it is accepted (POST /emitir and each batch item): the request rules, the
 * municipal step (cTribMun decision and parametrised ISS rate, invoices/breakdown-step.ts) and the engine's own
 * requirements. Returns the request to store (rewritten when a breakdown was injected or ignored) and its warnings;
 * throws the 400 (field names prefixed with `fieldPrefix` for batch items).
 */
export async function prepareInvoice(
  ctx: AppContext,
  engineId: string,
  projectId: string,
  project: ProjectFiscalProfile,
  body: Record<string, unknown>,
  fieldPrefix = '',
  memo?: Map<string, Promise<ParametersLookup>>,
): Promise<{ request: Record<string, unknown>; warnings: Warning[] }> {
  let checked = checkInvoiceRequest(body as never, project);
  if (!checked.ok) refuseInvoice(checked, fieldPrefix);
  const step = await applyMunicipalBreakdown(ctx, { projectId, project, invoice: checked.value, request: body, memo });
  if (!step.ok) {
    const field = `${fieldPrefix}${step.field}`;
    throw new ApiError(step.code, `${field}: ${step.message}`, [{ field, message: step.message }], step.extras);
  }
  if (step.changed) {
    checked = checkInvoiceRequest(step.request as never, project);
    if (!checked.ok) refuseInvoice(checked, fieldPrefix);
  }
  const unmet = ctx.engines.get(engineId).checkRequest(project, checked.value);
  if (unmet.length > 0) refuseInvoice({ code: 'VALIDATION_FAILED', errors: unmet }, fieldPrefix);
  // every adjustment made on the caller's behalf: the rules' (checked again when the step rewrote the request),
  // then the municipal step's; fields are relative to the invoice request (a batch item's own body)
  return { request: step.request, warnings: [...checked.warnings, ...step.warnings] };
}

export const issueInvoiceRoute: RouteModule = (app, ctx) => {
  const intake = new InvoiceIntake(ctx);
  app.post(
    '/emitir',
    {
      onRequest: requireProject(ctx, 'emit'),
      // no type coercion in invoice bodies: `"total": true` or `"100"` is a 400 naming the field
      validatorCompiler: strictValidatorCompiler,
      schema: {
        tags: ['issuing'],
        summary: 'Queue an NFS-e for issuing (asynchronous)',
        description:
          'Validates the invoice, commits it with its job and answers 202 at once. Poll `pollUrl` or listen to webhooks. ' +
          'Optional `Idempotency-Key` header: the same key with the same body returns the first response; with a different body, 409 IDEMPOTENCY_KEY_REUSED (keys are kept 48 h, per project). ' +
          'Each accepted invoice consumes one plan credit (402 PAYMENT_REQUIRED_CREDITS_EXHAUSTED on plans with a hard limit). ' +
          'Types are strict: money, rates, booleans and enums must have their JSON type (no coercion of "100", true, [100] or null). ' +
          "`warnings` lists every adjustment made on the caller's behalf (also kept in the invoice status). " +
          "The project is routed by municipality and regime (MEI always to the national environment); when no engine this service implements serves the project's municipality for its regime, 422 ENGINE_NOT_AVAILABLE names the municipality, provider and coverage status (see GET /cobertura/cidades) and nothing is spent. " +
          'A project without an A1 certificate, or whose certificate has expired, is refused at once with 422 ' +
          'PROJECT_CERTIFICATE_MISSING / PROJECT_CERTIFICATE_EXPIRED (no credit, no number spent). ' +
          "Municipal breakdown (cTribMun, spec 4.7): the municipality of ISS incidence's parametrisation (ADN) decides; " +
          'where it requires a breakdown and none is sent, the first one is injected (warning CTRIBMUN_INJECTED); a ' +
          'sent one wins when it exists (else 400 MUNICIPAL_BREAKDOWN_INVALID, E0314); where none applies, a sent one is ' +
          'ignored (warning CTRIBMUN_IGNORED). When the national system applies the parametrised ISS rate (E0617, ' +
          'E0635), a different valores.aliquotaIss is 400 ISS_RATE_MISMATCH with the expected rate.',
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        }),
        body: documentedBody(InvoiceRequestSchema, {
          name: 'InvoiceRequest',
          description: 'The invoice to issue (spec 2.7): taker, service and amounts',
          example: INVOICE_REQUEST_EXAMPLE,
        }),
        response: {
          202: documented(IssueAccepted, {
            name: 'InvoiceAccepted',
            description: 'The invoice is queued; poll pollUrl or wait for the webhooks',
            example: {
              queued: true,
              invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
              status: 'queued',
              pollUrl: '/api/v1/invoices/ec96b9b1-e89f-46f6-8351-644687a97c27/status',
              warnings: [IBSCBS_OMITTED_WARNING_EXAMPLE],
            },
          }),
          ...errorResponses(400, 402, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const principal = projectPrincipal(request);
      const project = toFiscalProfile(principal.project);
      const engineId = engineFor(ctx, project, principal.project);
      await assertCertificateReady(ctx, principal.projectId);
      const prepared = await prepareInvoice(
        ctx,
        engineId,
        principal.projectId,
        project,
        request.body as Record<string, unknown>,
      );
      const warnings: Warning[] = prepared.warnings;

      const id = newInvoiceId();
      const body = { queued: true, invoiceId: id, status: 'queued' as const, pollUrl: pollUrl(id), warnings };
      const acceptance = {
        orgId: principal.orgId,
        projectId: principal.projectId,
        engine: engineId,
        ambiente: project.ambiente,
        drafts: [
          {
            id,
            request: prepared.request,
            referencia: (request.body as { referencia?: string }).referencia ?? null,
            warnings,
          },
        ],
      };
      const idempotencyKey = request.headers['idempotency-key'];
      return acceptOnce(
        intake,
        reply,
        acceptance,
        body,
        typeof idempotencyKey === 'string' && idempotencyKey
          ? { key: idempotencyKey, bodyHash: hashBody(request.body) }
          : null,
        () =>
          new ApiError(
            'PAYMENT_REQUIRED_CREDITS_EXHAUSTED',
            "The plan's credits for this period are used up; upgrade the plan to keep issuing",
          ),
      );
    },
  );
};
