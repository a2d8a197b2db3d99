import { enc, get, post } from '../api.js';
import { h, show, table, toast, when } from '../dom.js';
import { volumeOverTime } from './volume.js';

const group = (g) => [g.question, String(g.count), (g.variants ?? []).join(' · ') || '—'];

/**
 * What readers asked: volume, unanswered and down-rated questions (grouped by meaning), with the gap loop's "fix
 * with the agent"; feedback by page; search queries with hits and click-through.
 */
export async function analyticsPage(_ctx, projectId) {
  const [report, searches, feedback, overTime] = await Promise.all([
    get(`/v2/agent/${enc(projectId)}/analytics?since=30d`),
    get(`/v2/agent/${enc(projectId)}/analytics/searches`),
    get(`/v2/agent/${enc(projectId)}/analytics/feedback/by-page`),
    volumeOverTime(projectId),
  ]);
  const error = h('p', { class: 'error', role: 'alert' });
  const fix = async () => {
    try {
      const { job } = await post(`/v2/agent/${enc(projectId)}/gaps/fix`, { since: '30d' });
      toast(`Gap job ${job.id} started`);
      location.hash = `#/p/${enc(projectId)}/jobs/${enc(job.id)}`;
    } catch (err) {
      error.textContent = err.message;
    }
  };
  const v = report.volume;
  show(
    h('h1', {}, `Analytics · ${projectId}`),
    h('p', { class: 'muted' }, `Docs domain ${report.domain}, last 30 days.`),
    h('h2', {}, 'Volume'),
    table(['Questions', 'Threads', 'Answered', 'Not in the docs', 'Rated up', 'Rated down'], [v], (x) => [x.questions, x.threads, x.answered, x.unanswered, x.ratedUp, x.ratedDown].map(String), {
      'data-testid': 'volume',
    }),
    overTime,
    h('h2', {}, 'Unanswered questions'),
    report.unanswered.length ? table(['Question', 'Asked', 'Also asked as'], report.unanswered, group, { 'data-testid': 'unanswered' }) : h('p', {}, 'None.'),
    report.unanswered.length > 0 && h('button', { type: 'button', onclick: fix }, 'Fix with the agent'),
    error,
    h('h2', {}, 'Down-rated answers'),
    report.downRated.length ? table(['Question', 'Comment', 'When'], report.downRated, (d) => [d.question, d.comment ?? '—', when(d.at)]) : h('p', {}, 'None.'),
    h('h2', {}, 'Top questions'),
    report.topQuestions.length ? table(['Question', 'Asked', 'Also asked as'], report.topQuestions, group) : h('p', {}, 'None.'),
    h('h2', {}, 'Search queries'),
    searches.queries.length
      ? table(
          ['Query', 'Searches', 'Hits', 'Clicks', 'Click-through', 'Top clicked page', 'Last searched'],
          searches.queries,
          (q) => [
            q.query,
            String(q.searches),
            String(q.hits),
            String(q.clicks),
            `${Math.round(q.clickThrough * 100)}%`,
            q.topClickedPage ? `${q.topClickedPage.path} (${q.topClickedPage.clicks})` : '—',
            when(q.lastSearchedAt),
          ],
          { 'data-testid': 'searches' },
        )
      : h('p', {}, 'No searches.'),
    h('h2', {}, 'Feedback by page'),
    feedback.pages.length ? table(['Page', 'Up', 'Down'], feedback.pages, (p) => [p.path, String(p.up), String(p.down)], { 'data-testid': 'feedback' }) : h('p', {}, 'No ratings.'),
  );
}
