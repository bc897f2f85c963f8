import type { SandboxRequest } from '../kit/server.ts';

/**
 * IPM's legacy 1.00 transport (`sync.nfs-e.net/datacenter/include/nfw/importa_nfw/nfw_import_upload.php`;
 * briefs/providers-own.md §2.1–2.2; IPM manual §5; ACBr `TACBrNFSeXWebserviceMulti1`): no Basic header, the form
 * carries `login` (CPF/CNPJ), `senha`, `cidade` (the TOM code) and the XML file as `f1` (`text/xml`); the answer is
 * XML only when the URL asks for it (`?eletron=1` for emission and cancellation, `?formato_saida=2` for
 * consultations), an HTML page otherwise.
 */

export interface FormPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  value: string;
}

/** Every part of a multipart/form-data body (latin1, byte for byte), or why it is not one. */
export function formParts(req: SandboxRequest): { ok: true; parts: FormPart[] } | { ok: false; reason: string } {
  const type = String(req.headers['content-type'] ?? '');
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!boundary) return { ok: false, reason: 'envie multipart/form-data' };
  const chunks = req.body.toString('latin1').split(`--${boundary}`).slice(1, -1);
  const parts = chunks.map((chunk) => {
    const headerEnd = chunk.indexOf('\r\n\r\n');
    const head = chunk.slice(0, headerEnd);
    return {
      name: /name="([^"]*)"/i.exec(head)?.[1] ?? '',
      filename: /filename="([^"]*)"/i.exec(head)?.[1] ?? null,
      contentType: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim() ?? null,
      value: chunk.slice(headerEnd + 4).replace(/\r\n$/, ''),
    };
  });
  return { ok: true, parts };
}

/** A legacy request: sent without an Authorization header, with the `login` form field. */
export const isLegacyRequest = (req: SandboxRequest, parts: FormPart[]) =>
  req.headers.authorization === undefined && parts.some((p) => p.name === 'login' && p.filename === null);

export type LegacyForm =
  | { ok: true; user: string; password: string; cidade: string; xml: string; xmlAnswer: boolean }
  | { ok: false; status: number; message: string };

/** The legacy form's fields, checked: the first broken rule, or the credentials, city and XML it carries. */
export function legacyForm(req: SandboxRequest, parts: FormPart[]): LegacyForm {
  const value = (name: string) => parts.find((p) => p.name === name && p.filename === null)?.value.trim() ?? '';
  const user = value('login');
  const password = value('senha');
  if (!/^(\d{11}|\d{14})$/.test(user) || !password) {
    return { ok: false, status: 401, message: '00131 - Usuário ou senha inválidos (campos login e senha)' };
  }
  const cidade = value('cidade');
  if (!/^\d{4}$/.test(cidade)) return { ok: false, status: 200, message: '00007 - Campo cidade deve ser o código TOM' };
  const files = parts.filter((p) => p.filename !== null);
  if (files.length !== 1 || files[0].name !== 'f1') {
    return { ok: false, status: 400, message: '00900 - envie exatamente um arquivo XML no campo f1' };
  }
  if (!/^text\/xml/i.test(files[0].contentType ?? '')) {
    return { ok: false, status: 400, message: '00900 - arquivo não é text/xml' };
  }
  const xmlAnswer = req.query.get('eletron') === '1' || req.query.get('formato_saida') === '2';
  return { ok: true, user, password, cidade, xml: files[0].value, xmlAnswer };
}

/** What the legacy server answers when the URL does not ask for XML: an HTML page. */
export const htmlPage = (text: string) => ({
  status: 200,
  body: `<html><body><p>${text.replace(/[<>&]/g, '')}</p></body></html>`,
  headers: { 'content-type': 'text/html; charset=ISO-8859-1' },
});
