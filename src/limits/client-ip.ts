import { isIP } from 'node:net';

const unmapped = (a: string) => (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a);

/**
 * The client's address for per-IP limits. X-Forwarded-For is believed only when the socket's peer is a trusted
 * proxy, and then read from the right, skipping trusted proxies, since a client can put anything on its left.
 */
export function clientIp(remoteAddress: string, forwardedFor: string | string[] | undefined, trustedProxies: readonly string[]): string {
  const trusted = new Set(trustedProxies.map(unmapped));
  let ip = unmapped(remoteAddress);
  if (!trusted.has(ip) || !forwardedFor) return ip;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((h) => unmapped(h.trim()));
  for (const hop of hops.reverse()) {
    if (isIP(hop) === 0) break;
    ip = hop;
    if (!trusted.has(hop)) break;
  }
  return ip;
}
