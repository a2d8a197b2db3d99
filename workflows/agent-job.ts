import { ApplicationFailure, condition, isCancellation, patched } from '@temporalio/workflow';
import { PLAIN_JOB_ID, type AgentJobInput } from './agent-job-contract';
import { AGENT_JOB_PATCHES } from './agent-job-patches';
import { removeClones } from './agent-job/clones';
import { type Job, jobActivities } from './agent-job/job';
import { JobHandlers } from './agent-job/job-handlers';
import { showJobStatus } from './agent-job/status-attribute';
import { runTurn } from './agent-job/turn';
import { CloneRoute } from './clone-route';

/**
 * One agent job: it runs each instruction as a turn (workflows/agent-job/turn.ts: edit on the clone's worker, commit
 * and push, open or reuse the pull request, record the turn), then removes its clones. Follow-ups, stops and plan
 * decisions arrive through the handlers of its JobHandlers while it runs; a finished job is restarted by signal-with-start.
 * Every patched() gate it passes is listed in workflows/agent-job-patches.ts.
 */
export async function agentJob(input: AgentJobInput): Promise<void> {
  // Anyone who can reach Temporal can start this by hand: a job id that could name a path fails before any step.
  if (!PLAIN_JOB_ID.test(input.jobId)) throw ApplicationFailure.create({ type: 'InvalidJobId', message: 'the job id is not a plain name', nonRetryable: true });
  const activities = jobActivities(input);
  // Workflows started before turns ran where their clone is replay without it (and clone on any worker per step).
  const route = patched(AGENT_JOB_PATCHES.turnOnCloneWorker) ? new CloneRoute(input.cloneWaitMs ?? 60_000) : undefined;
  const job: Job = { ...activities, input, route, state: new JobHandlers(input, activities.status) };
  const { pending } = job.state;

  try {
    // A restart by signal-with-start delivers its instruction with the first activation.
    await condition(() => pending.length > 0, '1 minute');
    for (;;) {
      for (let instruction = pending.shift(); instruction; instruction = pending.shift()) await runTurn(job, instruction);
      await removeClones(job);
      // A follow-up that arrived while the clone was being removed starts another round instead of being dropped.
      if (pending.length === 0) break;
    }
  } catch (err) {
    // Only an archive cancels a job's workflow (src/jobs/job-steering.ts).
    if (isCancellation(err)) showJobStatus(input, 'archived');
    throw err;
  }
}
