// Readers typed the questions: in a table cell they must not break the table, link, show an image or @-mention anyone.
import { inertTableCell } from '../src/github/inert-markdown';
import type { GapAnswer, GapCheckResult } from '../workflows/docs-gap-check-contract';

/** Identifies docent's comment for one job turn, so a retried activity finds it instead of posting a second. */
export const gapCommentMarker = (jobId: string, turn: number) => `<!-- docent-gap-check ${jobId} turn ${turn} -->`;

const show = (a: GapAnswer) => `${a.answered ? 'answered' : 'not answered'} (relevance ${a.relevance === null ? 'n/a' : a.relevance.toFixed(2)}${a.topPath ? `, ${a.topPath}` : ''})`;

/** The pull request comment: each question before (live docs) and after (this branch's docs). */
export function gapCheckComment(jobId: string, r: GapCheckResult): string {
  return [
    gapCommentMarker(jobId, r.turn),
    `### docent gap check: ${r.fixed} of ${r.questions.length} unanswered questions answered by this branch`,
    '',
    `Readers' questions re-asked against the live docs and against this branch's docs (commit ${r.commit.slice(0, 12)}).`,
    '',
    '| question | live docs | this branch |',
    '|---|---|---|',
    ...r.questions.map((q) => `| ${inertTableCell(q.question)} | ${show(q.before)} | ${show(q.after)} |`),
  ].join('\n');
}
