// Decides where a sandboxed command may connect through the egress proxy, and to which address exactly.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AddressSet, HostNetwork, nonPublicReason } from '../../net/addresses';
import { hostMatches, OperatorAllowList, type EgressAllowRule } from './allow-rules';

export type EgressDecision = { allowed: true; addresses: string[] } | { allowed: false; reason: string };

export interface EgressPolicyOptions {
  /** DOCENT_SANDBOX_EGRESS_ALLOW: private endpoints every sandbox may reach. */
  operatorAllow: readonly EgressAllowRule[];
  /** The project's --allow-host list; empty: any public host. */
  allowHosts: readonly string[];
}

const OPERATOR_SETTING = 'DOCENT_SANDBOX_EGRESS_ALLOW';
/** Cloud metadata endpoints, named so a refusal says what was tried (their ranges are non-public anyway). */
const METADATA = new AddressSet(['169.254.169.254', 'fd00:ec2::254']);
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;

/** Why the sandbox may not reach `address`: src/net/addresses.ts's rules, which cover the worker's own machine and subnets. */
function refusalFor(address: string, here: HostNetwork): string | undefined {
  if (METADATA.has(address)) return `${address} is a cloud metadata address`;
  const why = nonPublicReason(address, here);
  return why && `${why} is not public`;
}

export class EgressPolicy {
  private readonly operator: OperatorAllowList;

  constructor(private readonly opts: EgressPolicyOptions) {
    this.operator = new OperatorAllowList(opts.operatorAllow);
  }

  /** Resolves `host` once and returns the addresses to connect to (never looked up again), or why not. */
  async decide(rawHost: string, port: number): Promise<EgressDecision> {
    const host = rawHost.replace(/^\[|\]$/g, '').toLowerCase();
    const literal = isIP(host) !== 0;
    if (!literal && !HOST_NAME.test(host)) return { allowed: false, reason: `${JSON.stringify(rawHost.slice(0, 100))} is not a host name` };
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { allowed: false, reason: `port ${port} is not a TCP port` };
    if (this.opts.allowHosts.length > 0 && !hostMatches(this.opts.allowHosts, host)) {
      return { allowed: false, reason: `${host} is not in the project's allowed hosts (${this.opts.allowHosts.join(', ')}); a project admin can add it with \`docent project update --allow-host\`` };
    }
    let addresses: string[];
    try {
      addresses = literal ? [host] : (await lookup(host, { all: true, verbatim: true })).map((r) => r.address);
    } catch {
      return { allowed: false, reason: `${host} does not resolve` };
    }
    if (addresses.length === 0) return { allowed: false, reason: `${host} does not resolve` };
    if (this.operator.allowsHost(host, port)) return { allowed: true, addresses };
    const here = HostNetwork.current();
    for (const address of addresses) {
      if (this.operator.allowsAddress(address, port)) continue;
      // One refused answer refuses the host: a name that mixes public and private answers is a rebinding attempt.
      const why = refusalFor(address, here);
      if (why) return { allowed: false, reason: `${host}:${port} refused: ${why}; an operator can allow a private endpoint with ${OPERATOR_SETTING}` };
    }
    return { allowed: true, addresses };
  }
}
