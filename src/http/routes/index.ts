import type { RouteOptions } from 'fastify';
import type { AppContext } from '../../context.ts';
import { isAuthHook } from '../auth.ts';
import { API_PREFIX } from '../../api-paths.ts';
import type { App, RouteModule } from '../route.ts';
import { changePlanRoute } from './admin/change-plan.ts';
import { updateOrgLimitsRoute } from './admin/update-org-limits.ts';
import { createOrgTokenRoute } from './admin/create-org-token.ts';
import { createMemberRoute } from './admin/create-member.ts';
import { createOrganizationRoute } from './admin/create-organization.ts';
import { listOrganizationsRoute } from './admin/list-organizations.ts';
import { revokeOrgTokenRoute } from './admin/revoke-org-token.ts';
import { cancelInvoiceRoute } from './invoices/cancel-invoice.ts';
import { getBatchStatusRoute } from './invoices/get-batch-status.ts';
import { getInvoicePdfRoute } from './invoices/get-invoice-pdf.ts';
import { getInvoiceStatusRoute } from './invoices/get-invoice-status.ts';
import { getInvoiceXmlRoute } from './invoices/get-invoice-xml.ts';
import { issueBatchRoute } from './invoices/issue-batch.ts';
import { issueInvoiceRoute } from './invoices/issue-invoice.ts';
import { searchCitiesRoute } from './lookup/search-cities.ts';
import { listCodesRoute } from './lookup/list-codes.ts';
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
import { DASHBOARD_ROUTES } from './dashboard/routes.ts';
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
  listOrganizationsRoute,
  createOrgTokenRoute,
  revokeOrgTokenRoute,
  createMemberRoute,
  changePlanRoute,
  updateOrgLimitsRoute,
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
  // lookups (spec 4.6)
  searchCitiesRoute,
  listCodesRoute,
];

/** Routes outside the versioned API (public document files, the dashboard: ./dashboard/routes.ts). */
export const ROOT_ROUTES: RouteModule[] = [servePublicFile, ...DASHBOARD_ROUTES];

/**
 * Every API route authenticates in `onRequest`, before its body is read and its schema validated, so a caller
 * without a valid key gets 401/403 and never a 400 describing the schema. A route is public only when it says
 * so in its OpenAPI security (`security: []`). Checked when the routes are registered: a route that breaks the
 * rule stops the start.
 */
export function assertAuthenticatesFirst(route: RouteOptions): void {
  const hooks = (value: unknown) => (Array.isArray(value) ? value : value ? [value] : []);
  const name = `${route.method} ${route.url}`;
  const isPublic = Array.isArray(route.schema?.security) && route.schema.security.length === 0;
  const authenticates = hooks(route.onRequest).some(isAuthHook);
  if (!isPublic && !authenticates) {
    throw new Error(
      `${name}: authenticate in onRequest (requireOrg/requireProject/requireAdmin) or declare security: []`,
    );
  }
  if (isPublic && authenticates) throw new Error(`${name}: a route with security: [] must not authenticate`);
  for (const late of ['preParsing', 'preValidation', 'preHandler'] as const) {
    if (hooks(route[late]).some(isAuthHook)) throw new Error(`${name}: authenticate in onRequest, not in ${late}`);
  }
}

/**
 * The OpenAPI `operationId` of a route: its module's name without the `Route` suffix (`createProjectRoute` in
 * org/create-project.ts → `createProject`), unless the route's schema names one. Stable as long as the module keeps
 * its name; unique, or the start stops.
 */
export function operationIdOf(module: RouteModule): string {
  return module.name.replace(/Route$/, '');
}

function nameOperations(): { naming(module: RouteModule): void; onRoute(route: RouteOptions): void } {
  let current: RouteModule | null = null;
  const taken = new Map<string, string>();
  return {
    naming(module) {
      current = module;
    },
    onRoute(route) {
      if (!current || route.method === 'HEAD') return; // HEAD twins of GET routes are not in the document
      const operationId = (route.schema as { operationId?: string } | undefined)?.operationId ?? operationIdOf(current);
      const name = `${route.method} ${route.url}`;
      const holder = taken.get(operationId);
      if (holder && holder !== name) throw new Error(`${name}: operationId "${operationId}" is already ${holder}'s`);
      taken.set(operationId, name);
      route.schema = { ...route.schema, operationId };
    },
  };
}

export function registerRoutes(app: App, ctx: AppContext) {
  app.register(
    async (scoped) => {
      scoped.addHook('onRoute', assertAuthenticatesFirst);
      const operations = nameOperations();
      scoped.addHook('onRoute', operations.onRoute);
      for (const route of API_ROUTES) {
        operations.naming(route);
        route(scoped as App, ctx);
      }
    },
    { prefix: API_PREFIX },
  );
  for (const route of ROOT_ROUTES) route(app, ctx);
}
