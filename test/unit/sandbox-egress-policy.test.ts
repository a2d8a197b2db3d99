// The egress proxy's decisions, on address literals and names this machine resolves from /etc/hosts only.
import type http from 'node:http';
import os from 'node:os';
import { loadConfig } from '../../src/config';
import { EgressPolicy, EgressRecorder, parseEgressAllowRule, type EgressRecord } from '../../src/sandbox/egress';
import { hostMatches, isAllowHostPattern, loopbackEndpoints } from '../../src/sandbox/egress/allow-rules';
import { hostHeaderMismatch } from '../../src/sandbox/egress/proxy';

const open = new EgressPolicy({ operatorAllow: [], allowHosts: [] });
const ownAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

describe('EgressPolicy', () => {
  it.each([
    ['127.0.0.1', /loopback address/],
    ['::1', /loopback address/],
    ['::ffff:127.0.0.1', /loopback address/],
    ['10.1.2.3', /private or reserved address/],
    ['192.168.1.1', /private or reserved address/],
    ['169.254.169.254', /cloud metadata address/],
    ['fd00:ec2::254', /cloud metadata address/],
    ['fd12::1', /private or reserved address/],
    ['fe80::1', /link-local address/],
    ['0.0.0.0', /private or reserved address/],
  ])('refuses %s and names the operator setting', async (host, why) => {
    const d = await open.decide(host, 443);
    expect(d.allowed).toBe(false);
    if (!d.allowed) {
      expect(d.reason).toMatch(why);
      expect(d.reason).toContain('DOCENT_SANDBOX_EGRESS_ALLOW');
    }
  });

  it("refuses this machine's own non-loopback address, which the private ranges may not cover", async () => {
    const d = await open.decide(ownAddress!, 80);
    expect(d).toEqual({ allowed: false, reason: expect.stringMatching(/worker's own machine/) });
  });

  it("refuses this machine's own address in every spelling, its NAT64 and 6to4 forms, and a neighbour on its subnet", async () => {
    const [a, b, c, d] = ownAddress!.split('.').map(Number) as [number, number, number, number];
    const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
    const spellings = [
      `0:0:0:0:0:ffff:${hex(a, b)}:${hex(c, d)}`,
      `0000:0000:0000:0000:0000:FFFF:${hex(a, b).padStart(4, '0')}:${hex(c, d).padStart(4, '0')}`,
      `0:0:0:0:0:ffff:${ownAddress}`,
      `::ffff:${ownAddress}`,
      `::${hex(a, b)}:${hex(c, d)}`,
      `[::ffff:0:${hex(a, b)}:${hex(c, d)}]`,
    ];
    for (const host of spellings) expect([host, await open.decide(host, 80)]).toEqual([host, { allowed: false, reason: expect.stringMatching(/worker's own machine/) }]);
    for (const host of [`64:ff9b::${hex(a, b)}:${hex(c, d)}`, `64:ff9b:1::${hex(a, b)}:${hex(c, d)}`, `2002:${hex(a, b)}:${hex(c, d)}::1`, `${a}.${b}.${c}.${d ^ 1}`]) {
      expect([host, (await open.decide(host, 80)).allowed]).toEqual([host, false]);
    }
  });

  it("allows an operator's endpoint however the sandbox spells its address, and nothing else there", async () => {
    const p = new EgressPolicy({ operatorAllow: ['127.0.0.1:8080', '[::ffff:10.0.0.0/104]:5432'].map(parseEgressAllowRule), allowHosts: [] });
    for (const host of ['127.0.0.1', '0:0:0:0:0:ffff:7f00:1', '::ffff:127.0.0.1']) expect([host, (await p.decide(host, 8080)).allowed]).toEqual([host, true]);
    expect((await p.decide('10.1.2.3', 5432)).allowed).toBe(true);
    expect((await p.decide('0:0:0:0:0:ffff:7f00:1', 9200)).allowed).toBe(false);
  });

  it('refuses a name that resolves to loopback, and what is not a host name', async () => {
    expect(await open.decide('localhost', 9200)).toEqual({ allowed: false, reason: expect.stringMatching(/loopback/) });
    expect((await open.decide('bad host\r\nx', 80)).allowed).toBe(false);
    expect((await open.decide('example.org', 0)).allowed).toBe(false);
  });

  it('lets a public address through, pinned to the address it checked', async () => {
    expect(await open.decide('93.184.216.34', 443)).toEqual({ allowed: true, addresses: ['93.184.216.34'] });
  });

  it("allows the operator's private endpoints on their port only", async () => {
    const p = new EgressPolicy({ operatorAllow: ['10.0.0.0/8:5432', '127.0.0.1:8080', 'localhost:9999'].map(parseEgressAllowRule), allowHosts: [] });
    expect((await p.decide('10.1.2.3', 5432)).allowed).toBe(true);
    expect((await p.decide('10.1.2.3', 5433)).allowed).toBe(false);
    expect((await p.decide('127.0.0.1', 8080)).allowed).toBe(true);
    expect((await p.decide('127.0.0.1', 9200)).allowed).toBe(false);
    expect((await p.decide('localhost', 9999)).allowed).toBe(true);
    expect((await p.decide('localhost', 9200)).allowed).toBe(false);
  });

  it("refuses hosts outside the project's list before resolving them", async () => {
    const p = new EgressPolicy({ operatorAllow: [], allowHosts: ['registry.npmjs.org', '*.example.org'] });
    const d = await p.decide('203.0.113.80', 443);
    expect(d).toEqual({ allowed: false, reason: expect.stringContaining("not in the project's allowed hosts (registry.npmjs.org, *.example.org)") });
    // On the list but private: still refused.
    const q = new EgressPolicy({ operatorAllow: [], allowHosts: ['localhost'] });
    expect((await q.decide('localhost', 80)).allowed).toBe(false);
  });
});

describe('allow rules', () => {
  it('parses host:port, CIDR:port and [v6]:port, and refuses the rest', () => {
    expect(parseEgressAllowRule('10.0.0.0/8:5432')).toEqual({ kind: 'network', cidr: '10.0.0.0/8', port: 5432 });
    expect(parseEgressAllowRule('127.0.0.1:8080')).toEqual({ kind: 'network', cidr: '127.0.0.1/32', port: 8080 });
    expect(parseEgressAllowRule('[fd00::/8]:443')).toEqual({ kind: 'network', cidr: 'fd00::/8', port: 443 });
    expect(parseEgressAllowRule('Registry.Internal:8080')).toEqual({ kind: 'host', host: 'registry.internal', port: 8080 });
    expect(parseEgressAllowRule('[::ffff:127.0.0.1]:4873')).toEqual({ kind: 'network', cidr: '::ffff:127.0.0.1/128', port: 4873 });
    for (const bad of ['10.0.0.0/33:1', 'host', 'host:0', 'host:70000', ':80', 'a b:80', '10.0.0.0/:80', '[::ffff:0:0/95]:80']) expect(() => parseEgressAllowRule(bad)).toThrow(TypeError);
  });

  it('matches *.domain to its subdomains only', () => {
    const list = ['registry.npmjs.org', '*.example.org'];
    expect(hostMatches(list, 'registry.npmjs.org')).toBe(true);
    expect(hostMatches(list, 'REGISTRY.npmjs.org.')).toBe(true);
    expect(hostMatches(list, 'a.b.example.org')).toBe(true);
    expect(hostMatches(list, 'example.org')).toBe(false);
    expect(hostMatches(list, 'evilexample.org')).toBe(false);
    expect(hostMatches(list, 'registry.npmjs.org.evil.com')).toBe(false);
    expect(['a.example', '*.example.org'].every(isAllowHostPattern)).toBe(true);
    expect(['*', 'a.*.org', 'http://a.org', 'a.org/x', ''].some(isAllowHostPattern)).toBe(false);
  });

  it('reads DOCENT_SANDBOX_EGRESS_ALLOW and names a bad entry', () => {
    expect(loadConfig({ DOCENT_SANDBOX_EGRESS_ALLOW: '10.0.0.0/8:5432, db.internal:5432' }).sandbox?.egressAllow).toEqual([
      { kind: 'network', cidr: '10.0.0.0/8', port: 5432 },
      { kind: 'host', host: 'db.internal', port: 5432 },
    ]);
    expect(loadConfig({}).sandbox?.egressAllow).toEqual([]);
    expect(() => loadConfig({ DOCENT_SANDBOX_EGRESS_ALLOW: '10.0.0.0/8' })).toThrow(/DOCENT_SANDBOX_EGRESS_ALLOW: "10.0.0.0\/8" is not host:port or CIDR:port/);
  });
});

describe('loopbackEndpoints', () => {
  it('relays the listed endpoints on 127.0.0.1 or localhost into the sandbox, each port once, none below 1024', () => {
    const rules = ['127.0.0.1:4873', '[::ffff:127.0.0.1]:4873', 'localhost:5432', '127.0.0.0/8:6379', '127.0.0.1:80', '10.0.0.0/8:4874', 'registry.internal:4875'].map(parseEgressAllowRule);
    expect(loopbackEndpoints(rules)).toEqual([
      { host: '127.0.0.1', port: 4873 },
      { host: 'localhost', port: 5432 },
      { host: '127.0.0.1', port: 6379 },
    ]);
  });
});

describe('hostHeaderMismatch', () => {
  const request = (...hosts: string[]) => ({ rawHeaders: hosts.flatMap((h) => ['Host', h]) }) as unknown as http.IncomingMessage;

  it.each([
    ['example.org', 'http://example.org/a'],
    ['EXAMPLE.org:80', 'http://example.org/a'],
    ['example.org:8080', 'http://Example.ORG:8080/'],
    ['[0:0:0:0:0:0:0:1]:8080', 'http://[::1]:8080/'],
  ])('forwards Host %s for %s', (host, url) => {
    expect(hostHeaderMismatch(request(host), new URL(url))).toBeUndefined();
  });

  it.each([
    ['cdn-neighbour.example', 'http://example.org/'],
    ['example.org:8080', 'http://example.org/'],
    ['example.org@cdn-neighbour.example', 'http://example.org/'],
    ['example.org/x', 'http://example.org/'],
    ['', 'http://example.org/'],
  ])('refuses Host %j for %s', (host, url) => {
    expect(hostHeaderMismatch(request(host), new URL(url))).toMatch(/is not the URL's host/);
  });

  it('refuses two Host headers, and leaves a request without one to the proxy', () => {
    expect(hostHeaderMismatch(request('example.org', 'cdn-neighbour.example'), new URL('http://example.org/'))).toMatch(/more than one Host/);
    expect(hostHeaderMismatch(request(), new URL('http://example.org/'))).toBeUndefined();
  });
});

describe('EgressRecorder', () => {
  const record = (i: number): EgressRecord => ({ host: `h${i % 3}.example`, port: 443, method: 'CONNECT', allowed: i % 2 === 0, bytesOut: 10, bytesIn: 100 });

  it('writes one event per connection up to the cap, then one summary of the rest', async () => {
    const written: Array<[number, Record<string, unknown>]> = [];
    const r = new EgressRecorder(async (seq, data) => {
      written.push([seq, data]);
    }, 5);
    for (let i = 0; i < 1005; i++) r.record(record(i));
    await r.flush();
    expect(written.map(([seq]) => seq)).toEqual([1, 2, 3, 4, 5, 0]);
    const [, summary] = written[5]!;
    expect(summary).toMatchObject({ summary: true, connections: 1000, unlisted: 0 });
    const rows = summary.rows as Array<{ connections: number; bytesIn: number }>;
    expect(rows.reduce((n, row) => n + row.connections, 0)).toBe(1000);
    expect(rows.reduce((n, row) => n + row.bytesIn, 0)).toBe(100_000);
  });

  it('keeps going when the events store fails, counting what was lost', async () => {
    const r = new EgressRecorder(async () => {
      throw new Error('down');
    }, 2);
    for (let i = 0; i < 3; i++) r.record(record(i));
    await r.flush();
    expect(r.failed).toBe(3);
  });
});
