import { h } from '../dom.js';
import { renderMarkdown } from '../markdown.js';

// One job event as an entry of the job page's timeline (docs/agent-jobs.md, "Events", says what each one carries).

/** A duration as a person reads it: 840 ms, 3.2 s, 2 min 5 s. */
export function duration(ms) {
  if (typeof ms !== 'number' || Number.isNaN(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

const clock = (iso) => h('time', { datetime: iso, title: new Date(iso).toLocaleString() }, new Date(iso).toLocaleTimeString());
const usd = (n) => (typeof n === 'number' ? `$${n < 0.01 ? n.toPrecision(2) : n.toFixed(4)}` : undefined);
const joined = (...parts) => parts.filter((p) => p !== undefined && p !== null && p !== '').join(' · ');
const took = (d) => h('span', { class: 'took' }, duration(d.durationMs));
const output = (text, label = 'Output') => typeof text === 'string' && text !== '' && h('details', { class: 'output' }, h('summary', {}, label), h('pre', { tabindex: 0 }, text));

function modelCall(d) {
  const tokens = `${d.inputTokens ?? 0} in / ${d.outputTokens ?? 0} out tokens`;
  const tools = d.toolCalls ? `${d.toolCalls} tool call${d.toolCalls === 1 ? '' : 's'}` : 'answered';
  return [h('strong', {}, `Model call ${d.step ?? ''}`.trim()), ` ${joined(tokens, usd(d.costUsd), tools)} · `, took(d)];
}

/** The arguments worth a glance besides the path (a command is shown on its own). */
const otherArgs = (args = {}) =>
  Object.entries(args)
    .filter(([name]) => name !== 'path' && name !== 'command' && name !== 'folder')
    .map(([name, value]) => `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');

function toolCall(d) {
  if (d.tool === 'run_command') {
    const exit = d.stoppedBy ? `stopped (${d.stoppedBy})` : d.exitCode !== undefined ? `exit ${d.exitCode}` : undefined;
    return [h('strong', {}, 'Ran '), h('code', { class: 'command' }, d.args?.command ?? 'a command'), ` ${joined(exit)}`, d.durationMs !== undefined && [' · ', took(d)], output(d.output)];
  }
  const rest = otherArgs(d.args);
  return [
    h('strong', {}, d.tool),
    d.path && [' ', h('code', {}, d.path)],
    rest && ` (${rest})`,
    d.durationMs !== undefined && [' · ', took(d)],
    d.error && h('span', { class: 'error' }, ` ${d.error}`),
  ];
}

const check = (d) => [
  h('strong', {}, d.kind === 'setup' ? 'Setup ' : 'Check '),
  h('code', { class: 'command' }, d.command),
  ` ${d.stoppedBy ? `stopped (${d.stoppedBy})` : `exit ${d.exitCode}`}${d.cache ? ` (${d.cache})` : ''} · `,
  took(d),
  output(d.output),
];

const egress = (d) => (d.summary ? String(d.summary) : `${d.method ?? ''} ${d.host}:${d.port} ${d.allowed ? 'allowed' : `refused ${d.reason ?? ''}`}`);

/** The entry's content; `turnStart` is when its turn's attempt started (for the turn's duration). */
function content(e, turnStart) {
  const d = e.data ?? {};
  switch (e.type) {
    case 'turn.started':
      return [h('h3', {}, `Turn ${e.turn}${d.attempt > 1 ? ` (attempt ${d.attempt})` : ''}`), h('p', { class: 'instruction' }, d.prompt)];
    case 'status':
      return `Status: ${d.status}${d.by ? ` (${String(d.by).replaceAll('_', ' ')})` : ''}`;
    case 'step':
      return d.kind === 'model' ? modelCall(d) : toolCall(d);
    case 'check':
      return check(d);
    case 'egress':
      return `Network: ${egress(d)}`;
    case 'commit':
      return [
        h('strong', {}, 'Commit '),
        h('code', {}, String(d.sha ?? '').slice(0, 12)),
        Array.isArray(d.filesChanged) &&
          h(
            'ul',
            { class: 'files' },
            d.filesChanged.map((f) => h('li', {}, h('code', {}, f.path), ` +${f.additions} −${f.deletions}`)),
          ),
      ];
    case 'pull_request':
      return [h('strong', {}, 'Pull request '), h('a', { href: d.url }, d.url)];
    case 'turn.finished': {
      const u = d.usage;
      const tokens = u && `${u.inputTokens} in / ${u.outputTokens} out tokens`;
      const length = turnStart && `took ${duration(Date.parse(e.at) - Date.parse(turnStart))}`;
      const facts = joined(length, tokens, usd(u?.costUsd));
      return [h('strong', {}, `Turn ${e.turn} ${d.status}`), facts && ` · ${facts}`, d.error && h('span', { class: 'error' }, ` ${d.error.code}: ${d.error.message}`)];
    }
    case 'plan.ready':
      return [h('strong', {}, `Plan, revision ${d.revision}`), h('details', { class: 'output' }, h('summary', {}, 'The plan'), h('div', { class: 'markdown' }, renderMarkdown(d.plan)))];
    case 'plan.revision':
      return [h('strong', {}, `Another plan asked (revision ${d.revision}): `), d.feedback ?? ''];
    case 'plan.approved':
      return h('strong', {}, `Plan revision ${d.revision} approved`);
    default:
      return e.type;
  }
}

/** A list item for one event: its time (a step's own start when it has one) and what it says. */
export function timelineEntry(e, turnStart) {
  const d = e.data ?? {};
  const at = typeof d.startedAt === 'string' ? d.startedAt : e.at;
  return h('li', { dataset: { type: e.type, ...(d.kind ? { kind: d.kind } : {}), id: String(e.id) } }, clock(at), ' ', content(e, turnStart));
}
