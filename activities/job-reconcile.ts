import type { Client as TemporalClient } from '@temporalio/client';
import { finishStoppedTurn, reconcileActiveJobs } from '../src/jobs/job-reconcile';
import type { TurnRecord } from '../src/jobs/turn-record';
import type { Logger } from '../src/log';
import type { ReconcileJobsInput, ReconcileJobsResult, StopOrphanTurnInput } from '../workflows/reconcile-jobs-contract';

export function createReconcileActivities(deps: { ledger: TurnRecord; temporal?: TemporalClient; log?: Logger }) {
  return {
    async reconcileActiveJobs(input: ReconcileJobsInput): Promise<ReconcileJobsResult> {
      if (!deps.temporal) throw new Error('the reconciler needs the worker’s Temporal client');
      return reconcileActiveJobs({ ledger: deps.ledger, temporal: deps.temporal, log: deps.log }, input.olderThanMs);
    },
    /** Ends a stopped turn that no workflow runs; one its workflow picked up meanwhile is told to stop instead. */
    async finishStoppedTurn(input: StopOrphanTurnInput): Promise<{ recorded: boolean }> {
      if (!deps.temporal) throw new Error('the reconciler needs the worker’s Temporal client');
      return finishStoppedTurn({ ledger: deps.ledger, temporal: deps.temporal }, input.jobId, input.turn);
    },
  };
}
