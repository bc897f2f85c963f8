import { call, showProblem } from '../api.ts';
import { formatDate, h } from '../dom.ts';
import { getLocale, t } from '../i18n.ts';
import type { InvoiceItem } from './invoices.ts';
import { statusBadge } from './invoices.ts';

interface BatchStatus {
  batchId: string;
  status: string;
  total: number;
  processed: number;
  issued: number;
  errors: number;
  createdAt: string;
  completedAt: string | null;
  items: {
    invoiceId: string;
    index: number;
    status: string;
    referencia: string | null;
    numeroNfse?: string;
    errorCode?: string;
    errorMessage?: string;
  }[];
}

/** Batches of the project (POST /emitir/batch): the recent ones, each with its items; a new batch from JSON. */
export async function batchesTab(projectId: string): Promise<HTMLElement> {
  const locale = getLocale();
  const { items } = await call<{ items: (InvoiceItem & { batchId: string | null })[] }>(
    'GET',
    `/projects/${projectId}/invoices?limit=200`,
  );
  const batchIds = [...new Set(items.map((i) => i.batchId).filter((id): id is string => !!id))].slice(0, 10);
  const batches = await Promise.all(
    batchIds.map((id) => call<BatchStatus>('GET', `/v1/invoices/batch/${id}/status`, { project: projectId })),
  );
  const form = h(
    'form',
    { class: 'card', id: 'issue-batch' },
    h('h2', {}, t('batches.new')),
    h(
      'label',
      {},
      t('batches.json'),
      h('textarea', {
        name: 'items',
        rows: 8,
        placeholder: '[{ "tomador": { … }, "servico": { … }, "valores": { … } }]',
      }),
    ),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('batches.submit')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = (form.elements.namedItem('items') as HTMLTextAreaElement).value;
    try {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(t('batches.notJson'));
      }
      await call('POST', '/v1/emitir/batch', { body: { items: parsed }, project: projectId });
      location.reload();
    } catch (err) {
      showProblem(form, err);
    }
  });
  return h(
    'div',
    { id: 'batches' },
    batches.length === 0 ? h('p', { class: 'muted' }, t('batches.none')) : null,
    batches.map((b) =>
      h(
        'details',
        { class: 'card batch', open: true },
        h(
          'summary',
          {},
          h('span', { class: `badge ${b.status}` }, b.status),
          ` ${formatDate(b.createdAt, locale)} · ${t('batches.counts', { total: b.total, issued: b.issued, errors: b.errors })}`,
        ),
        h(
          'table',
          { class: 'list compact' },
          h(
            'tbody',
            {},
            b.items.map((i) =>
              h(
                'tr',
                {},
                h('td', {}, i.index + 1),
                h(
                  'td',
                  {},
                  h('a', { href: `#/projects/${projectId}/invoices/${i.invoiceId}` }, i.referencia ?? i.invoiceId),
                ),
                h('td', {}, statusBadge(i.status)),
                h('td', {}, i.numeroNfse ?? (i.errorCode ? `${i.errorCode}: ${i.errorMessage ?? ''}` : '')),
              ),
            ),
          ),
        ),
      ),
    ),
    form,
  );
}
