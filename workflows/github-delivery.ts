import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { GitHubDeliveryInput, GitHubDeliveryOutcome } from './github-delivery-contract';

const { handleGitHubDelivery, failGitHubDelivery } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // A worker that dies mid-step is noticed by its missing heartbeat, and the step runs again elsewhere.
  heartbeatTimeout: '20 seconds',
  // A forge that is down for a while: GitHub's own redelivery window is hours, so is this.
  scheduleToCloseTimeout: '6 hours',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', nonRetryableErrorTypes: ['DeliveryRefused'] },
});

/**
 * The work one webhook delivery causes, after the intake answered it: the diff fetch, automation runs, follow-up
 * turns, archiving and reactions. Retried until it is done; one that cannot be is recorded `failed` with the reason.
 */
export async function githubDelivery(input: GitHubDeliveryInput): Promise<GitHubDeliveryOutcome> {
  try {
    return await handleGitHubDelivery(input);
  } catch (err) {
    const cause = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.message : 'it could not be handled';
    const reason = `gave up: ${cause}`;
    await failGitHubDelivery({ key: input.key, reason });
    return { outcome: 'failed', reason };
  }
}
