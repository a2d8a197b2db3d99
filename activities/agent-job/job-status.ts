import type { TurnRecord } from '../../src/jobs/turn-record';
import type { RecordJobStatusInput, RecordPlanApprovedInput, RecordPlanInput, RecordPlanRevisionAskedInput } from '../../workflows/agent-job-contract';

export function createJobStatusActivities(deps: { ledger: TurnRecord }) {
  return {
    /** Ends a turn through the ledger (turn, job, events, webhooks); a retry after a crash finishes what the first attempt began. */
    async recordJobStatus(input: RecordJobStatusInput): Promise<{ recorded: boolean }> {
      const { jobId, turn, ...outcome } = input;
      return deps.ledger.finishTurn(jobId, turn, outcome);
    },
    /** Shows the plan on the job, awaiting approval, with its event and webhook; a retry stores each once. */
    async recordPlan(input: RecordPlanInput): Promise<{ recorded: boolean }> {
      return deps.ledger.recordPlan(input.jobId, input.turn, { revision: input.revision, plan: input.plan });
    },
    /** Marks the plan approved, from the workflow's approve update: the job no longer awaits approval. */
    async recordPlanApproved(input: RecordPlanApprovedInput): Promise<{ recorded: boolean }> {
      return deps.ledger.approvePlan(input.jobId, input.turn, input.revision);
    },
    /** Records that a person asked for another plan, from the workflow's revise update, with their feedback as an event. */
    async recordPlanRevisionAsked(input: RecordPlanRevisionAskedInput): Promise<{ recorded: boolean }> {
      return deps.ledger.askPlanRevision(input.jobId, input.turn, input.revision, input.feedback);
    },
  };
}
