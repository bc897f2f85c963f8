import { call, showProblem } from '../api.ts';
import { formatDate, formJson, h } from '../dom.ts';
import { getLocale, t } from '../i18n.ts';

interface KeyItem {
  id: string;
  name: string;
  keyPrefix: string;
  scopes: string[];
  active: boolean;
  lastUsedAt: string | null;
  createdAt: string;
}

export async function keysTab(projectId: string): Promise<HTMLElement> {
  const keys = await call<{ data: KeyItem[] }>('GET', `/v1/org/projects/${projectId}/api-keys`);
  const locale = getLocale();
  const shown = h('div', { id: 'new-key' });
  const form = h(
    'form',
    { class: 'card', id: 'create-key' },
    h('h2', {}, t('keys.create')),
    h('label', {}, t('keys.name'), h('input', { name: 'name', required: true })),
    h(
      'fieldset',
      {},
      h('legend', {}, t('keys.scopes')),
      ['emit', 'cancel', 'query'].map((s) =>
        h('label', { class: 'inline' }, h('input', { type: 'checkbox', name: 'scopes', value: s, checked: true }), s),
      ),
    ),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('keys.submit')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const created = await call<{ key: string; name: string }>('POST', `/v1/org/projects/${projectId}/api-keys`, {
        body: formJson(form),
      });
      // shown once: the API never returns it again
      shown.replaceChildren(
        h(
          'div',
          { class: 'card secret' },
          h('strong', {}, t('keys.once')),
          h('code', { id: 'created-key' }, created.key),
          h('a', { href: `#/projects/${projectId}/keys`, onclick: () => location.reload() }, t('keys.done')),
        ),
      );
      form.reset();
    } catch (err) {
      showProblem(form, err);
    }
  });
  const rows = keys.data.map((k) =>
    h(
      'tr',
      {},
      h(
        'td',
        {},
        k.name,
        k.name.startsWith('dashboard session ') ? h('small', { class: 'muted' }, ` (${t('keys.dashboard')})`) : null,
      ),
      h('td', {}, h('code', {}, `${k.keyPrefix}…`)),
      h('td', {}, k.scopes.join(', ')),
      h('td', {}, formatDate(k.createdAt, locale)),
      h('td', {}, formatDate(k.lastUsedAt, locale)),
      h(
        'td',
        {},
        k.active
          ? h(
              'button',
              {
                class: 'danger',
                onclick: async () => {
                  if (!confirm(t('keys.revokeConfirm', { name: k.name }))) return;
                  await call('DELETE', `/v1/org/projects/${projectId}/api-keys/${k.id}`);
                  location.reload();
                },
              },
              t('keys.revoke'),
            )
          : h('span', { class: 'muted' }, t('keys.revoked')),
      ),
    ),
  );
  return h(
    'div',
    {},
    shown,
    h(
      'table',
      { class: 'list', id: 'keys' },
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
      h('tbody', {}, rows),
    ),
    form,
  );
}
