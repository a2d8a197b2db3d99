// The workflows of the workflow-overhead benchmark's worker: the real agent job, and a no-op job running the same
// number of no-op activities one after another.
import { proxyActivities } from '@temporalio/workflow';

export { agentJob } from '../../workflows/agent-job';

const { benchNoop } = proxyActivities<{ benchNoop(): Promise<void> }>({ startToCloseTimeout: '1 minute' });

export async function noopJob(activities: number): Promise<void> {
  for (let i = 0; i < activities; i++) await benchNoop();
}
