// The workflows of the job-events-webhooks benchmark's worker: the real agent job and webhook delivery, and the
// floor of a delivery: a workflow whose one activity POSTs a body to a URL.
import { proxyActivities } from '@temporalio/workflow';

export { agentJob } from '../../workflows/agent-job';
export { webhookDelivery } from '../../workflows/webhook-delivery';

const { benchPost } = proxyActivities<{ benchPost(url: string, body: string): Promise<void> }>({ startToCloseTimeout: '1 minute' });

export async function postOnce(url: string, body: string): Promise<void> {
  await benchPost(url, body);
}
