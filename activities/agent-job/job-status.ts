import type { JobLedger } from '../../src/jobs/ledger';
import type { RecordJobStatusInput } from '../../workflows/agent-job-contract';

export function createJobStatusActivities(deps: { ledger: JobLedger }) {
  return {
    /** Ends a turn through the ledger (turn, job, events, webhooks); a retry after a crash finishes what the first attempt began. */
    async recordJobStatus(input: RecordJobStatusInput): Promise<{ recorded: boolean }> {
      const { jobId, turn, ...outcome } = input;
      return deps.ledger.finishTurn(jobId, turn, outcome);
    },
  };
}
