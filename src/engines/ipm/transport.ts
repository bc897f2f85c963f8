import { createHash } from 'node:crypto';
import { MissingCredentialError } from '../kit/auth.ts';
import type { OperationRequest, SendContext } from '../kit/family.ts';
import { municipalityRegistry } from '../routing/municipality-registry.ts';
import { tomOf } from './layout.ts';

/**
 * IPM's transport: one `POST multipart/form-data` per message, in the two idioms of the registry's IPM cities
 * (briefs/providers-own.md §2.1–2.2):
 *
 * - 1.01 (Atende.Net REST, `…?pg=rest&service=WNERestServiceNFSe`): one XML file part named `arquivo` and
 *   `Authorization: Basic base64(CPF/CNPJ:senha)` (ACBr `TACBrNFSeXWebserviceIPM101`, `Multi2` + `SetHeaders`);
 * - 1.00 (legacy `sync.nfs-e.net/…/nfw_import_upload.php`): no Basic header; the form carries `login`, `senha`,
 *   `cidade` (the TOM code; IPM manual §5) and the XML file as `f1` (ACBr `TACBrNFSeXWebserviceMulti1`), and the URL
 *   asks for an XML answer with `?eletron=1` (emission, cancellation) or `?formato_saida=2` (consultations), only
 *   when it is not a `?pg=rest` URL (ACBr `GerarMsgDadosEmitir`, `PrepararConsultaNFSeporRps`, `CriarServiceClient`).
 *
 * The version is the registry's layout version of the project's municipality (route `version`).
 */

export const LEGACY_VERSION = '1.00';

/** The registry's IPM layout version of a municipality (1.00 / 1.01), or null when it is not an IPM city. */
export function ipmVersionOf(municipality: string | null | undefined): string | null {
  if (!municipality) return null;
  const route = municipalityRegistry().find(municipality);
  return route?.family === 'ipm' ? (route.version ?? null) : null;
}

export const isLegacy = (municipality: string | null | undefined) => ipmVersionOf(municipality) === LEGACY_VERSION;

/** What the message is: a send (emission, cancellation: `eletron=1`) or a consultation (`formato_saida=2`). */
export type Purpose = 'send' | 'query';

function field(boundary: string, name: string, value: string): string {
  return `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
}

/** One multipart/form-data request with the XML as its single file part (ASCII, so a string body is exact). */
export function multipart(context: SendContext, xml: string, fileName: string, purpose: Purpose): OperationRequest {
  const boundary = `----ipm${createHash('sha1').update(xml).digest('hex').slice(0, 24)}`;
  const safeName = fileName.replace(/[^\w.-]/g, '_');
  const base = context.endpoints.url('emit', context.ambiente, context.municipality);
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/xml' };
  if (!isLegacy(context.municipality)) {
    const body =
      `--${boundary}\r\n` +
      `Content-Disposition: form-data; name="arquivo"; filename="${safeName}"\r\n` +
      'Content-Type: text/xml; charset=ISO-8859-1\r\n\r\n' +
      `${xml}\r\n--${boundary}--\r\n`;
    return { method: 'POST', url: base, headers, body };
  }
  const login = context.credentials?.basicAuthUsuario;
  const senha = context.credentials?.basicAuthSenha;
  if (!login) throw new MissingCredentialError('basicAuthUsuario');
  if (!senha) throw new MissingCredentialError('basicAuthSenha');
  const body =
    field(boundary, 'login', login) +
    field(boundary, 'senha', senha) +
    field(boundary, 'cidade', tomOf(context.municipality) ?? '') +
    `--${boundary}\r\nContent-Disposition: form-data; name="f1"; filename="${safeName}"\r\n` +
    'Content-Type: text/xml\r\n\r\n' +
    `${xml}\r\n--${boundary}--\r\n`;
  const parameter = purpose === 'query' ? 'formato_saida=2' : 'eletron=1';
  const url = base.includes('?pg=rest') ? base : `${base}${base.includes('?') ? '&' : '?'}${parameter}`;
  // the credentials travel in the form: no Authorization header (`anonymous` skips the family's Basic auth)
  return { method: 'POST', url, headers, body, anonymous: true };
}
