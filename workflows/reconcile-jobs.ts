import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ReconcileJobsInput, ReconcileJobsResult, StopOrphanTurnInput } from './reconcile-jobs-contract';

const { reconcileActiveJobs } = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 } });
const { finishStoppedTurn } = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 20, maximumInterval: '30 seconds' } });

/** Run by the worker's schedule: ends active jobs that no workflow is working on (src/jobs/job-reconcile.ts). */
export async function reconcileJobs(input: ReconcileJobsInput): Promise<ReconcileJobsResult> {
  return reconcileActiveJobs(input);
}

/**
 * Started by the gateway when a client stops a turn no workflow is running (src/agent/service.ts stopJob): the turn
 * ends `stopped` through the same ledger verb the job's workflow uses, with its turn.finished event and webhooks.
 */
export async function stopOrphanTurn(input: StopOrphanTurnInput): Promise<void> {
  await finishStoppedTurn(input);
}
