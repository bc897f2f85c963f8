import { Type } from 'typebox';
import { requestCancellation } from '../../../invoices/cancellation.ts';
import { pollUrl } from '../../../invoices/intake.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError, notFound } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, isUuid } from '../../schemas.ts';

export const CancellationAccepted = Type.Object(
  {
    invoiceId: Type.String(),
    status: Type.Literal('cancelling', {
      description: 'The cancellation was accepted and is being sent; the invoice stays issued until it is done',
    }),
    cancellation: Type.Object({
      status: Type.Literal('requested'),
      requestedAt: Type.String({ format: 'date-time' }),
    }),
    pollUrl: Type.String({ description: 'Path of the status endpoint' }),
  },
  { description: 'Cancellation accepted (asynchronous)' },
);

export const cancelInvoiceRoute: RouteModule = (app, ctx) => {
  app.post(
    '/cancelar',
    {
      onRequest: requireProject(ctx, 'cancel'),
      schema: {
        tags: ['issuing'],
        summary: 'Cancel an issued invoice (asynchronous)',
        description:
          'Needs the scope cancel. Only an invoice with status issued can be cancelled. The request is committed ' +
          'with its job and answered 202 at once; the service then sends the cancellation event (e101101) to the ' +
          'government. Poll `pollUrl`: on success the status becomes `cancelled` with `cancelledAt`, ' +
          '`cancellation.status = done`, the cancellation XML (GET /invoices/{id}/xml?type=cancel) and a re-rendered ' +
          'PDF with the CANCELADA watermark (under a new pdfUrl); the event nfse.cancelled (with cancelXmlUrl) is ' +
          'sent, and no further nfse.documents_ready (at most two per invoice). When the government refuses, the invoice stays `issued` and the refusal is shown ' +
          'in its status as `cancellation: {status: "rejected", errorCode, errorMessage}` (the government code, e.g. ' +
          'E0840); there is no webhook event for a refused cancellation (spec 6 has none), and the cancellation may ' +
          'be requested again. `motivo` (optional, at most 255 characters) becomes xMotivo; a missing or short ' +
          'reason is completed with a default text (the schema needs 15 characters). ' +
          'Errors: 404 unknown invoice; 409 INVOICE_NOT_ISSUED (queued, processing or error), ' +
          '409 INVOICE_CANCELLATION_IN_PROGRESS, 409 INVOICE_ALREADY_CANCELLED.',
        body: documentedBody(
          Type.Object(
            {
              invoiceId: Type.String({ minLength: 1, description: 'The invoice to cancel' }),
              motivo: Type.Optional(
                Type.String({ maxLength: 255, description: 'Reason (free text, at most 255 characters)' }),
              ),
            },
            { additionalProperties: true },
          ),
          {
            name: 'CancelInvoiceRequest',
            description: 'The invoice to cancel and why',
            example: {
              invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
              motivo: 'Serviço faturado em duplicidade; será emitida nova nota com o valor correto',
            },
          },
        ),
        response: {
          202: documented(CancellationAccepted, {
            name: 'CancellationAccepted',
            description: 'The cancellation is accepted and being sent to the government; poll pollUrl',
            example: {
              invoiceId: 'ec96b9b1-e89f-46f6-8351-644687a97c27',
              status: 'cancelling',
              cancellation: { status: 'requested', requestedAt: '2026-11-27T11:05:42.318Z' },
              pollUrl: '/api/v1/invoices/ec96b9b1-e89f-46f6-8351-644687a97c27/status',
            },
          }),
          ...errorResponses(400, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const principal = projectPrincipal(request);
      const { invoiceId } = request.body;
      if (!isUuid(invoiceId)) throw notFound('invoice');
      const motivo = request.body.motivo?.trim() || null;
      const now = new Date();
      const result = await requestCancellation(ctx, { projectId: principal.projectId, invoiceId, motivo, now });
      if (!result.ok) {
        switch (result.reason) {
          case 'not-found':
            throw notFound('invoice');
          case 'already-cancelled':
            throw new ApiError('INVOICE_ALREADY_CANCELLED', 'The invoice is already cancelled');
          case 'in-progress':
            throw new ApiError(
              'INVOICE_CANCELLATION_IN_PROGRESS',
              'A cancellation of this invoice was already requested and is being processed',
            );
          default:
            throw new ApiError(
              'INVOICE_NOT_ISSUED',
              `The invoice is ${result.status}; only issued invoices can be cancelled`,
            );
        }
      }
      return reply.status(202).send({
        invoiceId,
        status: 'cancelling' as const,
        cancellation: { status: 'requested' as const, requestedAt: now.toISOString() },
        pollUrl: pollUrl(invoiceId),
      });
    },
  );
};
