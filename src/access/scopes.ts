/**
 * The scopes an organization token (`svc_org_…`) or a project key (`svc_…`) may hold: checked by the HTTP edge
 * (`http/auth.ts`), stored with the token or key by the repositories (`db/repositories/`).
 */
export const ORG_SCOPES = [
  'projects:read',
  'projects:write',
  'api_keys:manage',
  'settings:read',
  'settings:write',
  'certificates:write',
] as const;
export type OrgScope = (typeof ORG_SCOPES)[number];

export const PROJECT_SCOPES = ['emit', 'cancel', 'query'] as const;
export type ProjectScope = (typeof PROJECT_SCOPES)[number];
