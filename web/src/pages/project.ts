import { ApiProblem, call, clearProblem, showProblem } from '../api.ts';
import { formatDate, formJson, h } from '../dom.ts';
import { getLocale, t } from '../i18n.ts';
import { batchesTab } from './batches.ts';
import { invoicesTab, issueTab } from './invoices.ts';
import { keysTab } from './keys.ts';
import { projectFields } from './project-form.ts';
import { usageTab } from './usage.ts';
import { webhooksTab } from './webhooks.ts';

const TABS = [
  'invoices',
  'issue',
  'batches',
  'settings',
  'certificate',
  'keys',
  'numbering',
  'logo',
  'webhooks',
  'usage',
] as const;

export async function projectPage(projectId: string, tab: string): Promise<HTMLElement> {
  const project = await call<Record<string, unknown> & { id: string; name: string }>(
    'GET',
    `/v1/org/projects/${projectId}`,
  );
  const body = await tabBody(project, tab);
  return h(
    'div',
    { class: 'page', id: `project-${tab}` },
    h('p', { class: 'crumbs' }, h('a', { href: '#/projects' }, t('nav.projects')), ' / ', project.name),
    h('h1', {}, project.name, ' ', h('small', { class: 'muted' }, String(project.cnpj))),
    h(
      'nav',
      { class: 'tabs' },
      TABS.map((name) =>
        h('a', { href: `#/projects/${projectId}/${name}`, class: name === tab ? 'active' : null }, t(`tab.${name}`)),
      ),
    ),
    body,
  );
}

async function tabBody(project: Record<string, unknown> & { id: string }, tab: string): Promise<HTMLElement> {
  switch (tab) {
    case 'issue':
      return issueTab(project);
    case 'batches':
      return batchesTab(project.id);
    case 'settings':
      return settingsTab(project);
    case 'certificate':
      return certificateTab(project.id);
    case 'keys':
      return keysTab(project.id);
    case 'numbering':
      return numberingTab(project.id);
    case 'logo':
      return logoTab(project);
    case 'webhooks':
      return webhooksTab(project.id);
    case 'usage':
      return usageTab(project.id);
    default:
      return invoicesTab(project.id);
  }
}

function settingsTab(project: Record<string, unknown> & { id: string }): HTMLElement {
  const form = h(
    'form',
    { class: 'card', id: 'edit-project' },
    projectFields(project, true),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('save')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const { cnpj: _cnpj, ...changes } = formJson(form);
    try {
      await call('PATCH', `/v1/org/projects/${project.id}`, { body: changes });
      clearProblem(form);
      form.querySelector('.form-alert')!.replaceChildren(h('span', { class: 'ok' }, t('saved')));
    } catch (err) {
      showProblem(form, err);
    }
  });
  return form;
}

interface CertificateView {
  fileName: string;
  subjectCN: string;
  validFrom: string;
  validUntil: string;
  daysUntilExpiration: number;
}

function certificateCard(cert: CertificateView | null): HTMLElement {
  if (!cert) return h('p', { class: 'muted', id: 'certificate-state' }, t('certificate.none'));
  const locale = getLocale();
  return h(
    'dl',
    { class: 'facts', id: 'certificate-state' },
    h('dt', {}, t('certificate.subject')),
    h('dd', {}, cert.subjectCN),
    h('dt', {}, t('certificate.file')),
    h('dd', {}, cert.fileName),
    h('dt', {}, t('certificate.validUntil')),
    h(
      'dd',
      { class: cert.daysUntilExpiration < 30 ? 'warn' : null },
      `${formatDate(cert.validUntil, locale)} (${t('certificate.daysLeft', { days: cert.daysUntilExpiration })})`,
    ),
  );
}

async function certificateTab(projectId: string): Promise<HTMLElement> {
  const current = await call<{ certificate: CertificateView | null }>('GET', `/projects/${projectId}/certificate`);
  const state = h('div', {}, certificateCard(current.certificate));
  const form = h(
    'form',
    { class: 'card', id: 'upload-certificate' },
    h('h2', {}, t('certificate.upload')),
    h(
      'label',
      {},
      t('certificate.fileLabel'),
      h('input', { type: 'file', name: 'file', accept: '.pfx,.p12', required: true }),
    ),
    h('label', {}, t('certificate.password'), h('input', { type: 'password', name: 'password', autocomplete: 'off' })),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('certificate.submit')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData();
    // the API reads the password field before the file
    data.set('password', (form.elements.namedItem('password') as HTMLInputElement).value);
    const file = (form.elements.namedItem('file') as HTMLInputElement).files?.[0];
    if (file) data.set('file', file, file.name);
    try {
      const cert = await call<CertificateView>('POST', `/v1/org/projects/${projectId}/certificate`, { form: data });
      clearProblem(form);
      state.replaceChildren(certificateCard(cert));
      form.reset();
    } catch (err) {
      showProblem(form, err);
    }
  });
  return h('div', {}, h('div', { class: 'card' }, h('h2', {}, t('certificate.current')), state), form);
}

async function numberingTab(projectId: string): Promise<HTMLElement> {
  const numbering = await call<{ nfse: { serie: string; ultimoNumero: number; proximoNumero: number } }>(
    'GET',
    `/v1/org/projects/${projectId}/numeracao`,
  );
  const form = h(
    'form',
    { class: 'card', id: 'numbering' },
    h('p', {}, t('numbering.series', { serie: numbering.nfse.serie, next: numbering.nfse.proximoNumero })),
    h(
      'label',
      {},
      t('numbering.last'),
      h('input', { name: 'ultimoNumeroNfse', 'data-type': 'number', value: numbering.nfse.ultimoNumero }),
    ),
    h('p', { class: 'muted' }, t('numbering.hint')),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('save')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await call('PATCH', `/v1/org/projects/${projectId}/numeracao`, { body: formJson(form) });
      location.reload();
    } catch (err) {
      showProblem(form, err);
    }
  });
  return form;
}

function logoTab(project: Record<string, unknown> & { id: string }): HTMLElement {
  const form = h(
    'form',
    { class: 'card', id: 'logo' },
    h('p', {}, t('logo.template', { template: String(project.danfeTemplate ?? 'padrao') })),
    h(
      'label',
      {},
      t('logo.file'),
      h('input', { type: 'file', name: 'file', accept: 'image/png,image/jpeg,image/webp' }),
    ),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('logo.upload')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const file = (form.elements.namedItem('file') as HTMLInputElement).files?.[0];
    const data = new FormData();
    if (file) data.set('file', file, file.name);
    try {
      await call('POST', `/v1/org/projects/${project.id}/logo`, { form: data });
      clearProblem(form);
      form.querySelector('.form-alert')!.replaceChildren(h('span', { class: 'ok' }, t('saved')));
    } catch (err) {
      showProblem(form, err);
    }
  });
  const logoUrl = typeof project.logoUrl === 'string' ? project.logoUrl : null;
  const frame = h('div', { id: 'danfse-preview' });
  const preview = h(
    'form',
    { class: 'card', id: 'preview-danfse' },
    h('h2', {}, t('logo.preview')),
    h('p', { class: 'muted' }, t('logo.previewHint')),
    h(
      'label',
      {},
      t('logo.templateLabel'),
      h(
        'select',
        { name: 'template' },
        ['padrao', 'retrato_logo', 'paisagem_logo'].map((v) =>
          h('option', { value: v, selected: project.danfeTemplate === v }, v),
        ),
      ),
    ),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('logo.previewSubmit')),
    frame,
  );
  preview.addEventListener('submit', async (event) => {
    event.preventDefault();
    const template = (preview.elements.namedItem('template') as HTMLSelectElement).value;
    const res = await fetch(`/dashboard/api/projects/${project.id}/danfse-preview?template=${template}`);
    if (!res.ok) {
      const json = await res.json().catch(() => null);
      showProblem(
        preview,
        new ApiProblem(res.status, json?.code ?? 'ERROR', json?.detail ?? res.statusText, json?.errors ?? []),
      );
      return;
    }
    clearProblem(preview);
    const url = URL.createObjectURL(await res.blob());
    frame.replaceChildren(
      h('iframe', { class: 'preview', src: url, title: t('logo.preview') }),
      h('a', { href: url, download: `danfse-${template}.pdf` }, t('logo.download')),
    );
  });
  return h(
    'div',
    {},
    logoUrl ? h('div', { class: 'card' }, h('img', { src: logoUrl, alt: 'logo', class: 'logo' })) : null,
    form,
    preview,
  );
}
