// An issue's job (an `issue` automation's run): its pull request says `Fixes #N`, and the issue is answered with the
// pull request's link once it opens.
import type { JobLedger } from '../../src/jobs/ledger';
import type { JobIssue } from '../../src/jobs/job';
import type { ForgeRepository } from '../../src/forges/forge';
import { statusOf } from '../../src/github/github-errors';

const issueAnswerMarker = (jobId: string) => `<!-- docent:answer job=${jobId} issue -->`;

/** The line that makes GitHub close the issue when the pull request merges (the job works in the issue's repository). */
export const closingLine = (issue: JobIssue) => `\n\nFixes #${issue.number}`;

/** The job the branch names and its issue; null for any other branch or a job that answers no issue. */
export async function issueOfBranch(ledger: Pick<JobLedger, 'jobs'>, prefix: string, branch: string): Promise<{ jobId: string; issue: JobIssue } | null> {
  if (!branch.startsWith(prefix)) return null;
  const job = await ledger.jobs.byId(branch.slice(prefix.length));
  return job?.branch === branch && job.issue ? { jobId: job._id, issue: job.issue } : null;
}

/** Comments the pull request's link on the issue once: a retry, or a later turn, finds the answer already there. */
export async function answerIssue(client: ForgeRepository, issue: JobIssue, jobId: string, pullRequestUrl: string): Promise<void> {
  const marker = issueAnswerMarker(jobId);
  try {
    const earlier = await client.comments(issue.number, 'issue');
    if (earlier.some((c) => c.body.includes(marker))) return;
    await client.comment(issue.number, `I opened ${pullRequestUrl} for this issue; merging it closes the issue.\n\n${marker}`, 'issue');
  } catch (err) {
    const status = statusOf(err);
    // The pull request is open either way; an issue the forge will not let docent comment on is not worth failing the turn.
    if (status !== undefined && status >= 400 && status < 500 && status !== 429) return;
    throw err;
  }
}
