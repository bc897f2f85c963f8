import { call, showProblem } from '../api.ts';
import { formatDate, formJson, h } from '../dom.ts';
import { getLocale, t } from '../i18n.ts';

interface OrgToken {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  active: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  thisSession: boolean;
}

const SCOPES = [
  'projects:read',
  'projects:write',
  'api_keys:manage',
  'settings:read',
  'settings:write',
  'certificates:write',
];

/** Organization tokens (svc_org_…) with their scopes (spec 5.4): created once and shown once, revoked. */
export async function orgTokensPage(): Promise<HTMLElement> {
  const tokens = await call<{ data: OrgToken[] }>('GET', '/org-tokens');
  const locale = getLocale();
  const shown = h('div', { id: 'new-token' });
  const form = h(
    'form',
    { class: 'card', id: 'create-org-token' },
    h('h2', {}, t('tokens.create')),
    h('label', {}, t('keys.name'), h('input', { name: 'name', required: true })),
    h(
      'fieldset',
      {},
      h('legend', {}, t('keys.scopes')),
      SCOPES.map((s) => h('label', { class: 'inline' }, h('input', { type: 'checkbox', name: 'scopes', value: s }), s)),
    ),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('tokens.submit')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const created = await call<{ token: string }>('POST', '/org-tokens', { body: { scopes: [], ...formJson(form) } });
      shown.replaceChildren(
        h(
          'div',
          { class: 'card secret' },
          h('strong', {}, t('keys.once')),
          h('code', { id: 'created-token' }, created.token),
          h('a', { href: '#/tokens', onclick: () => location.reload() }, t('keys.done')),
        ),
      );
      form.reset();
    } catch (err) {
      showProblem(form, err);
    }
  });
  return h(
    'div',
    { class: 'page', id: 'tokens-page' },
    h('h1', {}, t('nav.tokens')),
    h('p', { class: 'muted' }, t('tokens.hint')),
    shown,
    h(
      'table',
      { class: 'list', id: 'tokens' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          [t('keys.name'), t('keys.prefix'), t('keys.scopes'), t('createdAt'), t('keys.lastUsed'), ''].map((c) =>
            h('th', {}, c),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        tokens.data.map((k) =>
          h(
            'tr',
            {},
            h('td', {}, k.name, k.thisSession ? h('small', { class: 'muted' }, ` (${t('tokens.thisSession')})`) : null),
            h('td', {}, h('code', {}, `${k.prefix}…`)),
            h('td', {}, k.scopes.join(', ')),
            h('td', {}, formatDate(k.createdAt, locale)),
            h('td', {}, formatDate(k.lastUsedAt, locale)),
            h(
              'td',
              {},
              !k.active
                ? h('span', { class: 'muted' }, t('keys.revoked'))
                : k.thisSession
                  ? null
                  : h(
                      'button',
                      {
                        class: 'danger',
                        onclick: async () => {
                          if (!confirm(t('keys.revokeConfirm', { name: k.name }))) return;
                          await call('DELETE', `/org-tokens/${k.id}`);
                          location.reload();
                        },
                      },
                      t('keys.revoke'),
                    ),
            ),
          ),
        ),
      ),
    ),
    form,
  );
}
