import { enc, get, post } from '../api.js';
import { field, fill, h, show, table, toast, when } from '../dom.js';

/** A project's webhook endpoints, their deliveries and redelivery; a new endpoint's secret is shown once. */
export async function webhooksPage(ctx, projectId, made) {
  const base = `/v2/agent/${enc(projectId)}/webhooks`;
  const { webhooks } = await get(base);
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'new-webhook' },
    h('h2', { id: 'new-webhook' }, 'New endpoint'),
    field('URL', { name: 'url', required: true }),
    h('button', { type: 'submit' }, 'Add endpoint'),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await webhooksPage(ctx, projectId, await post(base, { url: form.elements.namedItem('url').value }));
    } catch (err) {
      error.textContent = err.message;
    }
  });
  const deliveries = h('div');
  const showDeliveries = (id) => async () => {
    const { deliveries: list } = await get(`${base}/${enc(id)}/deliveries`);
    const redeliver = (messageId) => async () => {
      try {
        await post(`${base}/${enc(id)}/redeliver`, { messageId });
        toast('Redelivery started');
      } catch (err) {
        error.textContent = err.message;
      }
    };
    fill(deliveries, [
      h('h2', {}, `Deliveries of ${id}`),
      list.length
        ? table(
            ['When', 'Event', 'Message', 'Attempt', 'Answer', ''],
            list,
            (d) => [
              when(d.at),
              d.type,
              d.messageId,
              String(d.attempt),
              d.status === null ? (d.error ?? 'no answer') : `${d.status}${d.ok ? '' : ' (failed)'}`,
              h('button', { type: 'button', class: 'secondary', onclick: redeliver(d.messageId), 'aria-label': `Redeliver ${d.messageId}` }, 'Redeliver'),
            ],
            { 'data-testid': 'deliveries' },
          )
        : h('p', {}, 'No deliveries yet.'),
    ]);
  };
  show(
    h('h1', {}, `Webhooks · ${projectId}`),
    made &&
      h(
        'section',
        { class: 'once', 'aria-labelledby': 'made-hook' },
        h('h2', { id: 'made-hook' }, `Endpoint ${made.id}`),
        h('p', {}, 'Its signing secret, shown this once:'),
        h('code', { 'data-testid': 'webhook-secret' }, made.secret),
      ),
    webhooks.length
      ? table(['Endpoint', 'URL', 'Events', 'Created', ''], webhooks, (w) => [
          w.id,
          w.url,
          w.events.join(', ') || 'all',
          when(w.createdAt),
          h('button', { type: 'button', class: 'secondary', onclick: showDeliveries(w.id), 'aria-label': `Deliveries of ${w.id}` }, 'Deliveries'),
        ])
      : h('p', {}, 'No endpoints.'),
    form,
    deliveries,
  );
}

/** GitHub webhook deliveries about the project's repository, and what docent did with each. */
export async function githubPage(_ctx, projectId) {
  const body = await get(`/v2/agent/${enc(projectId)}/github/deliveries`);
  const list = body.deliveries ?? [];
  show(
    h('h1', {}, `GitHub deliveries · ${projectId}`),
    list.length
      ? table(['When', 'Event', 'Delivery', 'Outcome'], list, (d) => [
          when(d.receivedAt ?? d.at),
          [d.event, d.action].filter(Boolean).join('.'),
          d.id ?? d.deliveryId ?? '—',
          [d.outcome, d.reason].filter(Boolean).join(': ') || '—',
        ])
      : h('p', {}, 'No deliveries in the last 30 days.'),
  );
}
