import { isIP } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (`::` expanded, an IPv4 tail such as `::ffff:1.2.3.4` included). */
function ipv6Groups(address: string): number[] {
  const toGroups = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head, tail] = address.split('::') as [string, string | undefined];
  if (tail === undefined) return toGroups(head);
  const left = toGroups(head);
  const right = toGroups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * What the per-IP limits count: an IPv4 address as it is, an IPv6 address by its /64 network, since one subscriber
 * (one home or one server) is usually given a whole /64 and could otherwise take a new address per request.
 */
export function ipLimitSubject(ip: string): string {
  const address = ip.split('%')[0]!; // a zone id (fe80::1%eth0) names an interface, not a host
  if (isIP(address) !== 6) return ip;
  return `${ipv6Groups(address)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
