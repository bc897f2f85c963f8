import { call, showProblem } from '../api.ts';
import { formJson, h } from '../dom.ts';
import { t } from '../i18n.ts';
import { projectFields } from './project-form.ts';

interface ProjectItem {
  id: string;
  name: string;
  cnpj: string;
  codigoMunicipio: string | null;
  active: boolean;
  createdAt: string;
}

export async function projectsPage(): Promise<HTMLElement> {
  const list = await call<{ data: ProjectItem[] }>('GET', '/v1/org/projects?limit=100');
  const form = h(
    'form',
    { class: 'card', id: 'create-project' },
    h('h2', {}, t('projects.create')),
    projectFields(),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('projects.createSubmit')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const created = await call<{ id: string }>('POST', '/v1/org/projects', { body: formJson(form) });
      location.hash = `#/projects/${created.id}/settings`;
    } catch (err) {
      showProblem(form, err);
    }
  });
  return h(
    'div',
    { class: 'page', id: 'projects-page' },
    h('h1', {}, t('nav.projects')),
    list.data.length === 0
      ? h('p', { class: 'muted' }, t('projects.none'))
      : h(
          'table',
          { class: 'list' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              [t('field.name'), t('field.cnpj'), t('field.codigoMunicipio'), ''].map((c) => h('th', {}, c)),
            ),
          ),
          h(
            'tbody',
            {},
            list.data.map((p) =>
              h(
                'tr',
                {},
                h('td', {}, h('a', { href: `#/projects/${p.id}/invoices` }, p.name)),
                h('td', {}, p.cnpj),
                h('td', {}, p.codigoMunicipio ?? '—'),
                h('td', {}, h('a', { href: `#/projects/${p.id}/settings` }, t('projects.edit'))),
              ),
            ),
          ),
        ),
    form,
  );
}
