import type { AppContext } from '../../context.ts';
import { API_PREFIX } from '../route.ts';
import type { App, RouteModule } from '../route.ts';
import { changePlanRoute } from './admin/change-plan.ts';
import { createOrgTokenRoute } from './admin/create-org-token.ts';
import { createOrganizationRoute } from './admin/create-organization.ts';
import { revokeOrgTokenRoute } from './admin/revoke-org-token.ts';
import { cancelInvoiceRoute } from './invoices/cancel-invoice.ts';
import { getBatchStatusRoute } from './invoices/get-batch-status.ts';
import { getInvoicePdfRoute } from './invoices/get-invoice-pdf.ts';
import { getInvoiceStatusRoute } from './invoices/get-invoice-status.ts';
import { getInvoiceXmlRoute } from './invoices/get-invoice-xml.ts';
import { issueBatchRoute } from './invoices/issue-batch.ts';
import { issueInvoiceRoute } from './invoices/issue-invoice.ts';
import { createApiKeyRoute } from './org/create-api-key.ts';
import { createProjectRoute } from './org/create-project.ts';
import { deleteLogoRoute } from './org/delete-logo.ts';
import { deleteProjectRoute } from './org/delete-project.ts';
import { getNumberingRoute } from './org/get-numbering.ts';
import { getProjectRoute } from './org/get-project.ts';
import { getSettingsRoute } from './org/get-settings.ts';
import { listApiKeysRoute } from './org/list-api-keys.ts';
import { listProjectsRoute } from './org/list-projects.ts';
import { revokeApiKeyRoute } from './org/revoke-api-key.ts';
import { updateNumberingRoute } from './org/update-numbering.ts';
import { updateProjectRoute } from './org/update-project.ts';
import { updateSettingsRoute } from './org/update-settings.ts';
import { uploadCertificateRoute } from './org/upload-certificate.ts';
import { uploadLogoRoute } from './org/upload-logo.ts';
import { servePublicFile } from './system/files.ts';
import { health } from './system/health.ts';
import { openapiDocument } from './system/openapi.ts';
import { createWebhookEndpointRoute } from './webhooks/create-endpoint.ts';
import { deleteWebhookEndpointRoute } from './webhooks/delete-endpoint.ts';
import { getWebhookDeliveryRoute } from './webhooks/get-delivery.ts';
import { getWebhookEndpointRoute } from './webhooks/get-endpoint.ts';
import { listWebhookDeliveriesRoute } from './webhooks/list-deliveries.ts';
import { listWebhookEndpointsRoute } from './webhooks/list-endpoints.ts';
import { retryWebhookDeliveryRoute } from './webhooks/retry-delivery.ts';
import { testWebhookEndpointRoute } from './webhooks/test-endpoint.ts';
import { updateWebhookEndpointRoute } from './webhooks/update-endpoint.ts';

/** Every API operation, one file each, registered under /api/v1. */
export const API_ROUTES: RouteModule[] = [
  health,
  openapiDocument,
  createOrganizationRoute,
  createOrgTokenRoute,
  revokeOrgTokenRoute,
  changePlanRoute,
  // organization interface (spec 4.1)
  createProjectRoute,
  listProjectsRoute,
  getProjectRoute,
  updateProjectRoute,
  deleteProjectRoute,
  getNumberingRoute,
  updateNumberingRoute,
  createApiKeyRoute,
  listApiKeysRoute,
  revokeApiKeyRoute,
  uploadCertificateRoute,
  uploadLogoRoute,
  deleteLogoRoute,
  getSettingsRoute,
  updateSettingsRoute,
  // webhooks (spec 4.5)
  createWebhookEndpointRoute,
  listWebhookEndpointsRoute,
  getWebhookEndpointRoute,
  updateWebhookEndpointRoute,
  deleteWebhookEndpointRoute,
  testWebhookEndpointRoute,
  listWebhookDeliveriesRoute,
  getWebhookDeliveryRoute,
  retryWebhookDeliveryRoute,
  issueInvoiceRoute,
  getInvoiceStatusRoute,
  getInvoiceXmlRoute,
  // documents, cancellation and batches (spec 4.2 to 4.4)
  getInvoicePdfRoute,
  cancelInvoiceRoute,
  issueBatchRoute,
  getBatchStatusRoute,
];

/** Routes outside the versioned API (public document files). */
export const ROOT_ROUTES: RouteModule[] = [servePublicFile];

export function registerRoutes(app: App, ctx: AppContext) {
  app.register(
    async (scoped) => {
      for (const route of API_ROUTES) route(scoped as App, ctx);
    },
    { prefix: API_PREFIX },
  );
  for (const route of ROOT_ROUTES) route(app, ctx);
}
