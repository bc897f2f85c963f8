import { call, showProblem } from '../api.ts';
import { formatDate, formJson, h } from '../dom.ts';
import { getLocale, t } from '../i18n.ts';

export interface InvoiceItem {
  id: string;
  status: string;
  referencia: string | null;
  numeroNfse: string | null;
  engine: string;
  createdAt: string;
  emittedAt: string | null;
  takerName: string | null;
  takerDocument: string | null;
  total: number | null;
  errorCode: string | null;
}

const STATUSES = ['queued', 'processing', 'issued', 'error', 'cancelled'];

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge ${status}` }, t(`status.${status}`));
}

export function money(value: number | null, locale: string): string {
  return value === null ? '—' : value.toLocaleString(locale, { style: 'currency', currency: 'BRL' });
}

/** The invoices of the project, filtered by status, creation date and taker (the filters live in the URL). */
export async function invoicesTab(projectId: string): Promise<HTMLElement> {
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const query = new URLSearchParams();
  for (const name of ['status', 'from', 'to', 'taker']) {
    const value = params.get(name);
    if (value) query.set(name, value);
  }
  const filters = h(
    'form',
    { class: 'filters', id: 'invoice-filters' },
    h(
      'label',
      {},
      t('invoices.status'),
      h(
        'select',
        { name: 'status' },
        h('option', { value: '' }, t('invoices.all')),
        STATUSES.map((s) => h('option', { value: s, selected: params.get('status') === s }, t(`status.${s}`))),
      ),
    ),
    h('label', {}, t('invoices.from'), h('input', { type: 'date', name: 'from', value: params.get('from') ?? '' })),
    h('label', {}, t('invoices.to'), h('input', { type: 'date', name: 'to', value: params.get('to') ?? '' })),
    h('label', {}, t('invoices.taker'), h('input', { name: 'taker', value: params.get('taker') ?? '' })),
    h('button', { type: 'submit' }, t('invoices.filter')),
    h('div', { class: 'form-alert' }),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries(formJson(filters))) next.set(k, String(v));
    location.hash = `#/projects/${projectId}/invoices?${next}`;
  });
  let list: { items: InvoiceItem[] } = { items: [] };
  try {
    list = await call('GET', `/projects/${projectId}/invoices?${query}`);
  } catch (err) {
    showProblem(filters, err);
  }
  const locale = getLocale();
  return h(
    'div',
    {},
    filters,
    list.items.length === 0
      ? h('p', { class: 'muted' }, t('invoices.none'))
      : h(
          'table',
          { class: 'list', id: 'invoices' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              [
                t('createdAt'),
                t('invoices.status'),
                t('invoices.number'),
                t('invoices.taker'),
                t('invoices.total'),
              ].map((c) => h('th', {}, c)),
            ),
          ),
          h(
            'tbody',
            {},
            list.items.map((i) =>
              h(
                'tr',
                {},
                h(
                  'td',
                  {},
                  h('a', { href: `#/projects/${projectId}/invoices/${i.id}` }, formatDate(i.createdAt, locale)),
                ),
                h('td', {}, statusBadge(i.status)),
                h('td', {}, i.numeroNfse ?? '—'),
                h('td', {}, `${i.takerName ?? '—'} ${i.takerDocument ? `(${i.takerDocument})` : ''}`),
                h('td', { class: 'num' }, money(i.total, locale)),
              ),
            ),
          ),
        ),
  );
}

const TAKER_FIELDS = [
  'tomador.cnpj',
  'tomador.cpf',
  'tomador.nome',
  'tomador.email',
  'tomador.endereco.logradouro',
  'tomador.endereco.numero',
  'tomador.endereco.bairro',
  'tomador.endereco.cidade',
  'tomador.endereco.uf',
  'tomador.endereco.cep',
];

/** A note issued from a form: POST /emitir of the API, its refusals shown under the fields they name. */
export function issueTab(project: Record<string, unknown> & { id: string }): HTMLElement {
  const input = (name: string, attrs: Record<string, string | boolean> = {}) =>
    h('label', {}, t(`field.${name}`), h('input', { name, ...attrs }));
  const form = h(
    'form',
    { class: 'card', id: 'issue-invoice' },
    h('h2', {}, t('issue.taker')),
    h(
      'div',
      { class: 'grid' },
      TAKER_FIELDS.map((name) => input(name)),
    ),
    h('h2', {}, t('issue.service')),
    h(
      'div',
      { class: 'grid' },
      h(
        'label',
        { class: 'wide' },
        t('field.servico.descricao'),
        h('textarea', { name: 'servico.descricao', rows: 2 }),
      ),
      input('servico.codigo', { value: String(project.codigoTributacao ?? '') }),
      input('valores.total', { 'data-type': 'number', inputmode: 'decimal' }),
      input('valores.aliquotaIss', { 'data-type': 'number', inputmode: 'decimal' }),
      input('referencia'),
    ),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('issue.submit')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const accepted = await call<{ invoiceId: string }>('POST', '/v1/emitir', {
        body: formJson(form),
        project: project.id,
      });
      location.hash = `#/projects/${project.id}/invoices/${accepted.invoiceId}`;
    } catch (err) {
      showProblem(form, err);
    }
  });
  return form;
}
