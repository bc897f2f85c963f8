import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { toFiscalProfile } from '../../../db/repositories/project-profile.ts';
import { checkInvoiceRequest, InvoiceRequestSchema, type InvoiceRequest } from '../../../domain/invoice-request.ts';
import { type InvoiceDraft, InvoiceIntake, newInvoiceId } from '../../../invoices/intake.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError, type FieldError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses } from '../../schemas.ts';
import { refuseInvoice } from './issue-invoice.ts';

export const MAX_BATCH_ITEMS = 100;

export const BatchAccepted = Type.Object(
  {
    batchId: Type.String(),
    queued: Type.Integer({ description: 'Number of invoices queued (one per item)' }),
    status: Type.Literal('processing'),
  },
  { description: 'Batch accepted; poll GET /invoices/batch/{batchId}/status' },
);

export const issueBatchRoute: RouteModule = (app, ctx) => {
  const intake = new InvoiceIntake(ctx);
  app.post(
    '/emitir/batch',
    {
      onRequest: requireProject(ctx, 'emit'),
      schema: {
        tags: ['issuing'],
        summary: 'Queue up to 100 NFS-e for issuing in one request (asynchronous)',
        description:
          `Needs the scope emit. \`items\`: 1 to ${MAX_BATCH_ITEMS} invoices, each with the body of POST /emitir and ` +
          'validated exactly like it. Any invalid item refuses the whole batch with 400 naming the item and field ' +
          '(`items.<index>.<field>`), and nothing is queued. Otherwise every item becomes an invoice, all committed ' +
          'together with their jobs and credits (one credit per item; 402 PAYMENT_REQUIRED_CREDITS_EXHAUSTED when a ' +
          'plan with a hard limit cannot fit them all), and are issued independently and in parallel. Follow them ' +
          'with GET /invoices/batch/{batchId}/status; the event batch.completed is sent once when the last item ends.',
        body: Type.Object(
          {
            items: Type.Array(InvoiceRequestSchema, {
              minItems: 1,
              maxItems: MAX_BATCH_ITEMS,
              description: `1 to ${MAX_BATCH_ITEMS} invoices, each shaped like the body of POST /emitir`,
            }),
          },
          { additionalProperties: true },
        ),
        response: { 202: BatchAccepted, ...errorResponses(400, 402) },
      },
    },
    async (request, reply) => {
      const principal = projectPrincipal(request);
      const project = toFiscalProfile(principal.project);
      const items = request.body.items as InvoiceRequest[];

      const engineId = ctx.engines.engineIdFor(project);
      const engine = ctx.engines.get(engineId);
      const failures: { index: number; checked: Parameters<typeof refuseInvoice>[0] }[] = [];
      items.forEach((item, index) => {
        // exactly the checks of POST /emitir: the request rules, then the engine's own requirements
        const checked = checkInvoiceRequest(item, project);
        if (!checked.ok) failures.push({ index, checked });
        else {
          const unmet = engine.checkRequest(project, checked.value);
          if (unmet.length > 0) failures.push({ index, checked: { code: 'VALIDATION_FAILED', errors: unmet } });
        }
      });
      // one bad item: refused exactly as POST /emitir refuses it (incl. the IBS/CBS combinations), fields prefixed
      if (failures.length === 1) refuseInvoice(failures[0]!.checked, `items.${failures[0]!.index}.`);
      if (failures.length > 1) {
        const errors: FieldError[] = failures.flatMap(({ index, checked }) =>
          checked.errors.map((e) => ({ field: `items.${index}.${e.field}`, message: e.message })),
        );
        const refused = failures.map(({ index, checked }) => ({
          index,
          code: checked.code,
          ...(checked.details ? { details: checked.details } : {}),
        }));
        refuseInvoice({ code: 'VALIDATION_FAILED', errors, details: { items: refused } });
      }

      const batchId = randomUUID();
      const drafts: InvoiceDraft[] = items.map((item, index) => ({
        id: newInvoiceId(),
        request: item as Record<string, unknown>,
        referencia: item.referencia ?? null,
        batchIndex: index,
      }));
      const result = await intake.accept({
        orgId: principal.orgId,
        projectId: principal.projectId,
        engine: engineId,
        ambiente: project.ambiente,
        drafts,
        batch: { id: batchId },
      });
      if (!result.ok) {
        throw new ApiError(
          'PAYMENT_REQUIRED_CREDITS_EXHAUSTED',
          `The plan's credits for this period cannot cover the ${drafts.length} invoices of this batch; nothing was queued`,
        );
      }
      return reply.status(202).send({ batchId, queued: drafts.length, status: 'processing' as const });
    },
  );
};
