import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { WorkerSelfCheckInput, WorkerSelfCheckResult } from './worker-self-check-contract';

const { checkWorkerDependencies } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

/** Proves a worker is polling the queue and can reach its own dependencies; `infra/run.sh` runs it after start-up. */
export async function workerSelfCheck(input: WorkerSelfCheckInput): Promise<WorkerSelfCheckResult> {
  return checkWorkerDependencies({ requestedBy: input.requestedBy });
}
