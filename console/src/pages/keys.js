import { del, enc, get, post } from '../api.js';
import { h, show, table, toast, when } from '../dom.js';

/** A project's keys: made and shown once, listed by id, revoked. */
export async function keysPage(ctx, projectId, made) {
  const { keys } = await get(`/v2/admin/projects/${enc(projectId)}/keys`);
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'new-key' },
    h('h2', { id: 'new-key' }, 'New key'),
    h(
      'label',
      {},
      h('span', {}, 'Kind'),
      h('select', { name: 'kind' }, h('option', { value: 'admin' }, 'admin (agent jobs, analytics, settings)'), h('option', { value: 'assistant' }, 'assistant (the docs widget)')),
    ),
    h('button', { type: 'submit' }, 'Create key'),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const key = await post(`/v2/admin/projects/${enc(projectId)}/keys`, { kind: form.elements.namedItem('kind').value });
      await keysPage(ctx, projectId, key);
    } catch (err) {
      error.textContent = err.message;
    }
  });
  const revoke = (id) => async () => {
    try {
      await del(`/v2/admin/projects/${enc(projectId)}/keys/${enc(id)}`);
      toast(`Key ${id} revoked`);
      await keysPage(ctx, projectId);
    } catch (err) {
      error.textContent = err.message;
    }
  };
  show(
    h('h1', {}, `Keys · ${projectId}`),
    made &&
      h(
        'section',
        { class: 'once', 'aria-labelledby': 'made-key' },
        h('h2', { id: 'made-key' }, `New ${made.kind} key ${made.id}`),
        h('p', {}, 'Copy it now: it is shown this once and never again.'),
        h('code', { 'data-testid': 'new-key' }, made.key),
      ),
    keys.length
      ? table(
          ['Key id', 'Kind', 'Created', 'Last used', 'State', ''],
          keys,
          (k) => [
            k.id,
            k.kind,
            when(k.createdAt),
            when(k.lastUsedAt),
            k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'active',
            k.revokedAt ? '' : h('button', { type: 'button', class: 'danger', onclick: revoke(k.id), 'aria-label': `Revoke ${k.id}` }, 'Revoke'),
          ],
          { 'data-testid': 'keys' },
        )
      : h('p', {}, 'No keys.'),
    form,
  );
}
