// Every address docent decides on, parsed into one canonical form and judged by one set of rules (docs/decisions/2026-11-26-egress.md).
import { BlockList, isIP } from 'node:net';
import os from 'node:os';

export type Family = 'ipv4' | 'ipv6';

/** An address in canonical form: IPv4 dotted quad, or IPv6 as 8 groups of 4 hex digits, lower case. */
export interface Address {
  address: string;
  family: Family;
}

/** The 8 groups of a valid IPv6 literal, with a dotted IPv4 tail folded into the last two. */
function ipv6Groups(text: string): number[] {
  let s = text;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/**
 * Parses an address as any client may write it (brackets, zone id, upper case, uncompressed, dotted tail) into its
 * canonical form. IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96) and IPv4-compatible (::/96 but for
 * :: and ::1) addresses become the IPv4 address they carry. Undefined: not an address.
 */
export function parseAddress(text: string): Address | undefined {
  const s = text
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '')
    .toLowerCase();
  const version = isIP(s);
  if (version === 4) return { address: s, family: 'ipv4' };
  if (version !== 6) return undefined;
  const g = ipv6Groups(s);
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  const mapped = zeros(5) && g[5] === 0xffff;
  const translated = zeros(4) && g[4] === 0xffff && g[5] === 0;
  const compatible = zeros(6) && (g[6] !== 0 || g[7]! > 1);
  if (mapped || translated || compatible) return { address: ipv4Of(g[6]!, g[7]!), family: 'ipv4' };
  return { address: g.map((x) => x.toString(16).padStart(4, '0')).join(':'), family: 'ipv6' };
}

/** A network written `address/bits` (or a bare address), in canonical form: an IPv4-mapped /96+n is the IPv4 /n. */
export function parseNetwork(cidr: string): { address: Address; prefix: number } | undefined {
  const [text = '', bits, ...rest] = cidr.trim().split('/');
  const written = isIP(text.replace(/^\[(.*)\]$/, '$1'));
  const address = parseAddress(text);
  if (!address || rest.length > 0 || bits === '') return undefined;
  const max = written === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return undefined;
  if (written === 6 && address.family === 'ipv4') return prefix >= 96 ? { address, prefix: prefix - 96 } : undefined;
  return { address, prefix };
}

/** A set of networks and addresses matched against parsed addresses, whatever spelling either side was written in. */
export class AddressSet {
  private readonly list = new BlockList();
  /** The networks as given, for messages. */
  readonly networks: string[] = [];

  constructor(cidrs: Iterable<string> = []) {
    for (const c of cidrs) this.add(c);
  }

  /** Adds `address/bits` or one address; throws a TypeError naming an entry that is neither. */
  add(cidr: string): void {
    const n = parseNetwork(cidr);
    if (!n) throw new TypeError(`${JSON.stringify(cidr)} is not an address or network`);
    this.list.addSubnet(n.address.address, n.prefix, n.address.family);
    this.networks.push(cidr);
  }

  has(address: string | Address): boolean {
    const a = typeof address === 'string' ? parseAddress(address) : address;
    return a !== undefined && this.list.check(a.address, a.family);
  }
}

type Kind = 'loopback' | 'link-local' | 'private' | 'reserved' | 'documentation' | 'tunnel' | 'nat64';

// Checked in this order, first match wins. Everything else (for IPv6: 2000::/3 outside these) is public.
const RANGES: Array<[Kind, string]> = [
  ['loopback', '127.0.0.0/8'],
  ['loopback', '::1/128'],
  ['link-local', '169.254.0.0/16'],
  ['link-local', 'fe80::/10'],
  ['private', '10.0.0.0/8'],
  ['private', '172.16.0.0/12'],
  ['private', '192.168.0.0/16'],
  ['private', '100.64.0.0/10'], // carrier-grade NAT
  ['private', 'fc00::/7'], // unique local
  ['private', 'fec0::/10'], // site-local (deprecated, still routed by some stacks)
  ['reserved', '0.0.0.0/8'],
  ['reserved', '192.0.0.0/24'], // IETF protocol assignments
  ['reserved', '192.88.99.0/24'], // 6to4 relay anycast (deprecated)
  ['reserved', '224.0.0.0/4'], // multicast
  ['reserved', '240.0.0.0/4'], // reserved, and the broadcast address
  ['reserved', '::/128'],
  ['reserved', '100::/64'], // discard-only
  ['reserved', 'ff00::/8'], // multicast
  ['documentation', '192.0.2.0/24'],
  ['documentation', '198.51.100.0/24'],
  ['documentation', '203.0.113.0/24'],
  ['documentation', '198.18.0.0/15'], // benchmarking
  ['documentation', '2001:db8::/32'],
  ['documentation', '3fff::/20'],
  ['tunnel', '64:ff9b:1::/48'], // local-use NAT64: where the IPv4 address sits is the operator's choice
  ['tunnel', '2002::/16'], // 6to4
  ['tunnel', '2001::/32'], // Teredo
  ['nat64', '64:ff9b::/96'], // well-known NAT64: judged by the IPv4 address it carries
];
const RANGE_SETS = RANGES.map(([kind, cidr]) => [kind, new AddressSet([cidr])] as const);

const PHRASE: Record<Exclude<Kind, 'nat64'>, string> = {
  loopback: 'a loopback address',
  'link-local': 'a link-local address',
  private: 'a private or reserved address',
  reserved: 'a private or reserved address',
  documentation: 'a documentation or benchmarking address',
  tunnel: 'a 6to4, Teredo or local-use NAT64 address',
};

/** The machine's own addresses and the subnets its interfaces are on, read from os.networkInterfaces(). */
export class HostNetwork {
  readonly own = new AddressSet();
  private readonly subnets: Array<[cidr: string, members: AddressSet]> = [];

  constructor(interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]>) {
    for (const list of Object.values(interfaces)) {
      for (const i of list ?? []) {
        this.own.add(i.address);
        if (i.cidr) this.subnets.push([i.cidr, new AddressSet([i.cidr])]);
      }
    }
  }

  /** Read afresh on each call: an interface may gain an address (DHCP, SLAAC) while docent runs. */
  static current(): HostNetwork {
    return new HostNetwork(os.networkInterfaces());
  }

  /** The subnet of `a`'s own interfaces it is on, for a message. */
  subnetOf(a: Address): string | undefined {
    return this.subnets.find(([, members]) => members.has(a))?.[0];
  }
}

/** The IPv4 address a well-known NAT64 address (64:ff9b::/96) carries. */
function nat64Inner(a: Address): Address {
  const g = a.address.split(':').map((x) => parseInt(x, 16));
  return { address: ipv4Of(g[6]!, g[7]!), family: 'ipv4' };
}

function judge(a: Address, written: string, host: HostNetwork): string | undefined {
  const kind = RANGE_SETS.find(([, set]) => set.has(a))?.[0];
  if (kind === 'loopback' || kind === 'link-local') return `${PHRASE[kind]} (${written})`;
  // Before the remaining ranges: a host whose own address is in one of them is named as the host it is.
  if (host.own.has(a)) return `an address of the worker's own machine (${written})`;
  if (kind === 'nat64') {
    const inner = judge(nat64Inner(a), written, host);
    return inner && `a NAT64 form of ${inner}`;
  }
  if (kind) return `${PHRASE[kind]} (${written})`;
  // Last: a subnet that is private anyway was named by its range above; this catches a worker on public addresses.
  const subnet = host.subnetOf(a);
  return subnet && `a neighbour on the worker's own subnet ${subnet} (${written})`;
}

/**
 * Why `address` is not a public address of another machine, as a phrase naming it as written ("a loopback address
 * (::1)"), or undefined when it is public. Refused: loopback, link-local, private, carrier-grade NAT, reserved,
 * multicast, documentation and benchmarking ranges, 6to4, Teredo and local-use NAT64, well-known NAT64 forms of any
 * of those, the host's own addresses and its subnets' neighbours; in every spelling. Not an address: refused too.
 */
export function nonPublicReason(address: string, host: HostNetwork = HostNetwork.current()): string | undefined {
  const a = parseAddress(address);
  if (!a) return `not an address (${address.slice(0, 100)})`;
  return judge(a, address, host);
}
