import { Type } from 'typebox';
import { invoicePath, invoiceStatusPath } from '../api-paths.ts';
import type { AppContext } from '../context.ts';
import type { InvoiceStatusRow } from '../db/repositories/invoices.ts';
import { WarningListSchema } from '../domain/warnings.ts';

export const InvoiceStatusSchema = Type.Object(
  {
    invoiceId: Type.String(),
    status: Type.Union(
      ['queued', 'processing', 'issued', 'error', 'cancelled'].map((s) => Type.Literal(s)),
      {
        description: 'queued → processing → issued | error; issued → cancelled',
      },
    ),
    referencia: Type.Union([Type.String(), Type.Null()], { description: "The caller's external identifier" }),
    batchId: Type.Union([Type.String(), Type.Null()]),
    engine: Type.String({ description: 'Engine family that serves the project (national: Sefin Nacional)' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    serie: Type.Union([Type.String(), Type.Null()], { description: 'DPS series' }),
    numeroDps: Type.Union([Type.Integer(), Type.Null()], { description: 'DPS number taken from the numbering' }),
    chNFSe: Type.Optional(Type.String({ description: 'Access key (issued and cancelled)' })),
    numeroNfse: Type.Optional(Type.String()),
    nNFSe: Type.Optional(Type.String({ description: 'Alias of numeroNfse' })),
    emittedAt: Type.Optional(Type.String({ format: 'date-time' })),
    issuedAt: Type.Optional(Type.String({ format: 'date-time', description: 'Alias of emittedAt' })),
    ambiente: Type.Optional(Type.Union([Type.Literal('producao'), Type.Literal('homologacao')])),
    documentsCached: Type.Boolean(),
    codigoVerificacao: Type.Optional(
      Type.String({
        description: 'Municipal engines: the verification code of the note (issued); absent for national notes',
      }),
    ),
    protocolo: Type.Optional(
      Type.String({
        description:
          'Asynchronous municipal engines: the protocol under which the government holds the submission ' +
          '(shown from the moment it is known; the note is polled, never sent again)',
      }),
    ),
    documentStatus: Type.Union(
      [Type.Literal('partial'), Type.Literal('complete'), Type.Literal('failed'), Type.Null()],
      {
        description:
          'partial: XML stored; complete: XML and PDF stored; failed: the documents job ran out of attempts ' +
          '(documentsErrorCode says why; GET /xml and /pdf still answer, rendered on the fly)',
      },
    ),
    documentsErrorCode: Type.Optional(Type.String({ description: 'Why the documents could not be stored' })),
    pdfUrl: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    xmlUrl: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    errorCode: Type.Optional(Type.String()),
    errorMessage: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          Codigo: Type.String(),
          Descricao: Type.String(),
          Complemento: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        }),
      ),
    ),
    cancelledAt: Type.Optional(Type.String({ format: 'date-time' })),
    cancelXmlUrl: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    cancellation: Type.Optional(
      Type.Object(
        {
          status: Type.Union(
            [Type.Literal('requested'), Type.Literal('rejected'), Type.Literal('failed'), Type.Literal('done')],
            {
              description:
                'requested → done | rejected (the government refused) | failed (internal failure after the retries ' +
                'ran out: INTERNAL_PROCESSING_FAILED); rejected and failed may be requested again',
            },
          ),
          requestedAt: Type.Union([Type.String(), Type.Null()]),
          motivo: Type.Union([Type.String(), Type.Null()]),
          errorCode: Type.Union([Type.String(), Type.Null()]),
          errorMessage: Type.Union([Type.String(), Type.Null()]),
        },
        { description: 'Present once a cancellation was requested; a refusal leaves the invoice issued' },
      ),
    ),
    warnings: WarningListSchema,
    links: Type.Object({
      self: Type.String(),
      xml: Type.String(),
      pdf: Type.String(),
    }),
  },
  { description: 'Invoice status (spec 2.8)' },
);

/** The public URL of a stored document, on the white-label host when the organization has one. */
export function documentUrl(ctx: AppContext, key: string | null, storageBaseUrl: string | null): string | null {
  if (!key) return null;
  return ctx.storage.publicUrl(key, storageBaseUrl);
}

export function invoiceStatusView(ctx: AppContext, row: InvoiceStatusRow, storageBaseUrl: string | null) {
  const issued = row.status === 'issued' || row.status === 'cancelled';
  const base = invoicePath(row.id);
  const view: Record<string, unknown> = {
    invoiceId: row.id,
    status: row.status,
    referencia: row.referencia,
    batchId: row.batchId,
    engine: row.engine,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    serie: row.serie,
    numeroDps: row.declarationNumber,
    documentsCached: row.documentsCached,
    warnings: row.warnings ?? [],
    documentStatus: (row.documentsStatus as 'partial' | 'complete' | 'failed' | null) ?? null,
    links: { self: invoiceStatusPath(row.id), xml: `${base}/xml`, pdf: `${base}/pdf` },
  };
  if (row.protocol) view.protocolo = row.protocol;
  if (issued) {
    if (row.accessKey) view.chNFSe = row.accessKey;
    if (row.verificationCode) view.codigoVerificacao = row.verificationCode;
    view.numeroNfse = row.numeroNfse;
    view.nNFSe = row.numeroNfse;
    view.emittedAt = row.emittedAt?.toISOString();
    view.issuedAt = row.emittedAt?.toISOString();
    view.ambiente = row.ambiente === 1 ? 'producao' : 'homologacao';
  }
  if (row.xmlKey || row.pdfKey) {
    view.xmlUrl = documentUrl(ctx, row.xmlKey, storageBaseUrl);
    view.pdfUrl = documentUrl(ctx, row.pdfKey, storageBaseUrl);
  }
  if (row.documentsStatus === 'failed' && row.documentsErrorCode) view.documentsErrorCode = row.documentsErrorCode;
  if (row.status === 'error') {
    view.errorCode = row.errorCode ?? 'UNKNOWN';
    view.errorMessage = row.errorMessage ?? '';
    view.errors = row.errors ?? [];
  }
  if (row.status === 'cancelled') {
    view.cancelledAt = row.cancelledAt?.toISOString();
    view.cancelXmlUrl = documentUrl(ctx, row.cancelXmlKey, storageBaseUrl);
  }
  if (row.cancellationStatus) {
    view.cancellation = {
      status: row.cancellationStatus,
      requestedAt: row.cancelRequestedAt?.toISOString() ?? null,
      motivo: row.cancelMotivo,
      errorCode: row.cancelErrorCode,
      errorMessage: row.cancelErrorMessage,
    };
  }
  return view;
}
