import { enc, get } from '../api.js';
import { h, table, when } from '../dom.js';

const days = 14;
const maxPages = 5;
const dayOf = (iso) => iso.slice(0, 10);

/**
 * Questions per day over the last two weeks, answered or not, counted from the conversation export (at most 500
 * conversations read), and the newest conversations with each answer's kind.
 */
export async function volumeOverTime(projectId) {
  const from = new Date(Date.now() - (days - 1) * 86_400_000);
  from.setUTCHours(0, 0, 0, 0);
  const conversations = [];
  let cursor;
  let truncated = false;
  for (let page = 0; page < maxPages; page++) {
    const body = await get(`/v2/agent/${enc(projectId)}/analytics/assistant?from=${enc(from.toISOString())}&limit=100${cursor ? `&cursor=${enc(cursor)}` : ''}`);
    conversations.push(...body.conversations);
    cursor = body.nextCursor;
    if (!cursor) break;
    truncated = page === maxPages - 1;
  }
  const perDay = new Map();
  for (let i = 0; i < days; i++) perDay.set(dayOf(new Date(from.getTime() + i * 86_400_000).toISOString()), { answered: 0, notInDocs: 0 });
  for (const c of conversations) {
    for (const t of c.turns) {
      const day = perDay.get(dayOf(t.at));
      if (day) day[t.kind === 'not_in_docs' ? 'notInDocs' : 'answered']++;
    }
  }
  const rows = [...perDay].map(([day, n]) => ({ day, ...n, total: n.answered + n.notInDocs }));
  const most = Math.max(1, ...rows.map((r) => r.total));
  const bar = (r) => h('span', { class: 'bar', dataset: { width: String(Math.round((r.total / most) * 100)) }, 'aria-hidden': 'true' });
  const chart = table(['Day', 'Questions', 'Answered', 'Not in the docs', ''], rows, (r) => [r.day, String(r.total), String(r.answered), String(r.notInDocs), bar(r)], { 'data-testid': 'per-day' });
  // Widths are set from script (the page's CSP allows no inline style attributes in markup).
  for (const el of chart.querySelectorAll('.bar')) el.style.width = `${el.dataset.width * 2}px`;
  const recent = conversations.slice(0, 10).flatMap((c) => c.turns.map((t) => ({ ...t, threadId: c.threadId })));
  return [
    h('h2', {}, 'Questions per day'),
    truncated && h('p', { class: 'muted' }, 'Counted from the newest 500 conversations only.'),
    chart,
    h('h2', {}, 'Newest conversations'),
    recent.length
      ? table(
          ['When', 'Question', 'Kind', 'Feedback'],
          recent,
          (t) => [when(t.at), t.question, t.kind.replaceAll('_', ' '), t.feedback ? `${t.feedback.rating}${t.feedback.comment ? `: ${t.feedback.comment}` : ''}` : '—'],
          { 'data-testid': 'conversations' },
        )
      : h('p', {}, 'None.'),
  ];
}
