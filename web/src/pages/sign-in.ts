import { call, type Session, showProblem } from '../api.ts';
import { formJson, h } from '../dom.ts';
import { getLocale, setLocale, t } from '../i18n.ts';

export function signInPage(onSignedIn: (session: Session) => void): HTMLElement {
  const form = h(
    'form',
    { class: 'card narrow', id: 'sign-in' },
    h('h1', {}, t('signIn.title')),
    h(
      'label',
      {},
      t('signIn.email'),
      h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true }),
    ),
    h(
      'label',
      {},
      t('signIn.password'),
      h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
    ),
    h('div', { class: 'form-alert' }),
    h('button', { type: 'submit' }, t('signIn.submit')),
    h(
      'p',
      { class: 'muted' },
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          onclick: () => {
            setLocale(getLocale() === 'pt-BR' ? 'en' : 'pt-BR');
            location.reload();
          },
        },
        getLocale() === 'pt-BR' ? 'English' : 'Português',
      ),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      onSignedIn(await call<Session>('POST', '/session', { body: formJson(form) }));
    } catch (err) {
      showProblem(form, err);
    }
  });
  return h('div', { class: 'center' }, form);
}
