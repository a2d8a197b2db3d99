import { gapCheckComment, gapCommentMarker } from '../../activities/gap-check-comment';
import type { GapCheckResult } from '../../workflows/docs-gap-check-contract';

const result = (question: string): GapCheckResult => ({
  turn: 2,
  commit: '0123456789abcdef0123',
  previewIndex: 'x-docs-preview-job_1.gaps.docent',
  checkedAt: new Date(0).toISOString(),
  fixed: 1,
  questions: [{ question, before: { relevance: 0.21, answered: false, topPath: null }, after: { relevance: 0.71, answered: true, topPath: 'guides/billing' } }],
});

describe('the gap check comment on a pull request', () => {
  it('starts with the marker of its job turn and shows each question before and after', () => {
    const body = gapCheckComment('job_1', result('Can we pay by invoice?'));
    expect(body.startsWith(gapCommentMarker('job_1', 2))).toBe(true);
    expect(body).toContain('1 of 1 unanswered questions answered by this branch');
    expect(body).toContain('| Can we pay by invoice? | not answered (relevance 0.21) | answered (relevance 0.71, guides/billing) |');
  });

  it('keeps a reader’s question from breaking the table, injecting HTML or mentioning anyone', () => {
    const row = gapCheckComment('job_1', result('a | b <img src=x onerror=alert(1)> ping @octocat `code`')).split('\n').at(-1)!;
    // Three cells: the unescaped pipes are the table's own.
    expect(row.split(/(?<!\\)\|/).filter((c) => c.trim())).toHaveLength(3);
    // Markdown shows a backslash-escaped < as text: no tag can open.
    expect(row).not.toMatch(/(?<!\\)</);
    expect(row).not.toMatch(/@octocat/);
  });
});
