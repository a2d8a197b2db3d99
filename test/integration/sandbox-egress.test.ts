// Egress from the real bwrap sandbox: the only way out is the worker's proxy, which refuses every local service.
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runInSandbox, type SandboxSpec } from '../../src/sandbox';
import { parseEgressAllowRule, startTurnEgress, type TurnEgress } from '../../src/sandbox/egress';
import { startGateway, type RunningGateway } from '../support/gateway';

const isRoot = process.getuid?.() === 0;
const owner = isRoot ? { uid: 61000, gid: 61000 } : undefined;
const MiB = 1024 * 1024;
/** This machine's non-loopback address (eth0): every service bound to 0.0.0.0 answers on it. */
const HOST_ADDRESS = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

let root: string;
let workspace: string;
let home: string;
let gateway: RunningGateway;
let allowedServer: http.Server;
let allowedPort: number;
let hostServer: http.Server;
let hostPort: number;

async function ownedDir(p: string): Promise<void> {
  await mkdir(p, { recursive: true });
  if (owner) await chown(p, owner.uid, owner.gid);
}

function listen(server: http.Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'docent-egress-test-'));
  await chmod(root, 0o711);
  workspace = path.join(root, 'workspace');
  home = path.join(root, 'home');
  gateway = await startGateway();
  allowedServer = http.createServer((req, res) => {
    let body = 0;
    req.on('data', (c: Buffer) => (body += c.length));
    req.on('end', () => res.end(req.method === 'POST' ? `received ${body} bytes at ${req.url}\n` : 'private endpoint says hello\n'));
  });
  allowedPort = await listen(allowedServer, '127.0.0.1');
  hostServer = http.createServer((_req, res) => res.end('host address listener\n'));
  hostPort = await listen(hostServer, HOST_ADDRESS!);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  allowedServer?.close();
  hostServer?.close();
  await rm(root, { recursive: true, force: true });
});

beforeEach(async () => {
  for (const d of [workspace, home]) {
    await rm(d, { recursive: true, force: true });
    await ownedDir(d);
  }
});

function spec(egress: TurnEgress): SandboxSpec {
  return {
    workspace,
    home,
    network: true,
    egressSocket: egress.socketPath,
    runAs: owner,
    limits: { timeoutMs: 120_000, memoryBytes: 2 ** 31, maxProcesses: 256, maxFileBytes: 256 * MiB, maxDiskBytes: 512 * MiB, tmpBytes: 64 * MiB },
  };
}

async function withEgress<T>(opts: { allow?: string[]; allowHosts?: string[] }, fn: (egress: TurnEgress, events: Array<Record<string, unknown>>) => Promise<T>): Promise<T> {
  const events: Array<Record<string, unknown>> = [];
  const egress = await startTurnEgress({
    operatorAllow: (opts.allow ?? []).map(parseEgressAllowRule),
    allowHosts: opts.allowHosts ?? [],
    owner,
    onEvent: async (_seq, data) => {
      events.push(data);
    },
  });
  try {
    return await fn(egress, events);
  } finally {
    await egress.close();
  }
}

/** One line per target: what curl got through the proxy (plain and CONNECT; `--noproxy ''` overrides NO_PROXY's loopback) and directly. */
function probeScript(targets: string[]): string {
  return targets
    .map(
      (t) =>
        `p=$(curl -s -m 5 --noproxy '' -o /dev/null -w '%{http_code}' http://${t}/); ` +
        `c=$(curl -s -m 5 --noproxy '' --proxytunnel -o /dev/null -w '%{http_connect}' http://${t}/ 2>/dev/null; echo " exit=$?"); ` +
        `d=$(curl -s -m 5 --noproxy '*' -o /dev/null http://${t}/; echo "exit=$?"); ` +
        `echo "${t} proxy=$p connect=$c direct=$d"`,
    )
    .join('\n');
}

describe('sandbox egress: network on', () => {
  it('reaches no local service, metadata address or host address, through the proxy or without it', async () => {
    const gatewayPort = new URL(gateway.url).port;
    // The stack's Temporal ports (gRPC, Web UI), and the one this run's workflows use (test/support/global-setup.js).
    const temporal = [...new Set(['127.0.0.1:7233', '127.0.0.1:8233', gateway.deps.config.temporal.address])];
    const targets = ['127.0.0.1:9200', '127.0.0.1:27017', ...temporal, `127.0.0.1:${gatewayPort}`, 'localhost:9200', '169.254.169.254:80', `${HOST_ADDRESS}:${hostPort}`, '[::1]:9200'];
    await withEgress({}, async (egress, events) => {
      const r = await runInSandbox(spec(egress), probeScript(targets));
      expect(r.exitCode).toBe(0);
      const lines = r.output.trim().split('\n');
      expect(lines).toHaveLength(targets.length);
      for (const [i, t] of targets.entries()) {
        // 403 from the proxy, both ways; curl's exit 7 (cannot connect) without it: there is no route at all.
        expect(lines[i]).toBe(`${t} proxy=403 connect=403 exit=56 direct=exit=7`);
      }
      await egress.close();
      const refused = events.filter((e) => e.allowed === false);
      expect(refused).toHaveLength(targets.length * 2);
      expect(refused).toContainEqual(expect.objectContaining({ host: '127.0.0.1', port: 9200, method: 'GET', reason: expect.stringMatching(/loopback/) }));
      expect(refused).toContainEqual(expect.objectContaining({ host: HOST_ADDRESS, port: hostPort, method: 'CONNECT', reason: expect.stringMatching(/worker's own machine/) }));
      expect(events.filter((e) => e.allowed === true)).toEqual([]);
    });
  }, 120_000);

  it('tells a hostile curl why, and reads no index, UI page or metrics', async () => {
    await withEgress({}, async (egress) => {
      const r = await runInSandbox(
        spec(egress),
        `curl -sS -m 5 http://127.0.0.1:9200/_cat/indices; curl -sS -m 5 ${gateway.url}/metrics; ` +
          `curl -sS -m 5 --noproxy '' http://127.0.0.1:9200/_cat/indices; curl -sS -m 5 --noproxy '' http://127.0.0.1:8233/; curl -sS -m 5 --noproxy '' ${gateway.url}/metrics`,
      );
      // Loopback is not proxied (NO_PROXY): the sandbox's own loopback has nothing on these ports.
      expect(r.output).toContain('curl: (7) Failed to connect to 127.0.0.1 port 9200 after');
      expect(r.output).toContain(`curl: (7) Failed to connect to 127.0.0.1 port ${new URL(gateway.url).port} after`);
      expect(r.output).toContain(
        'docent egress proxy: 127.0.0.1:9200 refused: a loopback address (127.0.0.1) is not public; an operator can allow a private endpoint with DOCENT_SANDBOX_EGRESS_ALLOW',
      );
      expect(r.output).toContain('127.0.0.1:8233 refused');
      expect(r.output).not.toMatch(/# HELP|# TYPE|<html|health status index/i);
    });
  }, 60_000);

  it('gives no raw TCP, UDP or DNS: the namespace has only loopback', async () => {
    await withEgress({}, async (egress) => {
      const script = [
        'ip -o addr 2>/dev/null | grep -v " lo " || echo only-loopback',
        'cat /etc/resolv.conf 2>/dev/null || echo no-resolv-conf',
        `node -e "require('dgram').createSocket('udp4').send('x', 53, '192.0.2.53', (e) => { console.log('udp', e ? e.code : 'sent'); process.exit(0); })"`,
        `node -e "require('net').connect(443, '203.0.113.80').on('error', (e) => console.log('tcp', e.code)).on('connect', () => console.log('tcp connected'))"`,
        'getent hosts registry.npmjs.org || echo dns-fails',
      ].join('\n');
      const r = await runInSandbox(spec(egress), script);
      expect(r.output).toContain('only-loopback');
      expect(r.output).toContain('no-resolv-conf');
      expect(r.output).toContain('udp ENETUNREACH');
      expect(r.output).toContain('tcp ENETUNREACH');
      expect(r.output).toContain('dns-fails');
    });
  }, 60_000);

  it('reaches a private endpoint the operator lists, through the proxy only', async () => {
    await withEgress({ allow: [`127.0.0.1:${allowedPort}`] }, async (egress, events) => {
      const r = await runInSandbox(
        spec(egress),
        `curl -sS -m 5 --noproxy '' http://127.0.0.1:${allowedPort}/; curl -s -m 5 http://127.0.0.1:${allowedPort}/; echo direct=$?; curl -s -m 5 --noproxy '' -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:${allowedPort + 1}/`,
      );
      expect(r.output).toBe('private endpoint says hello\ndirect=7\n403\n');
      const post = await runInSandbox(
        spec(egress),
        `head -c 100000 /dev/zero | curl -sS -m 5 --noproxy '' --data-binary @- 'http://127.0.0.1:${allowedPort}/upload?x=1'; curl -sS -m 5 --noproxy '' --proxytunnel http://127.0.0.1:${allowedPort}/`,
      );
      expect(post.output).toBe('received 100000 bytes at /upload?x=1\nprivate endpoint says hello\n');
      await egress.close();
      expect(events).toContainEqual(expect.objectContaining({ method: 'POST', port: allowedPort, allowed: true, bytesOut: 100000 }));
      expect(events).toContainEqual(expect.objectContaining({ method: 'CONNECT', port: allowedPort, allowed: true }));
      expect(events).toContainEqual(expect.objectContaining({ host: '127.0.0.1', port: allowedPort, allowed: true, address: '127.0.0.1', bytesIn: expect.any(Number) }));
      expect((events.find((e) => e.allowed === true)?.bytesIn as number) > 0).toBe(true);
    });
  }, 60_000);

  it("narrows egress to the project's allowed hosts", async () => {
    await withEgress({ allowHosts: ['registry.npmjs.org', '*.example.org'] }, async (egress, events) => {
      const r = await runInSandbox(
        spec(egress),
        "curl -sS -m 20 -o /dev/null -w '%{http_code}\\n' https://registry.npmjs.org/is-number; curl -sS -m 5 http://pypi.org/simple/ ; curl -s -m 5 -o /dev/null https://pypi.org/; echo https=$?",
      );
      expect(r.output).toMatch(/^200\n/);
      expect(r.output).toContain("docent egress proxy: pypi.org is not in the project's allowed hosts (registry.npmjs.org, *.example.org)");
      expect(r.output).toContain('https=56');
      await egress.close();
      expect(events).toContainEqual(expect.objectContaining({ host: 'registry.npmjs.org', port: 443, method: 'CONNECT', allowed: true, address: expect.any(String) }));
      expect(events.filter((e) => e.host === 'pypi.org' && e.allowed === false)).toHaveLength(2);
    });
  }, 60_000);

  it('runs npm ci of a small lockfile from the registry', async () => {
    const lock = {
      name: 'egress-npm',
      version: '1.0.0',
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name: 'egress-npm', version: '1.0.0', dependencies: { 'is-number': '7.0.0' } },
        'node_modules/is-number': {
          version: '7.0.0',
          resolved: 'https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz',
          integrity: 'sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==',
          license: 'MIT',
          engines: { node: '>=0.12.0' },
        },
      },
    };
    await writeFile(path.join(workspace, 'package.json'), JSON.stringify({ name: 'egress-npm', version: '1.0.0', dependencies: { 'is-number': '7.0.0' } }));
    await writeFile(path.join(workspace, 'package-lock.json'), JSON.stringify(lock));
    if (owner) for (const f of ['package.json', 'package-lock.json']) await chown(path.join(workspace, f), owner.uid, owner.gid);
    await withEgress({}, async (egress) => {
      const r = await runInSandbox(spec(egress), "npm ci --no-audit --no-fund && node -e \"console.log('is-number says', require('is-number')(5))\"");
      expect(r.output).toContain('is-number says true');
      expect(r.exitCode).toBe(0);
    });
  }, 120_000);

  it('runs pip install from the package index', async () => {
    await withEgress({}, async (egress) => {
      const r = await runInSandbox(
        spec(egress),
        'python3 -m pip install --quiet --no-cache-dir --disable-pip-version-check --target ./pydeps six==1.16.0 && PYTHONPATH=./pydeps python3 -c "import six; print(\'six\', six.__version__)"',
      );
      expect(r.output).toContain('six 1.16.0');
      expect(r.exitCode).toBe(0);
    });
  }, 120_000);
});
