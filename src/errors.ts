/** The closed set of error codes docent answers with, named as Connect names them. */
export type ErrorCode =
  | 'invalid_argument'
  | 'failed_precondition'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'aborted'
  | 'resource_exhausted'
  | 'unimplemented'
  | 'unavailable'
  | 'internal';

// Connect's table of HTTP statuses, the one place that maps codes to statuses.
const httpStatusOf: Record<ErrorCode, number> = {
  invalid_argument: 400,
  failed_precondition: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  // A concurrency conflict: what the client read has changed since (a plan approved at a revision no longer current).
  aborted: 409,
  resource_exhausted: 429,
  unimplemented: 501,
  unavailable: 503,
  internal: 500,
};

/** An error whose message is safe to show a client. Anything else is logged and shown as `internal`. */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterSeconds?: number,
    /** Response headers that belong to the error, e.g. RateLimit-* on a 429. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export interface RestError {
  status: number;
  body: { error: string; code: ErrorCode; retryAfterSeconds?: number };
  headers: Record<string, string>;
}

const hidden = new AppError('internal', 'internal error');
// Retry-After: long enough for a restarting node or a failover, short enough that a client comes back soon after.
const dependencyDown = new AppError('unavailable', 'a service docent depends on is unavailable; try again shortly', 5);

// Driver errors that mean a dependency is down, named so this module needs no driver import.
const unavailableErrorNames = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoTopologyClosedError', // what every operation gets after the driver's first connection attempt failed
  'ConnectionError', // @elastic/elasticsearch
  'NoLivingConnectionsError', // @elastic/elasticsearch
]);

/** Narrows any thrown value to what a client may see. */
export function publicError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof Error && unavailableErrorNames.has(err.name)) return dependencyDown;
  return hidden;
}

export function toRestError(err: unknown): RestError {
  const e = publicError(err);
  const body: RestError['body'] = { error: e.message, code: e.code };
  const headers: Record<string, string> = { ...e.headers };
  if (e.retryAfterSeconds !== undefined) {
    body.retryAfterSeconds = e.retryAfterSeconds;
    headers['retry-after'] = String(e.retryAfterSeconds);
  }
  return { status: httpStatusOf[e.code], body, headers };
}
