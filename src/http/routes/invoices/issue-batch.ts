import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { toFiscalProfile } from '../../../db/repositories/project-profile.ts';
import { checkInvoiceRequest, type InvoiceRequest, InvoiceRequestSchema } from '../../../domain/invoice-request.ts';
import { type Warning, WarningListSchema } from '../../../domain/warnings.ts';
import { hashBody, type InvoiceDraft, InvoiceIntake, newInvoiceId } from '../../../invoices/intake.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError, type FieldError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses } from '../../schemas.ts';
import { strictValidatorCompiler } from '../../strict-validation.ts';
import { acceptOnce } from './accept-once.ts';
import { engineFor } from './engine-routing.ts';
import { IBSCBS_OMITTED_WARNING_EXAMPLE, INVOICE_REQUEST_EXAMPLE } from './examples.ts';
import type { ParametersLookup } from '../../../invoices/municipal-parameters.ts';
import { assertCertificateReady, prepareInvoice, refuseInvoice } from './issue-invoice.ts';

export const MAX_BATCH_ITEMS = 100;

export const BatchAccepted = Type.Object(
  {
    batchId: Type.String(),
    queued: Type.Integer({ description: 'Number of invoices queued (one per item)' }),
    status: Type.Literal('processing'),
    items: Type.Array(
      Type.Object({
        index: Type.Integer({ description: 'Position of the item in the request' }),
        invoiceId: Type.String(),
        warnings: WarningListSchema,
      }),
      { description: "One entry per item, in request order, with the adjustments made on the caller's behalf" },
    ),
  },
  { description: 'Batch accepted; poll GET /invoices/batch/{batchId}/status' },
);

export const issueBatchRoute: RouteModule = (app, ctx) => {
  const intake = new InvoiceIntake(ctx);
  app.post(
    '/emitir/batch',
    {
      onRequest: requireProject(ctx, 'emit'),
      // no type coercion in invoice bodies (see strict-validation.ts)
      validatorCompiler: strictValidatorCompiler,
      schema: {
        tags: ['issuing'],
        summary: 'Queue up to 100 NFS-e for issuing in one request (asynchronous)',
        description:
          `Needs the scope emit. \`items\`: 1 to ${MAX_BATCH_ITEMS} invoices, each with the body of POST /emitir and ` +
          'validated exactly like it. Any invalid item refuses the whole batch with 400 naming the item and field ' +
          '(`items.<index>.<field>`), and nothing is queued. Otherwise every item becomes an invoice, all committed ' +
          'together with their jobs and credits (one credit per item; 402 PAYMENT_REQUIRED_CREDITS_EXHAUSTED when a ' +
          'plan with a hard limit cannot fit them all), and are issued independently and in parallel. Follow them ' +
          'with GET /invoices/batch/{batchId}/status; the event batch.completed is sent once when the last item ends. ' +
          'A project that cannot be routed to an implemented engine is refused as a whole with 422 ENGINE_NOT_AVAILABLE (as POST /emitir) before any item is accepted. ' +
          'Without a valid A1 certificate the batch is refused at once with 422 PROJECT_CERTIFICATE_MISSING / ' +
          'PROJECT_CERTIFICATE_EXPIRED (nothing queued, no credit spent). ' +
          'Optional `Idempotency-Key` header (as POST /emitir): the same key with the same body returns the first 202 (same batchId and invoiceIds, header `idempotent-replayed: true`) and queues nothing; with a different body (or a key already used by POST /emitir), 409 IDEMPOTENCY_KEY_REUSED. Keys are kept 48 h, per project; the key, the batch and its invoices commit together, so a client killed mid-request can resend safely.',
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              description: 'Client-chosen key making a retry of the same batch safe (e.g. a file hash + chunk number)',
            }),
          ),
        }),
        body: documentedBody(
          Type.Object(
            {
              items: Type.Array(InvoiceRequestSchema, {
                minItems: 1,
                maxItems: MAX_BATCH_ITEMS,
                description: `1 to ${MAX_BATCH_ITEMS} invoices, each shaped like the body of POST /emitir`,
              }),
            },
            { additionalProperties: true },
          ),
          {
            name: 'BatchRequest',
            description: `1 to ${MAX_BATCH_ITEMS} invoices, each shaped like the body of POST /emitir`,
            example: {
              items: [
                {
                  tomador: { cpf: '52998224725', nome: 'Mariana Souza Albuquerque' },
                  servico: {
                    descricao: 'Instalação e configuração de software de gestão em notebook',
                    codigo: '010701',
                  },
                  valores: { total: 280, aliquotaIss: 2 },
                  referencia: 'OS-88412',
                },
                INVOICE_REQUEST_EXAMPLE,
              ],
            },
          },
        ),
        response: {
          202: documented(BatchAccepted, {
            name: 'BatchAccepted',
            description: 'Every item is queued; poll GET /invoices/batch/{batchId}/status',
            example: {
              batchId: '521b67b2-e53d-4617-b9bd-f27d083e6bab',
              queued: 2,
              status: 'processing',
              items: [
                {
                  index: 0,
                  invoiceId: '088f8ce1-dd9c-46b0-8b29-3de5045cfa89',
                  warnings: [IBSCBS_OMITTED_WARNING_EXAMPLE],
                },
                {
                  index: 1,
                  invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
                  warnings: [IBSCBS_OMITTED_WARNING_EXAMPLE],
                },
              ],
            },
          }),
          ...errorResponses(400, 402, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const principal = projectPrincipal(request);
      const project = toFiscalProfile(principal.project);
      const items = request.body.items as InvoiceRequest[];

      // routing is per project: one refusal (422 ENGINE_NOT_AVAILABLE) covers every item
      const engineId = engineFor(ctx, project, principal.project);
      const engine = ctx.engines.get(engineId);
      const prepared: ({ request: Record<string, unknown>; warnings: Warning[] } | null)[] = items.map(() => null);
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

      await assertCertificateReady(ctx, principal.projectId);

      // every item valid: the municipal step of each (cTribMun decision, parametrised rate), as POST /emitir does;
      // items of one service share the ADN lookups (cache and in-flight requests)
      const memo = new Map<string, Promise<ParametersLookup>>();
      for (const [index, item] of items.entries()) {
        prepared[index] = await prepareInvoice(
          ctx,
          engineId,
          principal.projectId,
          project,
          item as Record<string, unknown>,
          `items.${index}.`,
          memo,
        );
      }

      const batchId = randomUUID();
      const drafts: InvoiceDraft[] = items.map((item, index) => ({
        id: newInvoiceId(),
        request: prepared[index]!.request,
        referencia: item.referencia ?? null,
        batchIndex: index,
        warnings: prepared[index]!.warnings,
      }));
      const acceptance = {
        orgId: principal.orgId,
        projectId: principal.projectId,
        engine: engineId,
        ambiente: project.ambiente,
        drafts,
        batch: { id: batchId },
      };
      const body = {
        batchId,
        queued: drafts.length,
        status: 'processing' as const,
        items: drafts.map((d, index) => ({ index, invoiceId: d.id, warnings: d.warnings })),
      };
      const creditsExhausted = () =>
        new ApiError(
          'PAYMENT_REQUIRED_CREDITS_EXHAUSTED',
          `The plan's credits for this period cannot cover the ${drafts.length} invoices of this batch; nothing was queued`,
        );
      const idempotencyKey = request.headers['idempotency-key'];
      // the route is part of the hash: a key of POST /emitir reused here is a different request (409)
      return acceptOnce(
        intake,
        reply,
        acceptance,
        body,
        typeof idempotencyKey === 'string' && idempotencyKey
          ? { key: idempotencyKey, bodyHash: hashBody({ 'POST /emitir/batch': request.body }) }
          : null,
        creditsExhausted,
      );
    },
  );
};
