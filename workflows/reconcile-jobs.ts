import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ReconcileJobsInput, ReconcileJobsResult } from './reconcile-jobs-contract';

const { reconcileActiveJobs } = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 } });

/** Run by the worker's schedule: ends active jobs that no workflow is working on (src/jobs/job-reconcile.ts). */
export async function reconcileJobs(input: ReconcileJobsInput): Promise<ReconcileJobsResult> {
  return reconcileActiveJobs(input);
}
