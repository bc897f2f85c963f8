import type { RouteModule } from '../../route.ts';
import { dashboardCreateOrgTokenRoute } from './create-org-token.ts';
import { dashboardForwardApiRoute } from './forward-api.ts';
import { dashboardGetCertificateRoute } from './get-certificate.ts';
import { dashboardGetSessionRoute } from './get-session.ts';
import { dashboardListInvoicesRoute } from './list-invoices.ts';
import { dashboardListOrgTokensRoute } from './list-org-tokens.ts';
import { dashboardPreviewDanfseRoute } from './preview-danfse.ts';
import { dashboardRevokeOrgTokenRoute } from './revoke-org-token.ts';
import { dashboardServeAppRoute } from './serve-app.ts';
import { dashboardSignInRoute } from './sign-in.ts';
import { dashboardSignOutRoute } from './sign-out.ts';

/** The dashboard (`/dashboard`): its sign-in, its bridge to the JSON API and the front-end, one file each. */
export const DASHBOARD_ROUTES: RouteModule[] = [
  dashboardSignInRoute,
  dashboardGetSessionRoute,
  dashboardSignOutRoute,
  dashboardListInvoicesRoute,
  dashboardGetCertificateRoute,
  dashboardPreviewDanfseRoute,
  dashboardListOrgTokensRoute,
  dashboardCreateOrgTokenRoute,
  dashboardRevokeOrgTokenRoute,
  dashboardForwardApiRoute,
  dashboardServeAppRoute,
];
