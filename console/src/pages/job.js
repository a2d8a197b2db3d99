import { call, enc, get, post } from '../api.js';
import { confirmAction } from '../confirm.js';
import { fill, h, show, table, toast, when } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { renderDiff } from './diff.js';
import { timelineEntry } from './job-timeline.js';

const usageText = (u) => `${u.inputTokens} in / ${u.outputTokens} out${u.costUsd !== undefined ? ` · $${u.costUsd.toFixed(4)}` : ''}`;

/**
 * One job, live: its event stream (Server-Sent Events with the cookie) appends to the timeline (each turn's model
 * calls, tool calls, commands, checks, commits and pull request, with their times) and reloads the job, so status,
 * plan, turns, checks, diff and pull request follow what the agent does.
 */
export async function jobPage(ctx, projectId, jobId) {
  const base = `/v2/agent/${enc(projectId)}/job/${enc(jobId)}`;
  const events = h('ol', { class: 'events timeline', 'data-testid': 'events', 'aria-label': 'Timeline', tabindex: 0 });
  // When each turn's attempt started: its turn.finished entry says how long it took.
  const turnStarts = new Map();
  const summary = h('div');
  const plan = h('div');
  const turns = h('div');
  const diffBox = h('div');
  const error = h('p', { class: 'error', role: 'alert' });
  let job;
  let source;
  let lastId = 0;
  let diffTurn = '';

  const act = (what, fn) => async () => {
    error.textContent = '';
    try {
      await fn();
      toast(what);
      await refresh();
      follow();
    } catch (err) {
      error.textContent = err.message;
    }
  };
  // A stop ends the running turn mid-step: asked first, with what it does.
  const stopAfterAsking = async () => {
    const consequence = 'The running turn ends now and the job is marked failed (stopped). Its pushed commits stay; a follow-up or Retry continues it.';
    if (await confirmAction({ title: 'Stop this turn?', consequence, action: 'Stop turn' })) await act('Stop requested', () => post(`${base}/stop`))();
  };

  async function loadDiff() {
    const text = await call('GET', `${base}/diff${diffTurn ? `?turn=${diffTurn}` : ''}`);
    const choose = h(
      'label',
      { class: 'inline' },
      h('span', {}, 'Diff of'),
      h(
        'select',
        {
          name: 'diff-turn',
          onchange: (e) => {
            diffTurn = e.target.value;
            void loadDiff();
          },
        },
        h('option', { value: '', selected: diffTurn === '' }, 'the whole job'),
        (job?.turns ?? []).map((t) => h('option', { value: String(t.turn), selected: diffTurn === String(t.turn) }, `turn ${t.turn}`)),
      ),
    );
    fill(diffBox, [h('h2', {}, 'Diff'), choose, renderDiff(text)]);
  }

  function renderJob() {
    fill(summary, [
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Status'),
        h('dd', { class: 'status', 'data-testid': 'job-status' }, job.awaitingApproval ? 'awaiting approval' : job.status),
        h('dt', {}, 'Model'),
        h('dd', {}, job.model),
        h('dt', {}, 'Branch'),
        h('dd', {}, job.branch),
        h('dt', {}, 'Origin'),
        h('dd', {}, job.automationId ? `${job.origin} (${job.automationId})` : job.origin),
        h('dt', {}, 'Instruction'),
        h('dd', { class: 'instruction', 'data-testid': 'job-instruction' }, job.turns?.[0]?.prompt ?? '—'),
        h('dt', {}, 'Pull request'),
        h('dd', {}, job.prLink ? h('a', { href: job.prLink, 'data-testid': 'pr-link' }, job.prLink) : '—'),
      ),
      job.error && h('p', { class: 'error', 'data-testid': 'job-error' }, `${job.error.code}: ${job.error.message}`),
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'button', class: 'danger', onclick: stopAfterAsking, disabled: job.status !== 'active' }, 'Stop'),
        h('button', { type: 'button', class: 'secondary', onclick: act('Retry started', () => post(`${base}/retry`)) }, 'Retry'),
      ),
    ]);
    if (job.requirePlanApproval) {
      const feedback = h('textarea', { name: 'feedback', id: 'plan-feedback' });
      fill(plan, [
        h('h2', {}, `Plan${job.planRevision ? ` (revision ${job.planRevision})` : ''}`),
        job.plan ? h('div', { class: 'plan markdown', 'data-testid': 'plan' }, renderMarkdown(job.plan)) : h('p', { class: 'muted' }, 'The agent is writing its plan…'),
        job.awaitingApproval &&
          h(
            'div',
            {},
            h('button', { type: 'button', onclick: act('Plan approved', () => post(`${base}/approve`, { revision: job.planRevision })) }, 'Approve plan'),
            h('label', { for: 'plan-feedback' }, h('span', {}, 'Ask for another plan')),
            feedback,
            h('button', { type: 'button', class: 'secondary', onclick: act('Revision asked', () => post(`${base}/message`, { prompt: feedback.value })) }, 'Send revision'),
          ),
      ]);
    }
    fill(turns, [
      h('h2', {}, 'Turns'),
      table(['Turn', 'Status', 'Instruction', 'Usage', 'Files', 'Checks', 'Pull request'], job.turns ?? [], (t) => [
        String(t.turn),
        t.status,
        t.prompt,
        usageText(t.usage),
        t.filesChanged.map((f) => `${f.path} +${f.additions} −${f.deletions}`).join('\n') || '—',
        t.checks.length ? t.checks.map((c) => h('details', {}, h('summary', {}, `${c.kind}: ${c.command} → ${c.exitCode}`), h('pre', {}, c.output))) : '—',
        t.prLink ? h('a', { href: t.prLink }, 'link') : '—',
      ]),
    ]);
  }

  async function refresh() {
    job = await get(base);
    renderJob();
    if (job.turns?.some((t) => t.filesChanged.length) || job.prLink) await loadDiff();
  }

  let pending;
  const refreshSoon = () => {
    clearTimeout(pending);
    pending = setTimeout(() => void refresh().catch((err) => (error.textContent = err.message)), 250);
  };

  /** Opens the event stream unless it is open; the server ends it when the job stops being active. */
  function follow() {
    if (source && source.readyState !== EventSource.CLOSED) return;
    source = new EventSource(`${base}/events?after=${lastId}`, { withCredentials: true });
    const onEvent = (m) => {
      const e = JSON.parse(m.data);
      if (e.id <= lastId) return;
      lastId = e.id;
      if (e.type === 'turn.started') turnStarts.set(e.turn, e.at);
      events.append(timelineEntry(e, turnStarts.get(e.turn)));
      events.scrollTop = events.scrollHeight;
      if (e.type === 'status' && e.data?.status !== 'active') source.close();
      refreshSoon();
    };
    for (const type of ['status', 'turn.started', 'step', 'check', 'egress', 'commit', 'pull_request', 'turn.finished', 'plan.ready', 'plan.revision', 'plan.approved'])
      source.addEventListener(type, onEvent);
    // A stream the server ended (the job is not active) is not reopened by the browser every two seconds.
    source.onerror = () => {
      if (job && job.status !== 'active') source.close();
    };
  }

  const message = h('textarea', { name: 'message', id: 'follow-up' });
  const messageForm = h(
    'form',
    { class: 'box', 'aria-labelledby': 'follow-up-title' },
    h('h2', { id: 'follow-up-title' }, 'Follow-up'),
    h('label', { for: 'follow-up' }, h('span', {}, 'Instruction for the same branch and pull request')),
    message,
    h('button', { type: 'submit' }, 'Send follow-up'),
  );
  messageForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void act('Follow-up sent', () => post(`${base}/message`, { prompt: message.value }))();
  });

  job = await get(base);
  renderJob();
  show(
    h('h1', {}, 'Job ', h('span', { 'data-testid': 'job-id' }, jobId)),
    h(
      'p',
      {},
      h('a', { href: `#/p/${enc(projectId)}/jobs` }, '← all jobs'),
      ` · created ${when(job.createdAt)}`,
      ctx.session?.temporalWorkflowsUrl && [' · ', h('a', { href: `${ctx.session.temporalWorkflowsUrl}/${enc(`agent-job-${jobId}`)}`, 'data-testid': 'workflow-link' }, 'workflow in the Temporal UI')],
    ),
    error,
    summary,
    plan,
    h('h2', {}, 'Timeline'),
    events,
    turns,
    diffBox,
    messageForm,
  );
  if (job.turns?.some((t) => t.filesChanged.length) || job.prLink) await loadDiff();
  follow();
  ctx.onLeave(() => {
    clearTimeout(pending);
    source?.close();
  });
}
