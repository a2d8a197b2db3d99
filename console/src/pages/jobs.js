import { enc, get, post } from '../api.js';
import { field, formValues, h, select, show, table, when } from '../dom.js';

const statuses = [
  ['', 'any'],
  ['active', 'active'],
  ['completed', 'completed'],
  ['failed', 'failed'],
  ['archived', 'archived'],
];
// src/jobs/job.ts jobOrigins.
const origins = [
  ['', 'any'],
  ...['api', 'pull_request_comment', 'issue', 'schedule', 'push', 'merged_pull_request', 'unanswered_questions', 'automation_manual'].map((o) => [o, o.replaceAll('_', ' ')]),
];

/**
 * A project's jobs, newest first: status, origin and automation filter on the server; model and date filter the
 * page read (the list API has no such filters).
 */
export async function jobsPage(_ctx, projectId) {
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const query = new URLSearchParams({ limit: '50' });
  for (const name of ['status', 'origin', 'automationId']) if (params.get(name)) query.set(name, params.get(name));
  const [{ jobs }, { models }] = await Promise.all([get(`/v2/agent/${enc(projectId)}/jobs?${query}`), get(`/v2/agent/${enc(projectId)}/models`).catch(() => ({ models: [] }))]);
  const model = params.get('model') ?? '';
  const since = params.get('since') ?? '';
  const shown = jobs.filter((j) => (!model || j.model === model) && (!since || j.createdAt >= since));
  const filters = h(
    'form',
    { class: 'box filters', 'aria-label': 'Filter jobs' },
    select('Status', 'status', statuses, params.get('status') ?? ''),
    select('Origin', 'origin', origins, params.get('origin') ?? ''),
    field('Automation id', { name: 'automationId', value: params.get('automationId') ?? '' }),
    select('Model', 'model', [['', 'any'], ...models.map((m) => [m.id, m.id])], model),
    field('Created since', { name: 'since', type: 'date', value: since }),
    h('button', { type: 'submit' }, 'Filter'),
  );
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = new URLSearchParams(Object.entries(formValues(filters)).filter(([, v]) => v !== ''));
    location.hash = `#/p/${enc(projectId)}/jobs?${chosen}`;
  });
  const error = h('p', { class: 'error', role: 'alert' });
  const create = h(
    'form',
    { class: 'box', 'aria-labelledby': 'new-job' },
    h('h2', { id: 'new-job' }, 'New job'),
    field('Instruction', { name: 'prompt', multiline: true, required: true }),
    h('label', { class: 'inline' }, h('input', { type: 'checkbox', name: 'requirePlanApproval' }), h('span', {}, 'Plan first, edit once I approve')),
    h('button', { type: 'submit' }, 'Start job'),
    error,
  );
  create.addEventListener('submit', async (e) => {
    e.preventDefault();
    const v = formValues(create);
    try {
      const job = await post(`/v2/agent/${enc(projectId)}/job`, { prompt: v.prompt, ...(v.requirePlanApproval === 'on' && { requirePlanApproval: true }) });
      location.hash = `#/p/${enc(projectId)}/jobs/${enc(job.id)}`;
    } catch (err) {
      error.textContent = err.message;
    }
  });
  show(
    h('h1', {}, `Jobs · ${projectId}`),
    filters,
    shown.length
      ? table(
          ['Job', 'Status', 'Origin', 'Model', 'Turn', 'Pull request', 'Created'],
          shown,
          (j) => [
            h('a', { href: `#/p/${enc(projectId)}/jobs/${enc(j.id)}` }, j.id),
            j.awaitingApproval ? 'awaiting approval' : j.status,
            j.automationId ? `${j.origin} (${j.automationId})` : j.origin,
            j.model,
            String(j.turn),
            j.prLink ? h('a', { href: j.prLink }, 'pull request') : '—',
            when(j.createdAt),
          ],
          { 'data-testid': 'jobs' },
        )
      : h('p', {}, 'No jobs match.'),
    create,
  );
}
