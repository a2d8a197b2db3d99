import { deprecatePatch, executeChild, isCancellation, log, patched } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { ReportChecksInput, TurnEnding } from '../agent-job-contract';
import { AGENT_JOB_PATCHES } from '../agent-job-patches';
import type { DocsGapCheckInput } from '../docs-gap-check-contract';
import type { Edited } from './edit';
import type { Job, Stage } from './job';
import { showJobStatus } from './status-attribute';

/** How a turn that edited ended, for an instruction a pull-request comment gave. */
export function editedEnding({ commit, edit }: Edited): TurnEnding {
  return commit ? { kind: 'pushed', commit, title: edit.title, summary: edit.summary, checksPassed: edit.checksPassed } : { kind: 'unchanged', summary: edit.summary };
}

/**
 * Delivers a turn's edit: a pushed commit gets its checks shown on GitHub, its pull request opened (or reused) and, in a
 * gap-loop job, its gap check; then the turn is recorded completed.
 */
export async function deliverTurn(job: Job, turn: number, { commit, edit }: Edited, stage: Stage): Promise<void> {
  const { input, github, status } = job;
  const { jobId, repository, forgeId, branch } = input;
  const verified = { checks: edit.checks, checksPassed: edit.checksPassed };
  if (commit === null) {
    // Nothing changed: an earlier turn's pull request, if any, stays the job's prLink.
    await status.recordJobStatus({ jobId, turn, status: 'completed', ...verified });
    showJobStatus(input, 'completed');
    return;
  }
  // Added with check runs: histories recorded before replay without the step.
  if (edit.checks?.length && patched(AGENT_JOB_PATCHES.reportChecksOnGitHub)) await reportChecks(github, { repository, forgeId, commit, checks: edit.checks });
  stage('opening-pull-request');
  const pr = await github.openPullRequest({
    repository,
    forgeId,
    branch,
    baseRef: input.baseRef,
    title: edit.title,
    body: edit.summary,
    // A change whose checks still fail is not ready for review.
    draft: input.asDraft || edit.checksPassed === false,
    checks: edit.checks,
  });
  // Gap-loop jobs only: the job completes with the proof that its push answers the questions.
  if (input.gapCheck) {
    deprecatePatch(AGENT_JOB_PATCHES.gapCheckAfterPush);
    await checkGaps({ jobId, turn, repository, forgeId, branch, commit, pullRequest: pr, spec: input.gapCheck });
  }
  await status.recordJobStatus({ jobId, turn, status: 'completed', prLink: pr.url, ...verified });
  showJobStatus(input, 'completed');
}

/** Shows the checks on GitHub; a failure to do so is logged and the turn goes on to its pull request, which lists them too. */
async function reportChecks(github: Pick<Activities, 'reportChecks'>, input: ReportChecksInput): Promise<void> {
  try {
    await github.reportChecks(input);
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('reporting the checks on GitHub failed', { repository: input.repository, commit: input.commit, error: err instanceof Error ? err.message : String(err) });
  }
}

/** Runs the gap check as a child workflow; its failure is logged and leaves the job as completed. */
async function checkGaps(input: DocsGapCheckInput): Promise<void> {
  try {
    await executeChild('docsGapCheck', { workflowId: `docs-gap-check-${input.jobId}-${input.turn}`, args: [input] });
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('gap check failed', { jobId: input.jobId, error: err instanceof Error ? err.message : String(err) });
  }
}
