import type { Instruction } from '../agent-job-contract';
import type { CloneRoute } from '../clone-route';
import { contextOf, onOneWorker } from './clones';
import type { Job, Stage } from './job';

/** Writes a plan with read-only tools on the clone's worker, shows it, and waits (for days if need be) for approval or feedback. */
export async function planUntilApproved(job: Job, route: CloneRoute, instruction: Instruction, stage: Stage): Promise<string> {
  const { input, state, status } = job;
  const { jobId, repository, forgeId, branch } = input;
  const { turn } = instruction;
  const revisions: Array<{ plan: string; feedback: string }> = [];
  const writePlan = (revision: number) =>
    onOneWorker(route, async () => {
      stage('preparing');
      const { startCommit, workspaceQueue } = await route.on(job.gitOptions).prepareWorkspace({ jobId, repository, forgeId, baseRef: input.baseRef, branch, turn });
      route.settle(workspaceQueue);
      stage('planning');
      return route.on(job.agentOptions).planChange({ jobId, repository, forgeId, startCommit, instruction, model: input.model, maxSteps: input.maxSteps, revision, revisions, ...contextOf(job) });
    });
  for (let revision = (instruction.planRevisionBase ?? 0) + 1; ; revision++) {
    const { plan } = await writePlan(revision);
    // The wait may last days: the clone goes before the plan is shown, and the edit clones again wherever it runs.
    await route.removeClones(jobId, job.gitOptions);
    state.offerPlan(turn, revision);
    stage('awaiting-approval');
    await status.recordPlan({ jobId, turn, revision, plan });
    const made = await state.decided();
    if (made.approved) {
      if (!made.recorded) await status.recordPlanApproved({ jobId, turn, revision });
      return plan;
    }
    revisions.push({ plan, feedback: made.feedback });
  }
}
