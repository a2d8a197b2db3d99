import { deprecatePatch, log } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { Instruction, PrepareWorkspaceResult, RunAgentResult } from '../agent-job-contract';
import { AGENT_JOB_PATCHES } from '../agent-job-patches';
import type { CloneRoute } from '../clone-route';
import { contextOf, onOneWorker } from './clones';
import type { Job, Stage } from './job';
import { planUntilApproved } from './plan';

/** How long a job's first step waits for the worker holding its project's setup cache before any worker may take it. */
const setupCacheWorkerWaitMs = 10_000;

/** What a turn's edit left: the pushed commit (null when nothing changed) and the agent's account of it. */
export interface Edited {
  commit: string | null;
  edit: Pick<RunAgentResult, 'title' | 'summary' | 'checks' | 'checksPassed'>;
}

/**
 * The edit of a turn on the one worker that holds its clone: a plan job's first turn plans and waits for approval first;
 * a turn whose worker is gone starts over on another.
 */
export async function editTurn(job: Job, route: CloneRoute, instruction: Instruction, stage: Stage): Promise<Edited> {
  const { input } = job;
  const { jobId, repository, forgeId, branch } = input;
  const { turn } = instruction;
  let approvedPlan: string | undefined;
  // A plan job's first turn: the edit follows the plan a person approved.
  if (input.requirePlanApproval && turn === 1 && !instruction.approvedPlan) {
    deprecatePatch(AGENT_JOB_PATCHES.planApproval);
    approvedPlan = await planUntilApproved(job, route, instruction, stage);
  }
  const planned = approvedPlan ? { ...instruction, approvedPlan } : instruction;
  return onOneWorker(
    route,
    (move) =>
      editAndPush(job, planned, stage, move > 1 ? move : undefined, {
        prepare: async () => {
          const preferred = move === 1 ? await setupCacheWorker(job, route, planned) : undefined;
          const prepared = await route.preferring(preferred, setupCacheWorkerWaitMs, job.gitOptions, (on) => on.prepareWorkspace({ jobId, repository, forgeId, baseRef: input.baseRef, branch, turn }));
          route.settle(prepared.workspaceQueue);
          return prepared;
        },
        agent: () => route.on(job.agentOptions),
        git: () => route.on(job.gitOptions),
      }),
    (move) => log.warn('the worker holding the clone is gone; the turn starts over on another', { jobId, turn, move }),
  );
}

/** The edit of a turn as workflows started before CloneRoute ran it: each step on whichever worker takes it. Kept for their histories. */
export function editTurnAnywhere(job: Job, instruction: Instruction, stage: Stage): Promise<Edited> {
  const { jobId, repository, forgeId, baseRef, branch } = job.input;
  return editAndPush(job, instruction, stage, undefined, {
    prepare: () => job.git.prepareWorkspace({ jobId, repository, forgeId, baseRef, branch, turn: instruction.turn }),
    agent: () => job.agent,
    git: () => job.git,
  });
}

/** Where each step of an edit runs; asked as the step comes, since the clone's worker is known only once it is prepared. */
interface EditSteps {
  prepare(): Promise<PrepareWorkspaceResult>;
  agent(): Pick<Activities, 'runAgent'>;
  git(): Pick<Activities, 'commitAndPush'>;
}

/** Prepare the clone, let the agent edit it, commit and push. `move`: the worker this is on since the clone's was lost. */
async function editAndPush(job: Job, instruction: Instruction, stage: Stage, move: number | undefined, steps: EditSteps): Promise<Edited> {
  const { jobId, repository, forgeId, branch, model, maxSteps } = job.input;
  stage('preparing');
  const { startCommit } = await steps.prepare();
  stage('editing');
  const context = contextOf(job);
  const edit = await steps.agent().runAgent({ jobId, repository, forgeId, startCommit, instruction, model, maxSteps, ...(move ? { move } : {}), ...context });
  stage('pushing');
  const { commit } = await steps.git().commitAndPush({ jobId, repository, forgeId, branch, startCommit, changes: edit.changes, title: edit.title, turn: instruction.turn });
  return { commit, edit };
}

/** The worker that last held the project's setup, for a turn that has no clone yet and whose project caches its setup. */
async function setupCacheWorker(job: Job, route: CloneRoute, instruction: Instruction): Promise<string | undefined> {
  if (route.settled || !instruction.checks?.setupCache) return undefined;
  deprecatePatch(AGENT_JOB_PATCHES.preferSetupCacheWorker);
  return (await job.status.preferredSetupWorker({ projectId: job.input.projectId })).workspaceQueue;
}
