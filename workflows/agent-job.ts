import {
  type ActivityOptions,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  executeChild,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { AGENT_JOB_PATCHES } from './agent-job-patches';
import { CloneRoute, cloneWorkerGone } from './clone-route';
import {
  approvePlanUpdate,
  followUpSignal,
  NO_PLAN_AWAITS,
  NON_RETRYABLE_AGENT_ERRORS,
  PLAIN_JOB_ID,
  progressQuery,
  revisePlanUpdate,
  stopTurnSignal,
  type AgentJobInput,
  type AgentJobProgress,
  type AnswerPullRequestInput,
  type Instruction,
  type PlanDecision,
  type ReportChecksInput,
  type RunAgentResult,
  type TurnEnding,
} from './agent-job-contract';
import type { DocsGapCheckInput } from './docs-gap-check-contract';

const nonRetryableErrorTypes = [...NON_RETRYABLE_AGENT_ERRORS];
/** Workers a turn may start over on when the one holding its clone vanishes, before it fails. */
const maxWorkerMoves = 3;
/** How long a job's first step waits for the worker holding its project's setup cache before any worker may take it. */
const setupCacheWorkerWaitMs = 10_000;

// Error types of our activities, as the codes a client reads in `error.code`.
const errorCodes: Record<string, string> = {
  RepositoryNotFound: 'repository_not_found',
  RefNotFound: 'ref_not_found',
  RepositoryAccessDenied: 'repository_access_denied',
  AgentLimitExceeded: 'agent_limit_exceeded',
  ModelRequestRejected: 'model_error',
  ImageRefused: 'image_refused',
  ModelUnavailable: 'model_unavailable',
  PullRequestRejected: 'pull_request_rejected',
  RepositoryUrlRefused: 'repository_url_refused',
  SandboxUnavailable: 'sandbox_unavailable',
  BudgetExceeded: 'budget_exceeded',
};

const stoppedError = { code: 'stopped', message: 'the turn was stopped; send a follow-up or retry it to continue' };

function describeFailure(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type && errorCodes[cause.type]) {
    return { code: errorCodes[cause.type]!, message: cause.message };
  }
  if (cause instanceof TimeoutFailure) return { code: 'timeout', message: 'a step of the job did not finish in time; send a follow-up to retry' };
  return { code: 'internal', message: 'the job failed unexpectedly; send a follow-up to retry' };
}

/**
 * One agent job: for each instruction, clone → edit → commit and push → open (or reuse) the pull request → record
 * status. Follow-ups arrive as signals while it runs; a finished job is restarted by signal-with-start.
 */
export async function agentJob(input: AgentJobInput): Promise<void> {
  // Anyone who can reach Temporal can start this by hand: a job id that could name a path fails before any step.
  if (!PLAIN_JOB_ID.test(input.jobId)) throw ApplicationFailure.create({ type: 'InvalidJobId', message: 'the job id is not a plain name', nonRetryable: true });
  const gitOptions: ActivityOptions = {
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: { maximumAttempts: 5, nonRetryableErrorTypes },
  };
  // The agent's tool loop, the project's setup and checks, and the repair rounds all run in this one activity.
  const agentOptions: ActivityOptions = {
    startToCloseTimeout: '60 minutes',
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: { maximumAttempts: 3, nonRetryableErrorTypes },
  };
  const git = proxyActivities<Activities>(gitOptions);
  const agent = proxyActivities<Activities>(agentOptions);
  // Workflows started before turns ran where their clone is replay without it (and clone on any worker per step).
  const route = patched(AGENT_JOB_PATCHES.turnOnCloneWorker) ? new CloneRoute(input.cloneWaitMs ?? 60_000) : undefined;
  const github = proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 5, initialInterval: '2 seconds', nonRetryableErrorTypes },
  });
  const status = proxyActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 20, maximumInterval: '30 seconds' },
  });

  const pending: Instruction[] = input.first ? [input.first] : [];
  let progress: AgentJobProgress = { turn: input.first?.turn ?? 0, stage: 'waiting' };
  // Turns a client asked to stop: one that has not begun yet ends stopped as soon as it would begin.
  const stopRequested = new Set<number>();
  setHandler(followUpSignal, (instruction) => {
    stopRequested.delete(instruction.turn); // a retry of a stopped turn runs again
    pending.push(instruction);
  });
  setHandler(progressQuery, () => progress);
  // Each turn runs in a scope of its own, so a stop cancels that turn and leaves the job (and its workflow) alive.
  let turnScope: { turn: number; scope: CancellationScope } | undefined;
  setHandler(stopTurnSignal, ({ turn }) => {
    stopRequested.add(turn);
    if (turnScope?.turn === turn) turnScope.scope.cancel();
  });

  // The plan a person may approve or send back now (set from the moment it is written, before it is shown).
  let awaiting: { turn: number; revision: number } | undefined;
  // `recorded`: the update wrote the decision to the job itself, so the plan loop writes nothing more.
  let decision: (({ approved: true } | { approved: false; feedback: string }) & { recorded: boolean }) | undefined;
  const refuseUnlessAwaiting = (turn: number, revision?: number) => {
    if (!awaiting || awaiting.turn !== turn || (revision !== undefined && awaiting.revision !== revision))
      throw ApplicationFailure.create({ type: NO_PLAN_AWAITS, message: 'no plan awaits approval', nonRetryable: true });
  };
  /**
   * Takes a decision and records it on the job before the person hears back, so the job they read next shows it and
   * nobody else writes it. Workflows started before (no marker) answer at once; their plan loop records an approval.
   */
  const decide = async (d: { approved: true } | { approved: false; feedback: string }): Promise<PlanDecision> => {
    const { turn, revision } = awaiting!;
    const recorded = patched(AGENT_JOB_PATCHES.planDecisionsRecordedByWorkflow);
    awaiting = undefined;
    decision = { ...d, recorded };
    if (!recorded) return { revision };
    if (d.approved) await status.recordPlanApproved({ jobId: input.jobId, turn, revision });
    else await status.recordPlanRevisionAsked({ jobId: input.jobId, turn, revision, feedback: d.feedback });
    return { revision };
  };
  setHandler(approvePlanUpdate, () => decide({ approved: true }), { validator: ({ turn, revision }) => refuseUnlessAwaiting(turn, revision) });
  setHandler(revisePlanUpdate, ({ feedback }) => decide({ approved: false, feedback }), { validator: ({ turn }) => refuseUnlessAwaiting(turn) });

  /** Writes a plan with read-only tools on the clone's worker, shows it, and waits (for days if need be) for approval or feedback. */
  async function planUntilApproved(route: CloneRoute, instruction: Instruction, stage: (s: AgentJobProgress['stage']) => void): Promise<string> {
    const { jobId, repository, branch } = input;
    const revisions: Array<{ plan: string; feedback: string }> = [];
    const writePlan = async (revision: number) => {
      for (let move = 1; ; move++) {
        try {
          stage('preparing');
          const { startCommit, workspaceQueue } = await route.on(gitOptions).prepareWorkspace({ jobId, repository, baseRef: input.baseRef, branch, turn: instruction.turn });
          route.settle(workspaceQueue);
          stage('planning');
          return await route.on(agentOptions).planChange({ jobId, repository, startCommit, instruction, model: input.model, maxSteps: input.maxSteps, revision, revisions });
        } catch (err) {
          if (!cloneWorkerGone(err) || move >= maxWorkerMoves) throw err;
          route.forget();
        }
      }
    };
    for (let revision = (instruction.planRevisionBase ?? 0) + 1; ; revision++) {
      const { plan } = await writePlan(revision);
      // The wait may last days: the clone goes before the plan is shown, and the edit clones again wherever it runs.
      await route.removeClones(jobId, gitOptions);
      awaiting = { turn: instruction.turn, revision };
      decision = undefined;
      stage('awaiting-approval');
      await status.recordPlan({ jobId, turn: instruction.turn, revision, plan });
      await condition(() => decision !== undefined);
      const made = decision!;
      if (made.approved) {
        if (!made.recorded) await status.recordPlanApproved({ jobId, turn: instruction.turn, revision });
        return plan;
      }
      revisions.push({ plan, feedback: made.feedback });
    }
  }

  /** The worker that last held the project's setup, for a turn that has no clone yet and whose project caches its setup. */
  async function setupCacheWorker(route: CloneRoute, instruction: Instruction): Promise<string | undefined> {
    // Added with cached setup: histories recorded before replay without the step.
    if (route.settled || !instruction.checks?.setupCache || !patched(AGENT_JOB_PATCHES.preferSetupCacheWorker)) return undefined;
    return (await status.preferredSetupWorker({ projectId: input.projectId })).workspaceQueue;
  }

  /** Clone, edit, commit and push on the one worker that holds the clone; a turn whose worker is gone starts over on another. */
  async function editOnOneWorker(route: CloneRoute, instruction: Instruction, stage: (s: AgentJobProgress['stage']) => void) {
    const { jobId, repository, branch } = input;
    for (let move = 1; ; move++) {
      try {
        stage('preparing');
        const preferred = move === 1 ? await setupCacheWorker(route, instruction) : undefined;
        const prepared = await route.preferring(preferred, setupCacheWorkerWaitMs, gitOptions, (on) =>
          on.prepareWorkspace({ jobId, repository, baseRef: input.baseRef, branch, turn: instruction.turn }),
        );
        route.settle(prepared.workspaceQueue);
        const { startCommit } = prepared;
        stage('editing');
        const edit = await route.on(agentOptions).runAgent({ jobId, repository, startCommit, instruction, model: input.model, maxSteps: input.maxSteps, ...(move > 1 ? { move } : {}) });
        stage('pushing');
        const { commit: pushed } = await route.on(gitOptions).commitAndPush({ jobId, repository, branch, startCommit, changes: edit.changes, title: edit.title, turn: instruction.turn });
        return { startCommit, edit, pushed };
      } catch (err) {
        if (!cloneWorkerGone(err) || move >= maxWorkerMoves) throw err;
        log.warn('the worker holding the clone is gone; the turn starts over on another', { jobId, turn: instruction.turn, move });
        route.forget();
      }
    }
  }

  // A restart by signal-with-start delivers its instruction with the first activation.
  await condition(() => pending.length > 0, '1 minute');

  for (;;) {
    while (pending.length > 0) {
      const instruction = pending.shift()!;
      const { turn } = instruction;
      const stage = (s: AgentJobProgress['stage']) => {
        progress = { turn, stage: s };
      };
      const scope = new CancellationScope();
      turnScope = { turn, scope };
      // How the turn ended, for an instruction a pull-request comment gave.
      let ending: TurnEnding | undefined;
      if (stopRequested.has(turn)) scope.cancel();
      try {
        await scope.run(async () => {
          // A retry of a turn whose push succeeded resumes after it: only the pull request is opened again.
          const resume = instruction.resume;
          let startCommit = resume?.startCommit;
          let pushed: string | null | undefined = resume?.commit;
          let edit: Pick<RunAgentResult, 'title' | 'summary' | 'checks' | 'checksPassed'> | undefined = resume;
          if (!resume && route) {
            // A plan job's first turn (the option did not exist before): the edit follows the plan a person approved.
            const plans = input.requirePlanApproval && turn === 1 && !instruction.approvedPlan && patched(AGENT_JOB_PATCHES.planApproval);
            const approvedPlan = plans ? await planUntilApproved(route, instruction, stage) : undefined;
            ({ startCommit, edit, pushed } = await editOnOneWorker(route, approvedPlan ? { ...instruction, approvedPlan } : instruction, stage));
          } else if (!resume) {
            stage('preparing');
            ({ startCommit } = await git.prepareWorkspace({ jobId: input.jobId, repository: input.repository, baseRef: input.baseRef, branch: input.branch, turn }));
            stage('editing');
            const edited = await agent.runAgent({ jobId: input.jobId, repository: input.repository, startCommit, instruction, model: input.model, maxSteps: input.maxSteps });
            edit = edited;
            stage('pushing');
            ({ commit: pushed } = await git.commitAndPush({
              jobId: input.jobId,
              repository: input.repository,
              branch: input.branch,
              startCommit,
              changes: edited.changes,
              title: edited.title,
              turn,
            }));
          }
          const verified = { checks: edit!.checks, checksPassed: edit!.checksPassed };
          ending = pushed ? { kind: 'pushed', commit: pushed, title: edit!.title, summary: edit!.summary, checksPassed: edit!.checksPassed } : { kind: 'unchanged', summary: edit!.summary };
          if (pushed === null) {
            // Nothing changed: an earlier turn's pull request, if any, stays the job's prLink.
            await status.recordJobStatus({ jobId: input.jobId, turn, status: 'completed', ...verified });
          } else {
            // Added with check runs: histories recorded before replay without the step.
            if (edit!.checks?.length && patched(AGENT_JOB_PATCHES.reportChecksOnGitHub)) await reportChecks(github, { repository: input.repository, commit: pushed!, checks: edit!.checks });
            stage('opening-pull-request');
            const pr = await github.openPullRequest({
              repository: input.repository,
              branch: input.branch,
              baseRef: input.baseRef,
              title: edit!.title,
              body: edit!.summary,
              // A change whose checks still fail is not ready for review.
              draft: input.asDraft || edit!.checksPassed === false,
              checks: edit!.checks,
            });
            // Gap-loop jobs only (the field did not exist before): the job completes with the proof that its push answers the questions.
            if (input.gapCheck && patched(AGENT_JOB_PATCHES.gapCheckAfterPush))
              await checkGaps({ jobId: input.jobId, turn, repository: input.repository, branch: input.branch, commit: pushed!, pullRequest: pr, spec: input.gapCheck });
            await status.recordJobStatus({ jobId: input.jobId, turn, status: 'completed', prLink: pr.url, ...verified });
          }
        });
      } catch (err) {
        if (isCancellation(err) && scope.consideredCancelled && !CancellationScope.current().consideredCancelled) {
          // Stopped by a client: the turn ends `stopped`, the workflow lives on for follow-ups.
          await status.recordJobStatus({ jobId: input.jobId, turn, status: 'failed', turnStatus: 'stopped', error: stoppedError });
          ending = { kind: 'failed', error: stoppedError };
        } else if (isCancellation(err)) {
          // Archived (the gateway has recorded it): the clone of a possibly private repository goes even so.
          if (route) await CancellationScope.nonCancellable(() => route.removeClones(input.jobId, gitOptions));
          else if (patched(AGENT_JOB_PATCHES.removeWorkspaceWhenArchived)) await CancellationScope.nonCancellable(() => git.removeWorkspace({ jobId: input.jobId }));
          throw err;
        } else {
          const error = describeFailure(err);
          await status.recordJobStatus({ jobId: input.jobId, turn, status: 'failed', error });
          ending = { kind: 'failed', error };
        }
      } finally {
        turnScope = undefined;
        awaiting = undefined;
      }
      // Only instructions from a pull-request comment carry `reply`, and none did before this step existed.
      if (instruction.reply && ending && patched(AGENT_JOB_PATCHES.answerPullRequestComment))
        await answerOnPullRequest({ jobId: input.jobId, turn, attempt: instruction.attempt, reply: instruction.reply, ending });
      stage('done');
    }
    // Added after jobs were already running: histories without this step replay without it.
    if (route) await route.removeClones(input.jobId, gitOptions);
    else if (patched(AGENT_JOB_PATCHES.removeWorkspaceWhenIdle)) await git.removeWorkspace({ jobId: input.jobId });
    // A follow-up that arrived while the clone was being removed starts another round instead of being dropped.
    if (pending.length === 0) break;
  }
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

/** Answers the comment that gave the turn; an answer GitHub refuses is logged and leaves the job as it is. */
async function answerOnPullRequest(input: AnswerPullRequestInput): Promise<void> {
  const { answerPullRequestComment } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 5, initialInterval: '2 seconds' } });
  try {
    await answerPullRequestComment(input);
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('could not answer on the pull request', { jobId: input.jobId, turn: input.turn, error: err instanceof Error ? err.message : String(err) });
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
