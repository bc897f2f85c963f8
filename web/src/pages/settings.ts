import { call, clearProblem, showProblem } from '../api.ts';
import { formatDate, h } from '../dom.ts';
import { getLocale, t } from '../i18n.ts';

interface Settings {
  name: string;
  slug: string;
  storageBaseUrl: string | null;
  storageBaseUrlStatus: {
    storageBaseUrl: string | null;
    status: string;
    reason: string | null;
    checkedAt: string | null;
    cnameTarget: string;
    activeBaseUrl: string | null;
  } | null;
  subscription: { planName: string; creditsUsed: number; creditsLimit: number; daysLeft: number };
}

/** The organization: plan and credits, and the white-label domain with its CNAME instruction and state. */
export async function settingsPage(): Promise<HTMLElement> {
  const s = await call<Settings>('GET', '/v1/org/settings');
  const locale = getLocale();
  const domain = s.storageBaseUrlStatus;
  const form = h(
    'form',
    { class: 'card', id: 'white-label' },
    h('h2', {}, t('domain.title')),
    h('p', { class: 'muted' }, t('domain.hint')),
    h(
      'label',
      {},
      t('domain.url'),
      h('input', {
        name: 'storageBaseUrl',
        value: s.storageBaseUrl ?? '',
        placeholder: 'https://notas.example.com.br',
      }),
    ),
    domain
      ? h(
          'div',
          { class: 'dns' },
          h('p', {}, t('domain.cname')),
          h(
            'pre',
            {},
            `${new URL(domain.storageBaseUrl ?? s.storageBaseUrl ?? 'https://x').host}.  CNAME  ${domain.cnameTarget}.`,
          ),
          h(
            'p',
            {},
            h('span', { class: `badge ${domain.status}` }, t(`domain.${domain.status}`)),
            ' ',
            domain.reason ?? '',
            domain.checkedAt ? ` · ${t('domain.checked')} ${formatDate(domain.checkedAt, locale)}` : '',
          ),
        )
      : null,
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('save')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = (form.elements.namedItem('storageBaseUrl') as HTMLInputElement).value.trim();
    try {
      await call('PATCH', '/v1/org/settings', { body: { storageBaseUrl: value === '' ? null : value } });
      clearProblem(form);
      location.reload();
    } catch (err) {
      showProblem(form, err);
    }
  });
  return h(
    'div',
    { class: 'page', id: 'settings-page' },
    h('h1', {}, s.name),
    h(
      'dl',
      { class: 'facts card' },
      h('dt', {}, t('settings.plan')),
      h('dd', {}, s.subscription.planName),
      h('dt', {}, t('settings.credits')),
      h(
        'dd',
        {},
        `${s.subscription.creditsUsed} / ${s.subscription.creditsLimit} (${t('settings.daysLeft', { days: s.subscription.daysLeft })})`,
      ),
    ),
    form,
  );
}
