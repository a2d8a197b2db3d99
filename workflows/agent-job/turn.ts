import { CancellationScope, deprecatePatch, isCancellation, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { AnswerPullRequestInput, Instruction, TurnEnding } from '../agent-job-contract';
import { AGENT_JOB_PATCHES } from '../agent-job-patches';
import { removeClonesOfArchivedJob } from './clones';
import { deliverTurn, editedEnding } from './deliver';
import { type Edited, editTurn, editTurnAnywhere } from './edit';
import { describeFailure, stoppedError } from './failure';
import type { Job, Stage } from './job';
import { showJobStatus } from './status-attribute';

/**
 * One turn: edit (or resume after the push), deliver; a failure or a stop is recorded on the turn, and a turn a
 * pull-request comment gave is answered there. It runs in a scope of its own, which a stop cancels.
 */
export async function runTurn(job: Job, instruction: Instruction): Promise<void> {
  const { turn } = instruction;
  const stage: Stage = (s) => job.state.stage(turn, s);
  const scope = job.state.beginTurn(turn);
  showJobStatus(job.input, 'active');
  let ending: TurnEnding | undefined;
  try {
    await scope.run(async () => {
      const edited = await editOrResume(job, instruction, stage);
      ending = editedEnding(edited);
      await deliverTurn(job, turn, edited, stage);
    });
  } catch (err) {
    ending = await recordTurnFailure(job, turn, scope, err);
  } finally {
    job.state.endTurn();
  }
  // Only instructions from a pull-request comment carry `reply`.
  const { reply } = instruction;
  if (reply && ending) {
    deprecatePatch(AGENT_JOB_PATCHES.answerPullRequestComment);
    await answerComment({ jobId: job.input.jobId, turn, attempt: instruction.attempt, reply, ending });
  }
  stage('done');
}

/** The turn's edit: on its clone's worker, or anywhere in a history from before CloneRoute. */
async function editOrResume(job: Job, instruction: Instruction, stage: Stage): Promise<Edited> {
  // A retry of a turn whose push succeeded resumes after it: only the pull request is opened again.
  const { resume } = instruction;
  if (resume) return { commit: resume.commit, edit: resume };
  return job.route ? editTurn(job, job.route, instruction, stage) : editTurnAnywhere(job, instruction, stage);
}

/**
 * Records how a turn failed and returns its ending: stopped by a client (the job lives on for follow-ups) or failed.
 * An archived job's cancellation removes its clones and ends the workflow.
 */
async function recordTurnFailure(job: Job, turn: number, scope: CancellationScope, err: unknown): Promise<TurnEnding> {
  const { jobId } = job.input;
  if (isCancellation(err) && scope.consideredCancelled && !CancellationScope.current().consideredCancelled) {
    await job.status.recordJobStatus({ jobId, turn, status: 'failed', turnStatus: 'stopped', error: stoppedError });
    showJobStatus(job.input, 'failed');
    return { kind: 'failed', error: stoppedError };
  }
  if (isCancellation(err)) {
    await removeClonesOfArchivedJob(job);
    throw err;
  }
  const error = describeFailure(err);
  await job.status.recordJobStatus({ jobId, turn, status: 'failed', error });
  showJobStatus(job.input, 'failed');
  return { kind: 'failed', error };
}

/** Answers the comment that gave the turn; an answer GitHub refuses is logged and leaves the job as it is. */
async function answerComment(input: AnswerPullRequestInput): Promise<void> {
  const { answerPullRequestComment } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 5, initialInterval: '2 seconds' } });
  try {
    await answerPullRequestComment(input);
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('could not answer on the pull request', { jobId: input.jobId, turn: input.turn, error: err instanceof Error ? err.message : String(err) });
  }
}
