import { post } from '../api.js';
import { h, show } from '../dom.js';

/** Exchanges a key for a session cookie; the key is sent once and kept nowhere in the browser. */
export function signInPage(onSignedIn) {
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'sign-in-title' },
    h(
      'label',
      {},
      h('span', {}, 'Operator key or project admin key'),
      h('input', { type: 'password', name: 'key', autocomplete: 'off', required: true, placeholder: 'docent_op_… or docent_admin_…' }),
    ),
    h('button', { type: 'submit' }, 'Sign in'),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = form.elements.namedItem('key');
    try {
      const session = await post('/console/session', { key: input.value.trim() });
      input.value = '';
      await onSignedIn(session);
    } catch (err) {
      error.textContent = err.message;
    }
  });
  show(h('h1', { id: 'sign-in-title' }, 'Sign in'), h('p', {}, 'The key is exchanged for a session on the gateway; the page keeps only an HttpOnly cookie.'), form);
}
