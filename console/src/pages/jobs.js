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

/** How long ago, as a person says it: "3 min ago", "2 h ago", "5 days ago". */
function age(iso) {
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  const [n, unit] = s < 60 ? [Math.round(s), 's'] : s < 3600 ? [Math.round(s / 60), 'min'] : s < 86_400 ? [Math.round(s / 3600), 'h'] : [Math.round(s / 86_400), 'days'];
  return h('time', { datetime: iso, title: when(iso) }, `${n} ${unit} ago`);
}

/** How the job ended, or where it is: its pull request, no change, or the error's code. */
function outcome(j) {
  if (j.awaitingApproval) return 'awaiting approval';
  if (j.status === 'failed') return `failed${j.error?.code ? ` (${j.error.code})` : ''}`;
  if (j.prLink) return [`${j.status}: `, h('a', { href: j.prLink }, 'pull request')];
  if (j.status === 'completed') return 'completed: no change';
  return j.status;
}

/** The list's query in the page's address: the server filters (and pages), the page keeps the rest. */
const serverFilters = ['status', 'origin', 'automationId', 'instruction', 'cursor', 'limit'];

/**
 * A project's jobs, newest first, each with its instruction, outcome, origin and age: status, origin, automation,
 * instruction text and creation date filter on the server, which pages through them; model filters the page read.
 */
export async function jobsPage(_ctx, projectId) {
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const query = new URLSearchParams({ limit: '50' });
  for (const name of serverFilters) if (params.get(name)) query.set(name, params.get(name));
  const since = params.get('since') ?? '';
  // A date is the start of that day where the reader is.
  if (since) query.set('createdAfter', new Date(`${since}T00:00:00`).toISOString());
  const [{ jobs, nextCursor }, { models }] = await Promise.all([get(`/v2/agent/${enc(projectId)}/jobs?${query}`), get(`/v2/agent/${enc(projectId)}/models`).catch(() => ({ models: [] }))]);
  const model = params.get('model') ?? '';
  const shown = jobs.filter((j) => !model || j.model === model);
  const filters = h(
    'form',
    { class: 'box filters', 'aria-label': 'Filter jobs' },
    select('Status', 'status', statuses, params.get('status') ?? ''),
    select('Origin', 'origin', origins, params.get('origin') ?? ''),
    field('Automation id', { name: 'automationId', value: params.get('automationId') ?? '' }),
    field('Instruction contains', { name: 'instruction', value: params.get('instruction') ?? '', maxlength: 200 }),
    select('Model', 'model', [['', 'any'], ...models.map((m) => [m.id, m.id])], model),
    field('Created since', { name: 'since', type: 'date', value: since }),
    h('button', { type: 'submit' }, 'Filter'),
  );
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = new URLSearchParams(Object.entries(formValues(filters)).filter(([, v]) => v !== ''));
    location.hash = `#/p/${enc(projectId)}/jobs?${chosen}`;
  });
  const pageHref = (cursor) => {
    const next = new URLSearchParams(params);
    if (cursor) next.set('cursor', cursor);
    else next.delete('cursor');
    return `#/p/${enc(projectId)}/jobs${next.size ? `?${next}` : ''}`;
  };
  // Shown only when there is another page to go to.
  const paging =
    (params.get('cursor') || nextCursor) &&
    h(
      'nav',
      { class: 'row', 'aria-label': 'Pages of jobs' },
      params.get('cursor') && h('a', { href: pageHref(undefined) }, 'Newest jobs'),
      nextCursor && h('a', { href: pageHref(nextCursor), 'data-testid': 'older-jobs' }, 'Older jobs'),
    );
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
          ['Job', 'Instruction', 'Outcome', 'Origin', 'Age', 'Model', 'Turn'],
          shown,
          (j) => [
            h('a', { href: `#/p/${enc(projectId)}/jobs/${enc(j.id)}` }, j.id),
            h('span', { class: 'instruction' }, j.instruction ?? ''),
            outcome(j),
            j.automationId ? `${j.origin} (${j.automationId})` : j.origin,
            age(j.createdAt),
            j.model,
            String(j.turn),
          ],
          { 'data-testid': 'jobs' },
        )
      : h('p', {}, 'No jobs match.'),
    paging,
    create,
  );
}
