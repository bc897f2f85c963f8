import { call, SIGNED_OUT, type Session, setSession } from './api.ts';
import { h } from './dom.ts';
import { getLocale, setLocale, t } from './i18n.ts';
import { invoicePage } from './pages/invoice.ts';
import { orgTokensPage } from './pages/org-tokens.ts';
import { projectPage } from './pages/project.ts';
import { projectsPage } from './pages/projects.ts';
import { settingsPage } from './pages/settings.ts';
import { signInPage } from './pages/sign-in.ts';
import './style.css';

/** The dashboard: hash routes (#/projects, #/projects/{id}/{tab}, #/projects/{id}/invoices/{invoiceId}, #/tokens, #/settings). */

const root = document.getElementById('app')!;
let session: Session | null = null;

function header(current: Session): HTMLElement {
  const languages = h(
    'select',
    {
      'aria-label': t('language'),
      id: 'language',
      onchange: (e) => {
        setLocale((e.target as HTMLSelectElement).value);
        void render();
      },
    },
    h('option', { value: 'pt-BR', selected: getLocale() === 'pt-BR' }, 'Português'),
    h('option', { value: 'en', selected: getLocale() === 'en' }, 'English'),
  );
  return h(
    'header',
    { class: 'top' },
    h('a', { href: '#/projects', class: 'brand' }, 'NFS-e'),
    h(
      'nav',
      {},
      h('a', { href: '#/projects' }, t('nav.projects')),
      h('a', { href: '#/tokens' }, t('nav.tokens')),
      h('a', { href: '#/settings' }, t('nav.settings')),
    ),
    h('span', { class: 'who' }, `${current.organization.name} · ${current.email}`),
    languages,
    h(
      'button',
      {
        class: 'link',
        onclick: async () => {
          await call('DELETE', '/session').catch(() => undefined);
          session = null;
          setSession(null);
          location.hash = '#/projects';
          void render();
        },
      },
      t('signOut'),
    ),
  );
}

async function page(path: string[]): Promise<HTMLElement> {
  if (path[0] === 'settings') return settingsPage();
  if (path[0] === 'tokens') return orgTokensPage();
  if (path[0] === 'projects' && path[1] && path[2] === 'invoices' && path[3]) return invoicePage(path[1], path[3]);
  if (path[0] === 'projects' && path[1]) return projectPage(path[1], path[2] ?? 'invoices');
  return projectsPage();
}

async function render(): Promise<void> {
  document.documentElement.lang = getLocale();
  document.title = t('title');
  if (!session) {
    session = await call<Session>('GET', '/session').catch(() => null);
    setSession(session);
  }
  if (!session) {
    root.replaceChildren(
      signInPage((signedIn) => {
        session = signedIn;
        setSession(signedIn);
        void render();
      }),
    );
    return;
  }
  const path = location.hash.replace(/^#\/?/, '').split('?')[0]!.split('/').filter(Boolean);
  const main = h('main', {}, h('p', { class: 'muted' }, t('loading')));
  root.replaceChildren(header(session), main);
  try {
    main.replaceChildren(await page(path));
  } catch (err) {
    main.replaceChildren(
      h('div', { class: 'form-alert', role: 'alert' }, err instanceof Error ? err.message : String(err)),
    );
  }
}

window.addEventListener('hashchange', () => void render());
window.addEventListener(SIGNED_OUT, () => {
  if (!session) return; // already on the sign-in page
  session = null;
  setSession(null);
  void render();
});
void render();
