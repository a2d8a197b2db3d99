// Egress from the real bwrap sandbox: the only way out is the worker's proxy, which refuses every local service.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runInSandbox, type SandboxSpec } from '../../src/sandbox';
import { parseEgressAllowRule, startTurnEgress, type TurnEgress } from '../../src/sandbox/egress';
import { startGateway, type RunningGateway } from '../support/gateway';
import { labInternetAllow } from '../support/lab-internet';

const isRoot = process.getuid?.() === 0;
const owner = isRoot ? { uid: 61000, gid: 61000 } : undefined;
const MiB = 1024 * 1024;
/** This machine's non-loopback address (eth0): every service bound to 0.0.0.0 answers on it. */
const HOST_ADDRESS = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
/** Its IPv6 address other than link-local, if it has one (here a unique-local one; elsewhere a global one). */
const HOST_ADDRESS_V6 = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv6' && !i.internal && !i.address.startsWith('fe80'))?.address;

let root: string;
let workspace: string;
let home: string;
let gateway: RunningGateway;
let allowedServer: http.Server;
let allowedPort: number;
let hostServer: http.Server;
let hostPort: number;
/** The lab's relay to the internet, when its resolver answers with a documentation address (test/support/lab-internet.ts). */
let internet: string[];

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
  internet = await labInternetAllow();
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
    egressLoopback: egress.loopback,
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

/** `fd00::2` as `fd00:0:0:0:0:0:0:2`: the spelling a string comparison misses. */
function uncompressed(v6: string): string {
  const [head = '', tail = ''] = v6.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  return [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t].join(':');
}

/** Run inside the sandbox: for each target, a raw CONNECT and a raw plain GET to the proxy's relay, and each status line. */
const RAW_PROXY_CLIENT = `
const net = require('net');
const ask = (text) => new Promise((resolve) => {
  const s = net.connect(3128, '127.0.0.1');
  let got = '';
  const done = (line) => { s.destroy(); resolve(line); };
  s.on('data', (c) => { got += c; if (got.includes('\\r\\n')) done(got.split('\\r\\n')[0]); });
  s.on('error', (e) => done(e.code));
  s.on('close', () => done(got.split('\\r\\n')[0] || 'closed'));
  s.write(text);
});
(async () => {
  for (const t of process.argv.slice(2)) {
    const connect = await ask('CONNECT ' + t + ' HTTP/1.1\\r\\nHost: ' + t + '\\r\\n\\r\\n');
    const get = await ask('GET http://' + t + '/ HTTP/1.1\\r\\nHost: ' + t + '\\r\\nConnection: close\\r\\n\\r\\n');
    console.log(t + ' CONNECT=' + connect + ' GET=' + get);
  }
})();
`;

/** A one-file package packed by the real npm, for the mirror to serve. */
const MIRROR_PACKAGE: { tgz: Buffer; integrity: string } = { tgz: Buffer.alloc(0), integrity: '' };

async function packMirrorPackage(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'docent-mirror-pkg-'));
  try {
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'docent-mirror-probe', version: '1.0.0', main: 'index.js', license: 'MIT' }));
    await writeFile(path.join(dir, 'index.js'), "module.exports = 'served by the mirror on the worker';\n");
    const { stdout } = await promisify(execFile)('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: dir });
    MIRROR_PACKAGE.tgz = await readFile(path.join(dir, stdout.trim()));
    MIRROR_PACKAGE.integrity = `sha512-${createHash('sha512').update(MIRROR_PACKAGE.tgz).digest('base64')}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A registry mirror on the worker's loopback: the package document and its tarball, and the paths it was asked for. */
async function startRegistryMirror(): Promise<{ server: http.Server; port: number; requests: string[] }> {
  if (MIRROR_PACKAGE.tgz.length === 0) await packMirrorPackage();
  const requests: string[] = [];
  let port = 0;
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/docent-mirror-probe/-/docent-mirror-probe-1.0.0.tgz') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(MIRROR_PACKAGE.tgz);
      return;
    }
    if (req.url === '/docent-mirror-probe') {
      const dist = { tarball: `http://127.0.0.1:${port}/docent-mirror-probe/-/docent-mirror-probe-1.0.0.tgz`, integrity: MIRROR_PACKAGE.integrity };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ name: 'docent-mirror-probe', 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name: 'docent-mirror-probe', version: '1.0.0', dist } } }));
      return;
    }
    res.writeHead(404).end('{}');
  });
  port = await listen(server, '127.0.0.1');
  return { server, port, requests };
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
      // Direct too (NO_PROXY names loopback): the sandbox's own 127.0.0.1 on the listed port is relayed through the proxy.
      expect(r.output).toBe('private endpoint says hello\nprivate endpoint says hello\ndirect=0\n403\n');
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

  it("refuses the worker's own addresses in every spelling, their NAT64 and 6to4 forms and a subnet neighbour, CONNECT and plain alike", async () => {
    let hits = 0;
    const anyServer = http.createServer((_req, res) => {
      hits += 1;
      res.end('listener on every address of the worker\n');
    });
    // '::' takes IPv4 too: like a service bound to 0.0.0.0, every address of the machine reaches it.
    const port = await listen(anyServer, '::');
    try {
      const [a, b, c, d] = HOST_ADDRESS!.split('.').map(Number) as [number, number, number, number];
      const [hi, lo] = [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
      const targets = [
        `[0:0:0:0:0:ffff:${hi}:${lo}]`,
        `[0:0:0:0:0:ffff:${HOST_ADDRESS}]`,
        `[::ffff:${HOST_ADDRESS}]`,
        `[::FFFF:${hi.padStart(4, '0')}:${lo.padStart(4, '0')}]`,
        ...(HOST_ADDRESS_V6 ? [`[${uncompressed(HOST_ADDRESS_V6)}]`] : []),
        `[64:ff9b::${hi}:${lo}]`,
        `[64:ff9b:1::${hi}:${lo}]`,
        `[2002:${hi}:${lo}::1]`,
        `${a}.${b}.${c}.${d ^ 1}`,
      ].map((t) => `${t}:${port}`);
      await writeFile(path.join(workspace, 'raw-proxy.js'), RAW_PROXY_CLIENT);
      await withEgress({}, async (egress, events) => {
        const r = await runInSandbox(spec(egress), `node raw-proxy.js ${targets.map((t) => `'${t}'`).join(' ')}`);
        expect(r.output.trim().split('\n')).toEqual(targets.map((t) => `${t} CONNECT=HTTP/1.1 403 Forbidden GET=HTTP/1.1 403 Forbidden`));
        await egress.close();
        expect(events.filter((e) => e.allowed === false)).toHaveLength(targets.length * 2);
        expect(events).toContainEqual(expect.objectContaining({ method: 'CONNECT', port, reason: expect.stringMatching(/worker's own machine \(0:0:0:0:0:ffff:/) }));
      });
      expect(hits).toBe(0);
      // The control: listed by the operator, the same spelling reaches the listener, so the refusals above are the policy's.
      await withEgress({ allow: [`${HOST_ADDRESS}:${port}`] }, async (egress) => {
        const r = await runInSandbox(spec(egress), `node raw-proxy.js '${targets[0]}'`);
        expect(r.output).toBe(`${targets[0]} CONNECT=HTTP/1.1 200 Connection Established GET=HTTP/1.1 200 OK\n`);
      });
      expect(hits).toBe(1);
    } finally {
      anyServer.close();
    }
  }, 120_000);

  it('forwards a plain request only when its Host header names the host the proxy checked', async () => {
    await withEgress({ allow: [`127.0.0.1:${allowedPort}`, `localhost:${allowedPort}`] }, async (egress, events) => {
      const code = (host: string, url: string) => `curl -s -m 5 --noproxy '' -H '${host}' -o /dev/null -w '%{http_code}\\n' ${url}`;
      const r = await runInSandbox(
        spec(egress),
        [
          code('Host: cdn-neighbour.example', `http://127.0.0.1:${allowedPort}/`),
          code(`Host: 127.0.0.1:${allowedPort + 1}`, `http://127.0.0.1:${allowedPort}/`),
          code(`Host: 127.0.0.1:${allowedPort}@cdn-neighbour.example`, `http://127.0.0.1:${allowedPort}/`),
          code(`Host: LOCALHOST:${allowedPort}`, `http://localhost:${allowedPort}/`),
          code(`Host: 127.0.0.1:${allowedPort}`, `http://127.0.0.1:${allowedPort}/`),
          `curl -sS -m 5 --noproxy '' -H 'Host: cdn-neighbour.example' http://127.0.0.1:${allowedPort}/`,
        ].join('; '),
      );
      expect(r.output).toBe(
        `403\n403\n403\n200\n200\ndocent egress proxy: the Host header ("cdn-neighbour.example") is not the URL's host (127.0.0.1:${allowedPort}); the proxy forwards only the host it checked\n`,
      );
      await egress.close();
      expect(events.filter((e) => e.allowed === false)).toHaveLength(4);
    });
  }, 60_000);

  it("runs npm ci against a registry mirror the operator lists on the worker's loopback, without extra flags", async () => {
    const { server, port, requests } = await startRegistryMirror();
    try {
      const tarball = `http://127.0.0.1:${port}/docent-mirror-probe/-/docent-mirror-probe-1.0.0.tgz`;
      const lock = {
        name: 'egress-mirror',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'egress-mirror', version: '1.0.0', dependencies: { 'docent-mirror-probe': '1.0.0' } },
          'node_modules/docent-mirror-probe': { version: '1.0.0', resolved: tarball, integrity: MIRROR_PACKAGE.integrity },
        },
      };
      const files: Record<string, string> = {
        'package.json': JSON.stringify({ name: 'egress-mirror', version: '1.0.0', dependencies: { 'docent-mirror-probe': '1.0.0' } }),
        'package-lock.json': JSON.stringify(lock),
        '.npmrc': `registry=http://127.0.0.1:${port}/\n`,
      };
      for (const [name, text] of Object.entries(files)) {
        await writeFile(path.join(workspace, name), text);
        if (owner) await chown(path.join(workspace, name), owner.uid, owner.gid);
      }
      await withEgress({ allow: [`127.0.0.1:${port}`] }, async (egress) => {
        const r = await runInSandbox(spec(egress), `npm ci --no-audit --no-fund && node -e "console.log(require('docent-mirror-probe'))"`);
        expect(r.output).toContain('served by the mirror on the worker');
        expect(r.exitCode).toBe(0);
      });
      expect(requests).toContain('/docent-mirror-probe/-/docent-mirror-probe-1.0.0.tgz');
    } finally {
      server.close();
    }
  }, 120_000);

  it("narrows egress to the project's allowed hosts", async () => {
    await withEgress({ allow: internet, allowHosts: ['registry.npmjs.org', '*.example.org'] }, async (egress, events) => {
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
    await withEgress({ allow: internet }, async (egress) => {
      const r = await runInSandbox(spec(egress), "npm ci --no-audit --no-fund && node -e \"console.log('is-number says', require('is-number')(5))\"");
      expect(r.output).toContain('is-number says true');
      expect(r.exitCode).toBe(0);
    });
  }, 120_000);

  it('runs pip install from the package index', async () => {
    await withEgress({ allow: internet }, async (egress) => {
      const r = await runInSandbox(
        spec(egress),
        'python3 -m pip install --quiet --no-cache-dir --disable-pip-version-check --target ./pydeps six==1.16.0 && PYTHONPATH=./pydeps python3 -c "import six; print(\'six\', six.__version__)"',
      );
      expect(r.output).toContain('six 1.16.0');
      expect(r.exitCode).toBe(0);
    });
  }, 120_000);
});
