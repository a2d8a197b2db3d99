// The GitHub delivery workflow's contract: what the intake (src/github/webhook-service.ts) hands to the durable step.

/** Who verified a delivery: the connection, its organization and, for a project's own secret, that project (src/github/delivery-scope.ts), without credentials. */
export interface GitHubDeliveryScope {
  forgeId: string;
  orgId?: string;
  projectId?: string;
}

/** One verified, recorded delivery whose work is still to do. */
export interface GitHubDeliveryInput {
  /** The delivery's record (X-GitHub-Delivery after its scope's prefix): settled once. */
  key: string;
  event: 'issue_comment' | 'issues' | 'pull_request_review_comment' | 'pull_request' | 'push';
  /** The fields of the payload docent reads, as the intake read them (src/github/payloads.ts). */
  payload: unknown;
  scope: GitHubDeliveryScope;
}

/** What the step recorded: the delivery's outcome and why, as its deliveries log shows them. */
export interface GitHubDeliveryOutcome {
  outcome: string;
  reason?: string;
  jobId?: string;
}

/** One workflow per delivery record: a redelivery that finds its record still queued starts nothing twice. */
export const githubDeliveryWorkflowId = (taskQueuePrefix: string, key: string) => `${taskQueuePrefix}github-delivery-${key}`;
