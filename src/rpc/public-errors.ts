import { Code, type ConnectError, type Interceptor } from '@connectrpc/connect';
import { toConnectError } from '../errors';
import type { Logger } from '../log';

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
