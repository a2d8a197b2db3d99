import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** An outbound URL docent will not call; the message says why and which setting would allow it. */
export class OutboundRefused extends Error {
  /** The host did not resolve here, which another machine (a worker) may see differently. */
  readonly unresolved: boolean;

  constructor(message: string, opts: { unresolved?: boolean } = {}) {
    super(message);
    this.unresolved = opts.unresolved ?? false;
  }
}

// Addresses that are not the public internet: loopback, private, link-local, carrier-grade NAT, multicast, reserved.
const nonPublic: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['224.0.0.0', 3, 'ipv4'],
  ['::', 127, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

const privateList = new BlockList();
for (const [net, prefix, family] of nonPublic) privateList.addSubnet(net, prefix, family);

/** `::ffff:10.0.0.1` (or `::ffff:a00:1`, as URLs write it) is 10.0.0.1: check the IPv4 address it stands for. */
export function canonical(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return { address: dotted[1]!, family: 'ipv4' };
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
    return { address: [high >> 8, high & 255, low >> 8, low & 255].join('.'), family: 'ipv4' };
  }
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** True for loopback, private, link-local, carrier-grade NAT, unique-local, multicast and reserved addresses. */
export function isNonPublic(address: string): boolean {
  const a = canonical(address);
  return privateList.check(a.address, a.family);
}

/** Says which kind of non-public address this is, for a refusal message. */
export function describeAddress(address: string): string {
  const a = canonical(address);
  if (a.address.startsWith('127.') || a.address === '::1') return `a loopback address (${address})`;
  if (/^169\.254\./.test(a.address) || /^fe[89ab]/i.test(a.address)) return `a link-local address (${address})`;
  return `a private or reserved address (${address})`;
}

/** Decides whether docent may call a URL given by a project admin, and which addresses it may use for it. */
export class OutboundGuard {
  private readonly allowed = new BlockList();

  constructor(allowedCidrs: string[]) {
    for (const cidr of allowedCidrs) {
      const [net, bits] = cidr.split('/');
      this.allowed.addSubnet(net!, Number(bits), isIP(net!) === 6 ? 'ipv6' : 'ipv4');
    }
  }

  private isAllowed(address: string): boolean {
    const a = canonical(address);
    return this.allowed.check(a.address, a.family) || (a.family === 'ipv4' && this.allowed.check(`::ffff:${a.address}`, 'ipv6'));
  }

  /**
   * Resolves the URL's host once and returns the addresses to connect to, so the caller pins them and a second DNS
   * answer cannot lead elsewhere. Refused: private, loopback or link-local addresses outside the allowed networks,
   * and plain http unless every address is in an allowed network.
   */
  async check(url: URL, setting = 'DOCENT_ALLOW_PRIVATE_NETWORKS'): Promise<string[]> {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundRefused(`${url.protocol} URLs are not allowed; use https`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((r) => r.address);
    } catch {
      throw new OutboundRefused(`the host ${host} does not resolve`, { unresolved: true });
    }
    for (const address of addresses) {
      if (isNonPublic(address) && !this.isAllowed(address)) {
        throw new OutboundRefused(`${url.host} resolves to ${describeAddress(address)}; an operator can allow that network with ${setting}`);
      }
    }
    if (url.protocol === 'http:' && !addresses.every((a) => this.isAllowed(a))) {
      throw new OutboundRefused(`plain http is allowed only for networks listed in ${setting}; use https`);
    }
    return addresses;
  }
}
