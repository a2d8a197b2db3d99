import { confirmAction } from '../confirm.js';
import { del, enc, get, post } from '../api.js';
import { field, fill, h, show, table, toast, when } from '../dom.js';

/** The organizations an operator key for all of them may open the forge connections of. */
export async function forgeOrgsPage() {
  const { orgs } = await get('/v2/admin/orgs');
  show(
    h('h1', {}, 'Forge connections'),
    h('p', {}, "Each organization reaches its code through its own connections (docs/forges.md). Open one's:"),
    orgs.length
      ? h(
          'ul',
          {},
          orgs.map((o) => h('li', {}, h('a', { href: `#/o/${enc(o.id)}/forges` }, o.id))),
        )
      : h('p', {}, 'No organizations yet.'),
  );
}

/** An organization's forge connections: added (tested by the forge first), listed, their deliveries, a secret rotated, removed. */
export async function forgesPage(ctx, orgId, shown) {
  const base = `/v2/admin/orgs/${enc(orgId)}/forges`;
  const { forges } = await get(base);
  const error = h('p', { class: 'error', role: 'alert' });
  // The fields each kind takes (docs/forges.md): GitHub a token or an App installation and Enterprise URLs; GitLab
  // and Gitea/Forgejo the server's one address and a token.
  const kinds = {
    github: { token: 'GitHub token', show: ['appInstallationId', 'apiUrl', 'gitUrl'] },
    gitlab: { token: 'GitLab access token (personal, group or project)', show: ['baseUrl'] },
    gitea: { token: 'Gitea or Forgejo token', show: ['baseUrl'] },
  };
  const tokenLabel = h('span', {}, kinds.github.token);
  const kindSelect = h('select', { name: 'kind' }, h('option', { value: 'github' }, 'GitHub'), h('option', { value: 'gitlab' }, 'GitLab'), h('option', { value: 'gitea' }, 'Gitea or Forgejo'));
  const optional = {
    appInstallationId: field('or an installation id of the deployment’s GitHub App', { name: 'appInstallationId', inputmode: 'numeric' }),
    apiUrl: field('API URL (GitHub Enterprise; empty: api.github.com)', { name: 'apiUrl' }),
    gitUrl: field('Git URL (GitHub Enterprise; empty: github.com)', { name: 'gitUrl' }),
    baseUrl: field('Server address (https://gitlab.example.org)', { name: 'baseUrl' }),
  };
  const showKind = () => {
    const k = kinds[kindSelect.value];
    tokenLabel.textContent = k.token;
    for (const [name, el] of Object.entries(optional)) el.hidden = !k.show.includes(name);
  };
  kindSelect.addEventListener('change', showKind);
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'new-forge' },
    h('h2', { id: 'new-forge' }, 'New connection'),
    h('label', {}, h('span', {}, 'Forge'), kindSelect),
    h('label', {}, tokenLabel, h('input', { type: 'password', name: 'token', autocomplete: 'off' })),
    Object.values(optional),
    h('button', { type: 'submit' }, 'Add connection'),
    error,
  );
  showKind();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const value = (name) => (optional[name]?.hidden ? '' : form.elements.namedItem(name).value.trim());
    const body = { kind: kindSelect.value };
    for (const name of ['token', 'apiUrl', 'gitUrl', 'baseUrl']) if (value(name)) body[name] = value(name);
    if (value('appInstallationId')) body.appInstallationId = Number(value('appInstallationId'));
    try {
      const made = await post(base, body);
      await forgesPage(ctx, orgId, { id: made.id, webhookUrl: made.webhookUrl, webhookSecret: made.webhookSecret });
    } catch (err) {
      error.textContent = err.message;
    }
  });
  const deliveries = h('div');
  const showDeliveries = (id) => async () => {
    const { deliveries: list } = await get(`${base}/${enc(id)}/deliveries`);
    fill(deliveries, [
      h('h2', {}, `Deliveries of ${id}`),
      list.length
        ? table(['When', 'Event', 'Delivery', 'Outcome'], list, (d) => [when(d.receivedAt), [d.event, d.action].filter(Boolean).join('.'), d.id, [d.outcome, d.reason].filter(Boolean).join(': ')], {
            'data-testid': 'forge-deliveries',
          })
        : h('p', {}, 'No deliveries in the last 30 days.'),
    ]);
  };
  // Both change what the forge must be told: asked first, never on one click.
  const rotate = (id) => async () => {
    const yes = await confirmAction({
      title: `Rotate the webhook secret of ${id}?`,
      consequence: 'The current secret stops verifying at once: set the new one on the forge’s webhook.',
      action: 'Rotate',
    });
    if (!yes) return;
    try {
      const r = await post(`${base}/${enc(id)}/webhook-secret`);
      await forgesPage(ctx, orgId, r);
    } catch (err) {
      error.textContent = err.message;
    }
  };
  const remove = (id) => async () => {
    const yes = await confirmAction({ title: `Remove ${id}?`, consequence: 'Repositories named through it can no longer be reached, and its webhook deliveries are refused.', action: 'Remove' });
    if (!yes) return;
    try {
      await del(`${base}/${enc(id)}`);
      toast(`Connection ${id} removed`);
      await forgesPage(ctx, orgId);
    } catch (err) {
      error.textContent = err.message;
    }
  };
  show(
    h('h1', {}, `Forge connections · ${orgId}`),
    shown &&
      h(
        'section',
        { class: 'once', 'aria-labelledby': 'forge-secret' },
        h('h2', { id: 'forge-secret' }, `Webhook of ${shown.id}`),
        h(
          'p',
          {},
          'Set this URL and secret on the forge’s webhook (content type application/json; on GitLab the secret is the webhook’s token), unless docent registered it itself. The secret is shown this once:',
        ),
        h('code', { 'data-testid': 'forge-webhook-url' }, shown.webhookUrl),
        h('code', { 'data-testid': 'forge-webhook-secret' }, shown.webhookSecret),
      ),
    forges.length
      ? table(
          ['Connection', 'Forge', 'Credential', 'API', 'Git', 'Webhook URL', 'Added', ''],
          forges,
          (f) => [
            f.id,
            f.kind,
            f.credential === 'app' ? `App installation ${f.installationId}` : f.credential,
            f.apiUrl,
            f.gitUrl,
            f.webhookUrl,
            when(f.createdAt),
            h(
              'span',
              {},
              h('button', { type: 'button', class: 'secondary', onclick: showDeliveries(f.id), 'aria-label': `Deliveries of ${f.id}` }, 'Deliveries'),
              h('button', { type: 'button', class: 'secondary', onclick: rotate(f.id), 'aria-label': `Rotate the webhook secret of ${f.id}` }, 'Rotate the webhook secret'),
              h('button', { type: 'button', class: 'secondary', onclick: remove(f.id), 'aria-label': `Remove ${f.id}` }, 'Remove'),
            ),
          ],
          { 'data-testid': 'forges' },
        )
      : h('p', {}, 'No connections: repositories of this organization are refused unless the deployment shares its own credential with it.'),
    form,
    deliveries,
  );
}
