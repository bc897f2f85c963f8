import { Type } from 'typebox';
import { findProjectInvoice, storageBaseUrlOf } from '../../../db/repositories/invoices.ts';
import { loadProjectRow } from '../../../db/repositories/project-profile.ts';
import { hasCurrentPdf, renderInvoicePdf } from '../../../documents/invoice-documents.ts';
import { pdfSourceOf } from '../../../documents/pdf-source.ts';
import { describeFailure } from '../../../engines/types.ts';
import { documentUrl } from '../../../invoices/views.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError, notFound } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams } from '../../schemas.ts';

export const getInvoicePdfRoute: RouteModule = (app, ctx) => {
  app.get(
    '/invoices/:id/pdf',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['documents'],
        summary: 'The DANFSe (PDF) of an issued or cancelled invoice',
        description:
          'When the documents are cached (documentsCached): 302 to the public URL (immutable, no authentication). ' +
          'Otherwise the national environment PDF is rendered on the fly from the stored NFS-e XML (DANFSe v2.0) ' +
          'and returned as 200 application/pdf; a cancelled invoice carries the CANCELADA watermark. ' +
          "Municipal engines that download their provider's PDF (IPM) answer it as 200 application/pdf too; " +
          'São Paulo redirects (302) to its portal; an ABRASF or own-layout note redirects (302) to the consultation ' +
          'page its municipality publishes, and where none is published it is rendered here as a DANFSe-like PDF ' +
          'from the municipal NFS-e XML. ' +
          'Errors: 404 unknown invoice (or of another project); 409 INVOICE_NOT_ISSUED while queued, processing or in ' +
          'error; 422 PDF_UNAVAILABLE when the PDF cannot be produced for lack of data; 501 PDF_NOT_SUPPORTED and ' +
          '502 PORTAL_ERROR are reserved for municipal engines without PDF download or with a failing portal.',
        params: IdParams,
        response: {
          200: {
            description: 'The DANFSe rendered on the fly (or downloaded from the municipal portal)',
            content: {
              'application/pdf': {
                schema: { type: 'string', format: 'binary', title: 'InvoicePdf', description: 'A PDF document' },
              },
            },
          },
          302: Type.Null({
            description:
              "The documents are stored, or the municipality publishes the note: redirect (Location) to the document's URL",
            headers: {
              location: { type: 'string', format: 'uri', description: 'The URL of the document' },
            },
          }),
          ...errorResponses(404, 409, 422, 501, 502),
        },
      },
    },
    async (request, reply) => {
      const principal = projectPrincipal(request);
      const row = await findProjectInvoice(ctx.db, principal.projectId, request.params.id);
      if (!row) throw notFound('invoice');
      if (row.status !== 'issued' && row.status !== 'cancelled') {
        throw new ApiError('INVOICE_NOT_ISSUED', `The invoice is ${row.status}; its PDF exists once it is issued`);
      }
      const engine = ctx.engines.get(row.engine);
      const project = await loadProjectRow(ctx.db, row.projectId);
      const source = pdfSourceOf(engine, row, project ?? null);
      if (source.kind === 'none') throw new ApiError('PDF_NOT_SUPPORTED');
      if (source.kind === 'portal') return reply.redirect(source.url, 302);
      if (source.kind === 'engine') {
        if (engine.fetchPdf) {
          // spec 4.4: a municipal engine that can download its provider's PDF answers it inline (never a 500)
          const fetched = await engine.fetchPdf(
            {
              chave: row.accessKey,
              numero: row.numeroNfse,
              verificationCode: row.verificationCode,
              ambiente: row.ambiente === 1 ? 1 : 2,
            },
            {
              ambiente: row.ambiente === 1 ? 1 : 2,
              municipality: project?.codigoMunicipio ?? null,
              endpointOverride: project?.endpointOverride ?? null,
            },
          );
          if (fetched.kind !== 'ok') {
            throw new ApiError('PORTAL_ERROR', `The provider's PDF could not be obtained: ${describeFailure(fetched)}`);
          }
          return reply
            .type('application/pdf')
            .header('content-disposition', `inline; filename="nfse-${row.numeroNfse ?? row.id}.pdf"`)
            .header('cache-control', 'private, no-store')
            .send(fetched.value as never);
        }
        const link = engine.pdfLink({
          chave: row.accessKey,
          numero: row.numeroNfse,
          verificationCode: row.verificationCode,
          ambiente: row.ambiente === 1 ? 1 : 2,
          providerCnpj: project?.cnpj ?? '',
          inscricaoMunicipal: project?.inscricaoMunicipal ?? null,
        });
        if (!link) throw new ApiError('PORTAL_ERROR', 'The provider gives no public link for this note');
        return reply.redirect(link, 302);
      }
      if (row.documentsCached && hasCurrentPdf(row)) {
        const url = documentUrl(ctx, row.pdfKey, await storageBaseUrlOf(ctx.db, principal.orgId));
        if (url) return reply.redirect(url, 302);
      }
      const rendered = await renderInvoicePdf(ctx, row);
      if (!rendered.ok) {
        throw new ApiError('PDF_UNAVAILABLE', `The DANFSe cannot be produced: ${rendered.message}`, [], {
          reason: rendered.code,
        });
      }
      const name = `${row.accessKey ?? row.id}${row.status === 'cancelled' ? '-cancelada' : ''}.pdf`;
      return reply
        .type('application/pdf')
        .header('content-disposition', `inline; filename="${name}"`)
        .header('cache-control', 'private, no-store')
        .send(rendered.pdf as never);
    },
  );
};
