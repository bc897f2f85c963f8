import { call, showProblem } from '../api.ts';
import { formatDate, formJson, h } from '../dom.ts';
import { getLocale, t } from '../i18n.ts';

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  active: boolean;
}

interface Delivery {
  id: string;
  endpointId: string;
  event: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  attempts: {
    attemptNumber: number;
    attemptedAt: string;
    success: boolean;
    statusCode: number | null;
    durationMs: number;
    error: string | null;
  }[];
}

const EVENTS = ['nfse.issued', 'nfse.error', 'nfse.cancelled', 'nfse.documents_ready', 'batch.completed'];

export async function webhooksTab(projectId: string): Promise<HTMLElement> {
  const locale = getLocale();
  const [endpoints, deliveries] = await Promise.all([
    call<{ data: Endpoint[] }>('GET', '/v1/webhooks/endpoints', { project: projectId }),
    call<{ data: Delivery[] }>('GET', '/v1/webhooks/deliveries?limit=50', { project: projectId }),
  ]);
  const form = h(
    'form',
    { class: 'card', id: 'create-endpoint' },
    h('h2', {}, t('webhooks.create')),
    h('label', {}, 'URL', h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://' })),
    h(
      'fieldset',
      {},
      h('legend', {}, t('webhooks.events')),
      EVENTS.map((e) =>
        h('label', { class: 'inline' }, h('input', { type: 'checkbox', name: 'events', value: e, checked: true }), e),
      ),
    ),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('webhooks.submit')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await call('POST', '/v1/webhooks/endpoints', { body: formJson(form), project: projectId });
      location.reload();
    } catch (err) {
      showProblem(form, err);
    }
  });
  const deliveriesBox = h(
    'div',
    { class: 'card', id: 'deliveries' },
    h('h2', {}, t('webhooks.deliveries')),
    h('div', { class: 'form-alert' }),
  );
  if (deliveries.data.length === 0) deliveriesBox.append(h('p', { class: 'muted' }, t('webhooks.noDeliveries')));
  for (const d of deliveries.data) {
    const retry =
      // the API retries a finished delivery (succeeded or failed); a pending one waits for its next attempt
      d.status !== 'pending'
        ? h(
            'button',
            {
              onclick: async () => {
                try {
                  await call('POST', `/v1/webhooks/deliveries/${d.id}/retry`, { project: projectId });
                  location.reload();
                } catch (err) {
                  showProblem(deliveriesBox, err);
                }
              },
            },
            t('webhooks.retry'),
          )
        : null;
    deliveriesBox.append(
      h(
        'details',
        { class: `delivery ${d.status}`, open: true },
        h(
          'summary',
          {},
          h('span', { class: `badge ${d.status}` }, t(`delivery.${d.status}`)),
          ` ${d.event} · ${formatDate(d.createdAt, locale)} · ${t('webhooks.attempts', { n: d.attemptCount })}`,
          d.nextAttemptAt ? ` · ${t('webhooks.next')} ${formatDate(d.nextAttemptAt, locale)}` : '',
        ),
        h(
          'table',
          { class: 'list compact' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['#', t('webhooks.at'), 'HTTP', 'ms', t('webhooks.error')].map((c) => h('th', {}, c)),
            ),
          ),
          h(
            'tbody',
            {},
            d.attempts.map((a) =>
              h(
                'tr',
                { class: a.success ? 'ok' : 'failed' },
                h('td', {}, a.attemptNumber),
                h('td', {}, formatDate(a.attemptedAt, locale)),
                h('td', {}, a.statusCode ?? '—'),
                h('td', { class: 'num' }, a.durationMs),
                h('td', {}, a.error ?? ''),
              ),
            ),
          ),
        ),
        retry,
      ),
    );
  }
  return h(
    'div',
    {},
    h(
      'table',
      { class: 'list', id: 'endpoints' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['URL', t('webhooks.events'), t('webhooks.active')].map((c) => h('th', {}, c)),
        ),
      ),
      h(
        'tbody',
        {},
        endpoints.data.map((e) =>
          h('tr', {}, h('td', {}, e.url), h('td', {}, e.events.join(', ')), h('td', {}, e.active ? '✓' : '—')),
        ),
      ),
    ),
    deliveriesBox,
    form,
  );
}
