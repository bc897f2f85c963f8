/**
 * The paths of the public API, shared by the HTTP edge that serves them (`http/routes/index.ts` mounts every route
 * under `API_PREFIX`) and the application services that link to them (the invoice status view, `pollUrl`).
 */
export const API_PREFIX = '/api/v1';

/** `/api/v1/invoices/{id}`: the invoice's resource; its status, XML and PDF are below it. */
export function invoicePath(invoiceId: string): string {
  return `${API_PREFIX}/invoices/${invoiceId}`;
}

/** The path a caller polls for an invoice's status (`pollUrl`, `links.self`). */
export function invoiceStatusPath(invoiceId: string): string {
  return `${invoicePath(invoiceId)}/status`;
}
