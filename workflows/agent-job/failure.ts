import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';

// Error types of our activities, as the codes a client reads in `error.code`.
const errorCodes: Record<string, string> = {
  RepositoryNotFound: 'repository_not_found',
  RefNotFound: 'ref_not_found',
  RepositoryAccessDenied: 'repository_access_denied',
  AgentLimitExceeded: 'agent_limit_exceeded',
  ModelRequestRejected: 'model_error',
  ImageRefused: 'image_refused',
  ModelUnavailable: 'model_unavailable',
  PullRequestRejected: 'pull_request_rejected',
  RepositoryUrlRefused: 'repository_url_refused',
  SandboxUnavailable: 'sandbox_unavailable',
  BudgetExceeded: 'budget_exceeded',
};

export const stoppedError = { code: 'stopped', message: 'the turn was stopped; send a follow-up or retry it to continue' };

/** The error a failed turn shows its client: our activities' own codes, a timeout, or `internal`. */
export function describeFailure(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type && errorCodes[cause.type]) {
    return { code: errorCodes[cause.type]!, message: cause.message };
  }
  if (cause instanceof TimeoutFailure) return { code: 'timeout', message: 'a step of the job did not finish in time; send a follow-up to retry' };
  return { code: 'internal', message: 'the job failed unexpectedly; send a follow-up to retry' };
}
