import { enc, get, post } from '../api.js';
import { field, fill, formValues, h, select, show, table, toast, when } from '../dom.js';

const triggerText = (t) =>
  ({
    schedule: () => `schedule ${t.cron} (${t.timeZone})`,
    push: () => `push to ${t.branch}${t.repo ? ` of ${t.repo}` : ''}`,
    merged_pull_request: () => `merged pull request in ${t.repo}`,
    issue: () => `issue${t.label ? ` labelled ${t.label}` : ''}`,
    unanswered_questions: () => `${t.threshold} unanswered questions`,
    manual: () => 'manual',
  })[t.type]?.() ?? t.type;

/** A project's automations: what starts them, pause and resume, run now, and each one's runs with the jobs they started. */
export async function automationsPage(ctx, projectId) {
  const base = `/v2/agent/${enc(projectId)}/automations`;
  const { automations } = await get(base);
  const error = h('p', { class: 'error', role: 'alert' });
  const runs = h('div');
  const act = (what, fn) => async () => {
    try {
      await fn();
      toast(what);
      await automationsPage(ctx, projectId);
    } catch (err) {
      error.textContent = err.message;
    }
  };
  const showRuns = (a) => async () => {
    const { runs: list } = await get(`${base}/${enc(a.id)}/runs?limit=50`);
    fill(runs, [
      h('h2', {}, `Runs of ${a.name}`),
      h('p', {}, h('a', { href: `#/p/${enc(projectId)}/jobs?automationId=${enc(a.id)}` }, 'Its jobs in the job list')),
      list.length
        ? table(
            ['When', 'Event', 'Status', 'Job', 'Reason'],
            list,
            (r) => [when(r.createdAt), r.eventKey, r.status, r.jobId ? h('a', { href: `#/p/${enc(projectId)}/jobs/${enc(r.jobId)}` }, r.jobId) : '—', r.reason ?? '—'],
            { 'data-testid': 'runs' },
          )
        : h('p', {}, 'No runs yet.'),
    ]);
  };
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'new-automation' },
    h('h2', { id: 'new-automation' }, 'New automation'),
    field('Name', { name: 'name', required: true }),
    field('Instruction', { name: 'instruction', multiline: true, required: true }),
    select('Trigger', 'type', [
      ['manual', 'manual (Run now)'],
      ['schedule', 'schedule'],
    ]),
    field('Cron (schedule only, e.g. 0 6 * * 1)', { name: 'cron' }),
    field('Time zone (schedule only)', { name: 'timeZone', value: 'UTC' }),
    select('Output', 'output', [
      ['pull_request', 'a new pull request each run'],
      ['update_pull_request', 'update its open pull request'],
    ]),
    h('button', { type: 'submit' }, 'Create automation'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const v = formValues(form);
    const trigger = v.type === 'schedule' ? { type: 'schedule', cron: v.cron, timeZone: v.timeZone || 'UTC' } : { type: 'manual' };
    await act('Automation created', () => post(base, { name: v.name, instruction: v.instruction, output: v.output, trigger }))();
  });
  show(
    h('h1', {}, `Automations · ${projectId}`),
    error,
    automations.length
      ? table(
          ['Name', 'Trigger', 'State', 'Failures in a row', 'Last error', ''],
          automations,
          (a) => [
            a.name,
            triggerText(a.trigger),
            a.paused ? 'paused' : 'active',
            String(a.consecutiveFailures),
            a.lastError ? `${a.lastError.message} (${when(a.lastError.at)})` : '—',
            h(
              'div',
              { class: 'row' },
              h('button', { type: 'button', onclick: act('Run started', () => post(`${base}/${enc(a.id)}/trigger`)), 'aria-label': `Run now: ${a.name}` }, 'Run now'),
              a.paused
                ? h('button', { type: 'button', class: 'secondary', onclick: act('Resumed', () => post(`${base}/${enc(a.id)}/resume`)), 'aria-label': `Resume ${a.name}` }, 'Resume')
                : h('button', { type: 'button', class: 'secondary', onclick: act('Paused', () => post(`${base}/${enc(a.id)}/pause`)), 'aria-label': `Pause ${a.name}` }, 'Pause'),
              h('button', { type: 'button', class: 'secondary', onclick: showRuns(a), 'aria-label': `Runs of ${a.name}` }, 'Runs'),
            ),
          ],
          { 'data-testid': 'automations' },
        )
      : h('p', {}, 'No automations.'),
    runs,
    form,
  );
}
