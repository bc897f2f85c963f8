import type { AppContext } from '../../context.ts';
import { API_PREFIX } from '../route.ts';
import type { App, RouteModule } from '../route.ts';
import { changePlanRoute } from './admin/change-plan.ts';
import { createOrgTokenRoute } from './admin/create-org-token.ts';
import { createOrganizationRoute } from './admin/create-organization.ts';
import { revokeOrgTokenRoute } from './admin/revoke-org-token.ts';
import { getInvoiceStatusRoute } from './invoices/get-invoice-status.ts';
import { getInvoiceXmlRoute } from './invoices/get-invoice-xml.ts';
import { issueInvoiceRoute } from './invoices/issue-invoice.ts';
import { servePublicFile } from './system/files.ts';
import { health } from './system/health.ts';
import { openapiDocument } from './system/openapi.ts';

/** Every API operation, one file each, registered under /api/v1. */
export const API_ROUTES: RouteModule[] = [
  health,
  openapiDocument,
  createOrganizationRoute,
  createOrgTokenRoute,
  revokeOrgTokenRoute,
  changePlanRoute,
  issueInvoiceRoute,
  getInvoiceStatusRoute,
  getInvoiceXmlRoute,
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
