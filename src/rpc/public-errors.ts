import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { type ErrorCode, publicError } from '../errors';
import type { Logger } from '../log';

const connectCodeOf: Record<ErrorCode, Code> = {
  invalid_argument: Code.InvalidArgument,
  failed_precondition: Code.FailedPrecondition,
  unauthenticated: Code.Unauthenticated,
  permission_denied: Code.PermissionDenied,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  aborted: Code.Aborted,
  resource_exhausted: Code.ResourceExhausted,
  unimplemented: Code.Unimplemented,
  unavailable: Code.Unavailable,
  internal: Code.Internal,
};

/** The Connect error a client sees: docent's public errors keep their code, headers and Retry-After; anything else is `internal`. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const e = publicError(err);
  const metadata = new Headers(e.headers);
  if (e.retryAfterSeconds !== undefined) metadata.set('retry-after', String(e.retryAfterSeconds));
  return new ConnectError(e.message, connectCodeOf[e.code], metadata);
}

/** Narrows an error to what a Connect client may see, logging it when it was not already a public one. */
export function toPublicRpcError(err: unknown, rpc: string, log: Logger): ConnectError {
  const pub = toConnectError(err);
  if (pub !== err) log[pub.code === Code.Internal ? 'error' : 'warn']({ err, rpc }, 'rpc failed');
  return pub;
}

/** Database and provider errors are logged here and reach Connect clients only as their public code. */
export function publicErrors(log: Logger): Interceptor {
  return (next) => async (req) => {
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (err) {
      throw toPublicRpcError(err, req.url, log);
    }
    if (!res.stream) return res;
    // A streaming handler fails while its messages are read (WatchAgentJob of an unknown job), not when called.
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* messages;
        } catch (err) {
          throw toPublicRpcError(err, req.url, log);
        }
      })(),
    };
  };
}
