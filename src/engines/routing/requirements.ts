import type { Credential, ProjectField } from './families.ts';
import type { MunicipalityRoute } from './municipality-registry.ts';

/**
 * Spec 4.8: what a municipal engine needs from the project (project fields such as the municipal registration,
 * CNAE or São Paulo's service code, and credentials such as Basic Auth or a provider token) belongs to the project
 * and is checked before an invoice is accepted, so a note that cannot be sent is a 400 naming the project field,
 * not an error after a credit and a number were spent.
 */
export interface ProjectRequirementsInput {
  /** the project's values of the fields engines may require (null when absent) */
  fields: Record<ProjectField, string | null>;
  /** the credentials the project holds (`certificate` is gated separately, with 422) */
  credentials: ReadonlySet<Credential>;
}

/** Where each credential is kept on the project (spec 2.1), for the field path of the refusal. */
const CREDENTIAL_FIELDS: Record<Credential, string> = {
  certificate: 'project.certificate',
  basicAuthUsuario: 'project.basicAuthUsuario',
  basicAuthSenha: 'project.basicAuthSenha',
  accessToken: 'project.cscToken',
  authorizationKey: 'project.cscToken',
  municipalUser: 'project.basicAuthUsuario',
  municipalPassword: 'project.basicAuthSenha',
  cnpjPrefeitura: 'project.cnpjPrefeitura',
};

export function unmetProjectRequirements(
  route: MunicipalityRoute | null,
  project: ProjectRequirementsInput,
): { field: string; message: string }[] {
  const parameters = route?.parameters;
  if (!parameters) return [];
  const place = `${route.name}/${route.uf} (${parameters.provider})`;
  const unmet: { field: string; message: string }[] = [];
  for (const field of parameters.projectFields) {
    if (!project.fields[field]) {
      unmet.push({ field: `project.${field}`, message: `required by the engine of ${place}: set it on the project` });
    }
  }
  const seen = new Set<string>();
  for (const credential of parameters.credentials) {
    if (credential === 'certificate' || project.credentials.has(credential)) continue;
    const field = CREDENTIAL_FIELDS[credential];
    if (seen.has(field)) continue;
    seen.add(field);
    unmet.push({ field, message: `${credential} is required by the engine of ${place}: set it on the project` });
  }
  return unmet;
}
