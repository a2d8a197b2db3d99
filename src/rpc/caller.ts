import type { DescService } from '@bufbuild/protobuf';
import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import type { Caller } from '../auth/api-keys';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { Authenticate, RouteAuth } from '../edge/route-auth';
import { toPublicRpcError } from './public-errors';
import { isReadingMethod } from '../auth/key-use';
import { clientIpKey } from '../limits/client-context';

/** The key that passed the method's declared auth, as Connect handlers read it (`callerOf(ctx)`). */
export const callerKey = createContextKey<Caller | undefined>(undefined, { description: 'the authenticated API key' });

/** The key each method of a service needs: every method must be named, or the gateway does not start. */
export type MethodAuth<S extends DescService> = { readonly [M in keyof S['method']]: RouteAuth };

/** The authenticated caller of an RPC whose method declares a key. */
export function callerOf(ctx: HandlerContext): Caller {
  const caller = ctx.values.get(callerKey);
  if (!caller) throw new AppError('internal', 'internal error'); // a method declared 'none' asked for a caller
  return caller;
}

/**
 * Connect's request gate: runs once the headers are in and before any message is read, so an unauthenticated call is
 * refused without reading its body. Authenticates the key the method declares and puts the caller in context values.
 */
export function authenticateRpc(authOf: ReadonlyMap<string, RouteAuth>, authenticate: Authenticate, log: Logger) {
  return async (ctx: HandlerContext): Promise<void> => {
    const rpc = `/${ctx.service.typeName}/${ctx.method.name}`;
    const declared = authOf.get(rpc);
    if (declared === 'none') return;
    try {
      if (!declared) throw new Error(`${rpc} declares no authentication`);
      // No RPC is for operators: the codec endpoint and /metrics are REST only.
      if (declared === 'operator' || declared === 'metrics') throw new Error(`${rpc} declares operator authentication, which RPCs do not have`);
      const use = { clientIp: ctx.values.get(clientIpKey), writes: !isReadingMethod(ctx.method.name) };
      ctx.values.set(callerKey, await authenticate(ctx.requestHeader.get('authorization') ?? undefined, declared, undefined, use));
    } catch (err) {
      throw toPublicRpcError(err, rpc, log);
    }
  };
}
