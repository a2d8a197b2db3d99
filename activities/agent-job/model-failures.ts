import { ApplicationFailure } from '@temporalio/activity';
import { APICallError } from 'ai';

/**
 * What a failed model call means for the turn: a refusal (4xx other than 429) will not change on retry; a rate limit,
 * a 5xx or no answer at all is the provider being unavailable, retried by Temporal (after the provider's retry-after,
 * when it sends one) and reported as model_unavailable once the attempts run out. Undefined for anything else.
 */
export function modelFailure(err: unknown): ApplicationFailure | undefined {
  if (!APICallError.isInstance(err)) return undefined;
  const status = err.statusCode;
  if (status !== undefined && status < 500 && status !== 429) {
    return ApplicationFailure.create({ type: 'ModelRequestRejected', message: `the model provider refused the request (HTTP ${status})`, nonRetryable: true });
  }
  const retryAfterSeconds = Number(err.responseHeaders?.['retry-after']);
  return ApplicationFailure.create({
    type: 'ModelUnavailable',
    message: `the model provider did not answer (${status === undefined ? 'no response' : `HTTP ${status}`}); retry the job later`,
    nonRetryable: false,
    // The provider says when to come back; sooner would only be refused again. Capped: a turn should not wait hours.
    ...(retryAfterSeconds > 0 ? { nextRetryDelay: Math.min(retryAfterSeconds, 300) * 1000 } : {}),
  });
}
