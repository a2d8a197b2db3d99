import { ApplicationFailure } from '@temporalio/activity';
import { APICallError } from 'ai';

/** A provider's refusal (4xx other than 429) as the non-retryable ModelRequestRejected; anything else as it was. */
export function modelFailure(err: unknown): unknown {
  if (APICallError.isInstance(err) && err.statusCode !== undefined && err.statusCode < 500 && err.statusCode !== 429) {
    return ApplicationFailure.create({ type: 'ModelRequestRejected', message: `the model provider refused the request (HTTP ${err.statusCode})`, nonRetryable: true });
  }
  return err;
}
