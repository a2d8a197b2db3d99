import { createContextKey, createContextValues } from '@connectrpc/connect';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { clientIp } from './client-ip';

/** The caller's address as the per-IP limit counts it, for Connect handlers (REST routes compute it from the request). */
export const clientIpKey = createContextKey<string>('unknown', { description: 'client IP' });

/** Fills clientIpKey for every Connect request, trusting X-Forwarded-For only from the configured proxies. */
export function clientIpContext(trustedProxies: readonly string[]) {
  return (req: IncomingMessage | Http2ServerRequest) => createContextValues().set(clientIpKey, clientIp(req.socket?.remoteAddress ?? 'unknown', req.headers['x-forwarded-for'], trustedProxies));
}
