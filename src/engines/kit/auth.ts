import type { A1Certificate } from '../../certificates/pkcs12.ts';
import type { AuthKind } from '../routing/families.ts';
import type { OperationRequest } from './family.ts';

/**
 * The credentials a project holds for an engine (spec 4.8.1: stored with the project, sealed at rest, opened only
 * by the job that sends). Which ones a family needs is declared in its registry entry (`credentials`).
 */
export interface ProjectCredentials {
  basicAuthUsuario?: string | null;
  basicAuthSenha?: string | null;
  accessToken?: string | null;
  authorizationKey?: string | null;
  municipalUser?: string | null;
  municipalPassword?: string | null;
  /**
   * The city hall's CNPJ (a municipal parameter, public and unsealed, checked with its check digits): Agili writes it
   * into every message as `UnidadeGestora`. Kept with the credentials because every operation needs it.
   */
  cnpjPrefeitura?: string | null;
}

/** How the request goes out once its auth is applied: the TLS client certificate (or none) and its headers. */
export interface AuthorizedRequest extends OperationRequest {
  certificate: A1Certificate | null;
}

export class MissingCredentialError extends Error {
  constructor(readonly credential: keyof ProjectCredentials) {
    super(`the project has no ${credential} for this engine`);
  }
}

function required(credentials: ProjectCredentials, name: keyof ProjectCredentials): string {
  const value = credentials[name];
  if (!value) throw new MissingCredentialError(name);
  return value;
}

/**
 * Applies a family's auth kind to an operation's request. `body-credentials` and `signature` change nothing here:
 * the builder writes the credentials into the message, and the signature is the message's own. `header-token`
 * sends the project's authorization key in `headerName` (default `Authorization`, as the providers that use it do).
 * `presentCertificate`: Basic, Bearer, header-token and body-credentials requests also present the TLS client
 * certificate (Centi: user and password in the JSON body over mutual TLS).
 */
export function authorize(
  request: OperationRequest,
  auth: AuthKind,
  certificate: A1Certificate,
  credentials: ProjectCredentials,
  options: { headerName?: string; presentCertificate?: boolean } = {},
): AuthorizedRequest {
  const headers = { ...request.headers };
  // providers that take an HTTP credential and the TLS client certificate too (ABase: Bearer + mTLS)
  const tls = options.presentCertificate ? certificate : null;
  switch (auth) {
    case 'mtls':
      return { ...request, headers, certificate };
    case 'basic': {
      const user = required(credentials, 'basicAuthUsuario');
      const password = required(credentials, 'basicAuthSenha');
      headers.authorization = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
      return { ...request, headers, certificate: tls };
    }
    case 'bearer':
      headers.authorization = `Bearer ${required(credentials, 'accessToken')}`;
      return { ...request, headers, certificate: tls };
    case 'header-token':
      headers[(options.headerName ?? 'authorization').toLowerCase()] = required(credentials, 'authorizationKey');
      return { ...request, headers, certificate: tls };
    case 'body-credentials':
      return { ...request, headers, certificate: tls };
    case 'signature':
      return { ...request, headers, certificate: null };
  }
}
