import { del, enc, get, patch, post } from '../api.js';
import { confirmAction } from '../confirm.js';
import { field, fill, formValues, h, lines, select, show, table, toast, when } from '../dom.js';

const triggerText = (t) =>
  ({
    schedule: () => `schedule ${t.cron} (${t.timeZone})`,
    push: () => `push to ${t.branch}${t.repo ? ` of ${t.repo}` : ''}`,
    merged_pull_request: () => `merged pull request in ${t.repo}`,
    issue: () => `issue${t.label ? ` labelled ${t.label}` : ''}`,
    unanswered_questions: () => `${t.threshold} unanswered questions`,
    manual: () => 'manual',
  })[t.type]?.() ?? t.type;

/** `owner/name` or `owner/name@ref`, one a line, as the API's contextRepositories. */
const contextOf = (text) =>
  lines(text).map((l) => {
    const [repo, ref] = l.split('@');
    return ref ? { repo, ref } : { repo };
  });

/** A form that changes every field of an automation (the trigger as JSON, since each kind has its own fields). */
function editForm(base, a, done) {
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'edit-automation' },
    h('h2', { id: 'edit-automation' }, `Edit ${a.name}`),
    field('Name', { name: 'name', required: true, value: a.name }),
    field('Instruction', { name: 'instruction', multiline: true, required: true }),
    field('Trigger (JSON: schedule, push, merged_pull_request, issue, unanswered_questions or manual)', { name: 'trigger', multiline: true, required: true }),
    select(
      'Output',
      'output',
      [
        ['pull_request', 'a new pull request each run'],
        ['update_pull_request', 'update its open pull request'],
      ],
      a.output,
    ),
    field('Model (empty: the server default)', { name: 'model', value: a.model ?? '' }),
    h('label', { class: 'inline' }, h('input', { type: 'checkbox', name: 'requirePlanApproval', checked: a.requirePlanApproval === true }), h('span', {}, 'Plan first, edit once approved')),
    field('Context repositories (owner/name or owner/name@ref, one a line)', { name: 'contextRepositories', multiline: true }),
    h('button', { type: 'submit' }, 'Save automation'),
    error,
  );
  form.elements.namedItem('instruction').value = a.instruction;
  form.elements.namedItem('trigger').value = JSON.stringify(a.trigger, null, 2);
  form.elements.namedItem('contextRepositories').value = (a.contextRepositories ?? []).map((r) => (r.ref ? `${r.repo}@${r.ref}` : r.repo)).join('\n');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const v = formValues(form);
    try {
      let trigger;
      try {
        trigger = JSON.parse(v.trigger);
      } catch {
        throw new Error('trigger: not valid JSON');
      }
      await patch(`${base}/${enc(a.id)}`, {
        name: v.name,
        instruction: v.instruction,
        trigger,
        output: v.output,
        ...(v.model && { model: v.model }),
        requirePlanApproval: v.requirePlanApproval === 'on',
        contextRepositories: contextOf(v.contextRepositories),
      });
      await done('Automation saved');
    } catch (err) {
      error.textContent = err.message;
    }
  });
  return form;
}

/** A project's automations: what starts them, pause and resume, run now, edit, delete, and each one's runs with the jobs they started. */
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
  const edit = (a) => () => {
    fill(
      runs,
      editForm(base, a, async (what) => {
        toast(what);
        await automationsPage(ctx, projectId);
      }),
    );
    runs.querySelector('input')?.focus();
  };
  const remove = (a) => async () => {
    const yes = await confirmAction({
      title: `Delete the automation ${a.name}?`,
      consequence: 'Its schedule or trigger stops for good and its run history is deleted. The jobs it started stay. This cannot be undone.',
      action: 'Delete automation',
    });
    if (yes) await act(`Automation ${a.name} deleted`, () => del(`${base}/${enc(a.id)}`))();
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
              h('button', { type: 'button', class: 'secondary', onclick: edit(a), 'aria-label': `Edit ${a.name}` }, 'Edit'),
              h('button', { type: 'button', class: 'danger', onclick: remove(a), 'aria-label': `Delete ${a.name}` }, 'Delete'),
            ),
          ],
          { 'data-testid': 'automations' },
        )
      : h('p', {}, 'No automations.'),
    runs,
    form,
  );
}
