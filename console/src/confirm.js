import { h } from './dom.js';

/**
 * Asks before something that cannot be undone: a modal <dialog> that says what happens, with Cancel (focused first, so
 * Enter does not destroy) and the action. Escape cancels. Resolves true only when the action is chosen.
 */
export function confirmAction({ title, consequence, action }) {
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'secondary', autofocus: true }, 'Cancel');
    const accept = h('button', { type: 'button', class: 'danger' }, action);
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-consequence' },
      h('h2', { id: 'confirm-title' }, title),
      h('p', { id: 'confirm-consequence' }, consequence),
      h('div', { class: 'row' }, cancel, accept),
    );
    const answer = (yes) => {
      dialog.close();
      dialog.remove();
      resolve(yes);
    };
    cancel.addEventListener('click', () => answer(false));
    accept.addEventListener('click', () => answer(true));
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      answer(false);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
