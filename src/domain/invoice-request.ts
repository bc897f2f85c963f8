/**
 * The invoice request rules (spec 2.7), one entry point for the rest of the code. The rules live in
 * `domain/invoice/`: request-schema (the body, TypeBox / OpenAPI), normalized (the model engines build from),
 * parties, service-groups, iss, federal, ibscbs, and check (the orchestration, checkInvoiceRequest).
 */
export { type CheckInvoiceOptions, checkInvoiceRequest } from './invoice/check.ts';
export { monthInBrasilia, roundMoney } from './invoice/common.ts';
export * from './invoice/normalized.ts';
export { type InvoiceRequest, InvoiceRequestSchema } from './invoice/request-schema.ts';
