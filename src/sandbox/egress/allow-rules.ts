// The operator's DOCENT_SANDBOX_EGRESS_ALLOW entries and a project's --allow-host patterns, parsed and matched.
import { isIP } from 'node:net';
import { AddressSet, parseNetwork } from '../../net/addresses';

/** One private endpoint sandboxes may reach: a host name or a network, on one port. */
export type EgressAllowRule = { kind: 'host'; host: string; port: number } | { kind: 'network'; cidr: string; port: number };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Parses `host:port`, `CIDR:port` or `[v6-CIDR]:port`; throws a message naming the bad entry. */
export function parseEgressAllowRule(entry: string): EgressAllowRule {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(entry.trim());
  const port = m ? Number(m[3]) : 0;
  if (!m || port < 1 || port > 65535) throw new TypeError(`${JSON.stringify(entry)} is not host:port or CIDR:port`);
  const target = (m[1] ?? m[2]!).toLowerCase();
  const [address, bits] = target.split('/');
  const family = isIP(address ?? '');
  if (family !== 0) {
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : Number(bits);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || bits === '' || !parseNetwork(`${address}/${prefix}`)) {
      throw new TypeError(`${JSON.stringify(entry)} has a bad prefix length`);
    }
    return { kind: 'network', cidr: `${address}/${prefix}`, port };
  }
  if (bits !== undefined || !HOST_NAME.test(target)) throw new TypeError(`${JSON.stringify(entry)} is not host:port or CIDR:port`);
  return { kind: 'host', host: target, port };
}

/** Matches (host name, port) and (address, port) against the operator's rules. */
export class OperatorAllowList {
  private readonly hosts = new Set<string>();
  private readonly networks = new Map<number, AddressSet>();

  constructor(rules: readonly EgressAllowRule[]) {
    for (const r of rules) {
      if (r.kind === 'host') {
        this.hosts.add(`${r.host}:${r.port}`);
        continue;
      }
      const list = this.networks.get(r.port) ?? new AddressSet();
      list.add(r.cidr);
      this.networks.set(r.port, list);
    }
  }

  allowsHost(host: string, port: number): boolean {
    return this.hosts.has(`${host.toLowerCase()}:${port}`);
  }

  allowsAddress(address: string, port: number): boolean {
    return this.networks.get(port)?.has(address) ?? false;
  }
}

/** An operator-listed endpoint on the worker's own loopback, which the sandbox reaches at the same address and port. */
export interface LoopbackEndpoint {
  /** What the relay asks the proxy for: `127.0.0.1`, or `localhost` for a rule that names it. */
  host: string;
  port: number;
}

/**
 * The rules that name 127.0.0.1 (or localhost) on a port: inside the sandbox those would otherwise reach its own
 * loopback. Ports below 1024 are left out: the sandbox's user may not listen on them (it reaches them through the
 * proxy explicitly, `curl --noproxy ''`).
 */
export function loopbackEndpoints(rules: readonly EgressAllowRule[]): LoopbackEndpoint[] {
  const byPort = new Map<number, LoopbackEndpoint>();
  for (const r of rules) {
    if (r.port < 1024) continue;
    if (r.kind === 'host' ? r.host === 'localhost' : new AddressSet([r.cidr]).has('127.0.0.1')) {
      if (!byPort.has(r.port)) byPort.set(r.port, { host: r.kind === 'host' ? r.host : '127.0.0.1', port: r.port });
    }
  }
  return [...byPort.values()];
}

const PATTERN = /^(\*\.)?[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** A project's --allow-host entry: `registry.example` (that host) or `*.example.org` (its subdomains, not itself). */
export function isAllowHostPattern(p: string): boolean {
  return p.length <= 253 && PATTERN.test(p);
}

/** Whether `host` is one of the names or subdomain patterns in `patterns`. */
export function hostMatches(patterns: readonly string[], host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return patterns.some((p) => (p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p));
}
