import { del, enc, get, post } from '../api.js';
import { confirmAction } from '../confirm.js';
import { field, formValues, h, show, table, toast, when } from '../dom.js';

/** What a key is held to beyond its kind: expiry, addresses, read-only scope. */
const limitsOf = (k) => [k.expiresAt && `expires ${when(k.expiresAt)}`, k.allowedIps?.length && `from ${k.allowedIps.join(', ')}`, k.scope === 'read' && 'read only'].filter(Boolean).join('; ') || '—';

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
    field('Expires (optional)', { name: 'expiresAt', type: 'datetime-local' }),
    field('Allowed addresses or networks (optional, comma-separated, e.g. 203.0.113.0/24)', { name: 'allowedIps' }),
    h('label', {}, h('span', {}, 'Scope (admin keys)'), h('select', { name: 'scope' }, h('option', { value: 'write' }, 'write (read and change)'), h('option', { value: 'read' }, 'read only'))),
    h('button', { type: 'submit' }, 'Create key'),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const v = formValues(form);
    const allowedIps = (v.allowedIps ?? '')
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    try {
      const key = await post(`/v2/admin/projects/${enc(projectId)}/keys`, {
        kind: v.kind,
        ...(v.expiresAt && { expiresAt: new Date(v.expiresAt).toISOString() }),
        ...(allowedIps.length && { allowedIps }),
        ...(v.kind === 'admin' && v.scope === 'read' && { scope: 'read' }),
      });
      await keysPage(ctx, projectId, key);
    } catch (err) {
      error.textContent = err.message;
    }
  });
  const revoke = (id) => async () => {
    const yes = await confirmAction({
      title: `Revoke the key ${id}?`,
      consequence: 'Every call with it is refused from now on, and so are the keys made with it. A revoked key cannot be restored; make a new one instead.',
      action: 'Revoke key',
    });
    if (!yes) return;
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
          ['Key id', 'Kind', 'Created', 'Last used', 'Limits', 'State', ''],
          keys,
          (k) => [
            k.id,
            k.kind,
            when(k.createdAt),
            when(k.lastUsedAt),
            limitsOf(k),
            k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'active',
            k.revokedAt ? '' : h('button', { type: 'button', class: 'danger', onclick: revoke(k.id), 'aria-label': `Revoke ${k.id}` }, 'Revoke'),
          ],
          { 'data-testid': 'keys' },
        )
      : h('p', {}, 'No keys.'),
    form,
  );
}
