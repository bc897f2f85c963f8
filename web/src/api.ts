import { h } from './dom.ts';
import { t } from './i18n.ts';

/**
 * Calls of the dashboard back-end: `/dashboard/api/session` (sign-in) and `/dashboard/api/v1/*`, the JSON API
 * replayed with the session's credentials. The session cookie is HttpOnly; the CSRF token lives in memory only.
 */

export interface FieldError {
  field: string;
  message: string;
}

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors: FieldError[],
  ) {
    super(detail);
  }
}

export interface Session {
  email: string;
  organization: { id: string; name: string };
  expiresAt: string;
  csrfToken: string;
}

let csrfToken = '';
export const setSession = (session: Session | null) => {
  csrfToken = session?.csrfToken ?? '';
};

/** Fired when the server says the session is gone (401): the app goes back to the sign-in page. */
export const SIGNED_OUT = 'nfse:signed-out';

export async function call<T = unknown>(
  method: string,
  path: string,
  options: { body?: unknown; form?: FormData; project?: string } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (options.project) headers['x-dashboard-project'] = options.project;
  let body: BodyInit | undefined;
  if (options.form) body = options.form;
  else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const res = await fetch(`/dashboard/api${path}`, { method, headers, body, credentials: 'same-origin' });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) {
    if (res.status === 401 && json?.code === 'DASHBOARD_SESSION_REQUIRED') window.dispatchEvent(new Event(SIGNED_OUT));
    throw new ApiProblem(res.status, json?.code ?? 'ERROR', json?.detail ?? res.statusText, json?.errors ?? []);
  }
  return json as T;
}

/** Downloads a document of the API (XML, PDF) through the session, as a file named `fileName`. */
export async function download(path: string, project: string, fileName: string): Promise<void> {
  const res = await fetch(`/dashboard/api${path}`, { headers: { 'x-dashboard-project': project } });
  if (!res.ok) {
    const json = await res.json().catch(() => null);
    throw new ApiProblem(res.status, json?.code ?? 'ERROR', json?.detail ?? res.statusText, json?.errors ?? []);
  }
  const url = URL.createObjectURL(await res.blob());
  const a = h('a', { href: url, download: fileName, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Shows a refusal on its form: each field error under the input of that name (the API's own message), the rest
 * and the summary in the form's alert box.
 */
export function showProblem(form: HTMLElement, error: unknown): void {
  clearProblem(form);
  const problem =
    error instanceof ApiProblem
      ? error
      : new ApiProblem(0, 'ERROR', error instanceof Error ? error.message : String(error), []);
  const unplaced: FieldError[] = [];
  for (const e of problem.errors) {
    const input = form.querySelector<HTMLElement>(`[name="${CSS.escape(e.field)}"]`);
    if (!input) {
      unplaced.push(e);
      continue;
    }
    input.setAttribute('aria-invalid', 'true');
    input.insertAdjacentElement('afterend', h('small', { class: 'field-error' }, e.message));
  }
  const alert = form.querySelector('.form-alert') ?? form.appendChild(h('div', { class: 'form-alert' }));
  alert.replaceChildren(
    h('strong', {}, `${problem.code}: `),
    problem.message,
    ...(unplaced.length
      ? [
          h(
            'ul',
            {},
            unplaced.map((e) => h('li', {}, `${e.field}: ${e.message}`)),
          ),
        ]
      : []),
  );
  alert.setAttribute('role', 'alert');
}

export function clearProblem(form: HTMLElement): void {
  for (const el of Array.from(form.querySelectorAll('.field-error'))) el.remove();
  for (const el of Array.from(form.querySelectorAll('[aria-invalid]'))) el.removeAttribute('aria-invalid');
  const alert = form.querySelector('.form-alert');
  if (alert) {
    alert.replaceChildren();
    alert.removeAttribute('role');
  }
}

export function notice(text: string): HTMLElement {
  return h('div', { class: 'notice' }, text);
}

export const loading = () => h('p', { class: 'muted' }, t('loading'));
