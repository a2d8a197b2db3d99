import { ApplicationFailure } from '@temporalio/activity';
import { APICallError, type LanguageModel } from 'ai';
import { catalogLanguageModel } from '../../src/llm/model';
import { catalogEntry, type CatalogModel } from '../../src/llm/model-catalog';

/**
 * The job's model from this worker's catalog. A model the operator has since taken out of the catalog, or one this
 * worker cannot build, fails the turn at once: retrying on this worker cannot help.
 */
export function jobLanguageModel(models: readonly CatalogModel[], name: string): LanguageModel {
  const entry = catalogEntry(models, name);
  if (!entry) throw ApplicationFailure.create({ type: 'ModelRequestRejected', message: `the model ${name} is not in this worker's model catalog (DOCENT_MODELS)`, nonRetryable: true });
  const model = catalogLanguageModel(entry);
  if (!model) throw ApplicationFailure.create({ type: 'ModelRequestRejected', message: 'no model is configured on the worker', nonRetryable: true });
  return model;
}

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
