import { call, download, showProblem } from '../api.ts';
import { formatDate, formJson, h } from '../dom.ts';
import { getLocale, t } from '../i18n.ts';
import { statusBadge } from './invoices.ts';

interface InvoiceStatus {
  invoiceId: string;
  status: string;
  engine: string;
  createdAt: string;
  updatedAt: string;
  serie: string | null;
  numeroDps: number | null;
  numeroNfse?: string;
  chNFSe?: string;
  emittedAt?: string;
  errorCode?: string;
  errorMessage?: string;
  errors?: { Codigo: string; Descricao: string }[];
  cancelledAt?: string;
  cancellation?: { status?: string; requestedAt?: string; errorCode?: string | null; errorMessage?: string | null };
}

/** The steps an invoice went through, oldest first: accepted → issued | error → cancellation → cancelled. */
function timeline(s: InvoiceStatus, locale: string): HTMLElement {
  const steps: [string, string | undefined, string][] = [[t('timeline.accepted'), s.createdAt, 'done']];
  if (s.status === 'queued' || s.status === 'processing') steps.push([t(`status.${s.status}`), undefined, 'current']);
  if (s.emittedAt) steps.push([t('timeline.issued', { number: s.numeroNfse ?? '' }), s.emittedAt, 'done']);
  if (s.status === 'error')
    steps.push([`${t('status.error')}: ${s.errorCode ?? ''} ${s.errorMessage ?? ''}`, s.updatedAt, 'failed']);
  if (s.cancellation?.requestedAt) steps.push([t('timeline.cancelRequested'), s.cancellation.requestedAt, 'done']);
  if (s.cancellation?.errorCode) {
    steps.push([
      `${t('timeline.cancelRefused')}: ${s.cancellation.errorCode} ${s.cancellation.errorMessage ?? ''}`,
      undefined,
      'failed',
    ]);
  }
  if (s.cancelledAt) steps.push([t('status.cancelled'), s.cancelledAt, 'done']);
  return h(
    'ol',
    { class: 'timeline', id: 'timeline' },
    steps.map(([label, at, kind]) =>
      h('li', { class: kind }, h('span', {}, label), h('time', {}, at ? formatDate(at, locale) : '…')),
    ),
  );
}

export async function invoicePage(projectId: string, invoiceId: string): Promise<HTMLElement> {
  const locale = getLocale();
  const root = h('div', { class: 'page', id: 'invoice-page' });
  let timer: ReturnType<typeof setTimeout> | undefined;

  const render = async () => {
    const s = await call<InvoiceStatus>('GET', `/v1/invoices/${invoiceId}/status`, { project: projectId });
    const issued = s.status === 'issued' || s.status === 'cancelled';
    const actions = h('div', { class: 'actions card', id: 'invoice-actions' }, h('div', { class: 'form-alert' }));
    const act = async (work: () => Promise<void>) => {
      try {
        await work();
      } catch (err) {
        showProblem(actions, err);
      }
    };
    if (issued) {
      actions.prepend(
        h(
          'button',
          { onclick: () => act(() => download(`/v1/invoices/${invoiceId}/xml`, projectId, `nfse-${invoiceId}.xml`)) },
          t('invoice.xml'),
        ),
        h(
          'button',
          { onclick: () => act(() => download(`/v1/invoices/${invoiceId}/pdf`, projectId, `nfse-${invoiceId}.pdf`)) },
          t('invoice.pdf'),
        ),
      );
    }
    if (s.status === 'issued' && !s.cancellation?.requestedAt) {
      const cancel = h(
        'form',
        { id: 'cancel-invoice', class: 'inline-form' },
        h('label', {}, t('invoice.cancelReason'), h('input', { name: 'motivo', maxlength: 255, required: true })),
        h('button', { type: 'submit', class: 'danger' }, t('invoice.cancel')),
      );
      cancel.addEventListener('submit', (event) => {
        event.preventDefault();
        void act(async () => {
          await call('POST', '/v1/cancelar', { body: { invoiceId, ...formJson(cancel) }, project: projectId });
          await render();
        });
      });
      actions.insertBefore(cancel, actions.querySelector('.form-alert'));
    }
    root.replaceChildren(
      h(
        'p',
        { class: 'crumbs' },
        h('a', { href: `#/projects/${projectId}/invoices` }, t('tab.invoices')),
        ' / ',
        invoiceId,
      ),
      h('h1', {}, t('invoice.title'), ' ', statusBadge(s.status)),
      h(
        'dl',
        { class: 'facts card' },
        h('dt', {}, t('invoice.number')),
        h('dd', { id: 'invoice-number' }, s.numeroNfse ?? '—'),
        h('dt', {}, t('invoice.dps')),
        h('dd', {}, s.numeroDps === null ? '—' : `${s.serie}/${s.numeroDps}`),
        h('dt', {}, t('invoice.engine')),
        h('dd', {}, s.engine),
        h('dt', {}, t('invoice.accessKey')),
        h('dd', {}, h('code', {}, s.chNFSe ?? '—')),
      ),
      h('div', { class: 'card' }, h('h2', {}, t('invoice.timeline')), timeline(s, locale)),
      ...(s.errors?.length
        ? [
            h(
              'div',
              { class: 'card' },
              h(
                'ul',
                {},
                s.errors.map((e) => h('li', {}, `${e.Codigo}: ${e.Descricao}`)),
              ),
            ),
          ]
        : []),
      actions,
    );
    const waiting =
      s.status === 'queued' ||
      s.status === 'processing' ||
      (s.cancellation?.requestedAt && s.status === 'issued' && !s.cancellation.errorCode);
    clearTimeout(timer);
    if (waiting) timer = setTimeout(() => void render().catch(() => undefined), 1500);
  };
  await render();
  window.addEventListener('hashchange', () => clearTimeout(timer), { once: true });
  return root;
}
