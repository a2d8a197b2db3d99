import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AddressSet, HostNetwork, nonPublicReason } from './addresses';

/** An outbound URL docent will not call; the message says why and which setting would allow it. */
export class OutboundRefused extends Error {
  /** The host did not resolve here, which another machine (a worker) may see differently. */
  readonly unresolved: boolean;

  constructor(message: string, opts: { unresolved?: boolean } = {}) {
    super(message);
    this.unresolved = opts.unresolved ?? false;
  }
}

/** Decides whether docent may call a URL given by a project admin, and which addresses it may use for it. */
export class OutboundGuard {
  private readonly allowed: AddressSet;

  constructor(allowedCidrs: string[]) {
    this.allowed = new AddressSet(allowedCidrs);
  }

  /**
   * Resolves the URL's host once and returns the addresses to connect to, so the caller pins them and a second DNS
   * answer cannot lead elsewhere. Refused: any address src/net/addresses.ts calls non-public (this machine's own and
   * its subnets' neighbours included) outside the allowed networks, and plain http unless every address is in an allowed network.
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
    const here = HostNetwork.current();
    for (const address of addresses) {
      const why = this.allowed.has(address) ? undefined : nonPublicReason(address, here);
      if (why) throw new OutboundRefused(`${url.host} resolves to ${why}; an operator can allow that network with ${setting}`);
    }
    if (url.protocol === 'http:' && !addresses.every((a) => this.allowed.has(a))) {
      throw new OutboundRefused(`plain http is allowed only for networks listed in ${setting}; use https`);
    }
    return addresses;
  }
}
