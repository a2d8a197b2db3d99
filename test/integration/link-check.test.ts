import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type LinkNetwork, linkTool } from '../../activities/agent-job/link-tool';
import { EgressPolicy, type EgressAllowRule, type EgressRecord, startEgressProxy } from '../../src/sandbox/egress';

// The agent's check_links tool on a real docs tree, with a real HTTP server for the outside links and a real egress
// proxy of a turn: what a broken-links run would fix, what it must leave alone, and what the turn's egress rules (or
// its network being off) keep it from asking.

type Found = { file: string; line: number; link: string; reason: string };
type Report = { pages: number; links: number; broken: Found[]; unchecked: Found[]; note?: string; error?: string };

let base: string;
let site: http.Server;
let origin: string;
const asked: string[] = [];

async function files(root: string, tree: Record<string, string>) {
  for (const [file, text] of Object.entries(tree)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
}

async function check(network: LinkNetwork, folder?: string): Promise<Report> {
  const tool = linkTool(base, network).check_links as unknown as { execute: (input: object, options: object) => Promise<Report> };
  return tool.execute(folder === undefined ? {} : { folder }, { toolCallId: 'test', messages: [], context: {} });
}

/** Runs `body` with a turn's egress proxy under these rules; returns what the proxy recorded. */
async function throughProxy(rules: { operatorAllow: EgressAllowRule[]; allowHosts?: string[] }, body: (network: LinkNetwork) => Promise<void>): Promise<EgressRecord[]> {
  const records: EgressRecord[] = [];
  const proxy = await startEgressProxy(path.join(base, '..', `${path.basename(base)}.sock`), new EgressPolicy({ allowHosts: [], ...rules }), (r) => records.push(r));
  try {
    await body({ egressSocket: proxy.socketPath });
  } finally {
    await proxy.close();
  }
  return records;
}

const sitePort = () => (site.address() as AddressInfo).port;

beforeAll(async () => {
  site = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    if (req.url === '/gone') res.writeHead(404).end('gone');
    else if (req.url === '/moved') res.writeHead(301, { location: '/gone' }).end();
    else if (req.url === '/flaky') res.writeHead(503).end();
    else if (req.url === '/away') res.writeHead(302, { location: `${origin}/collect?d=secret` }).end();
    else res.writeHead(200, { 'content-type': 'text/html' }).end('x'.repeat(1024 * 1024));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  base = await mkdtemp(path.join(os.tmpdir(), 'link-check-'));
  await files(base, {
    'README.md': '# Glaze\n',
    'docs/index.md': [
      '# Glaze',
      '',
      'See [install](./install.md), [install steps](install.md#steps), [the guide](/guides/billing) and [the readme](../README.md).',
      'Broken: [old page](./setup.md), [no anchor](install.md#missing), [site path](/guides/gone) and [here](#nowhere).',
      `Outside: [ok](${origin}/ok), [gone](${origin}/gone), [moved](${origin}/moved), [flaky](${origin}/flaky), [mail](mailto:a@b.c).`,
      '',
      '<a href="./ghost.md">ghost</a>',
      '',
      '## Nowhere else',
    ].join('\n'),
    'docs/install.md': '# Install\n\n## Steps\n\nRun it.\n',
    'docs/guides/billing.mdx': '# Billing\n\n<Note>Invoices.</Note>\n\nBack to [the start](../index.md#glaze).\n',
  });
});
afterAll(async () => {
  await new Promise((resolve) => site.close(resolve));
  await rm(base, { recursive: true, force: true });
});

describe('check_links', () => {
  it('lists the links that no longer resolve inside the docs and the outside ones that answer 4xx, and nothing else', async () => {
    let report!: Report;
    const records = await throughProxy({ operatorAllow: [{ kind: 'network', cidr: '127.0.0.1/32', port: sitePort() }] }, async (network) => {
      report = await check(network, 'docs');
    });
    expect(report.pages).toBe(3);
    expect(report.broken.map((b) => [b.file, b.line, b.link])).toEqual([
      ['docs/index.md', 4, './setup.md'],
      ['docs/index.md', 4, 'install.md#missing'],
      ['docs/index.md', 4, '/guides/gone'],
      ['docs/index.md', 4, '#nowhere'],
      ['docs/index.md', 5, `${origin}/gone`],
      ['docs/index.md', 5, `${origin}/moved`],
      ['docs/index.md', 7, './ghost.md'],
    ]);
    expect(report.broken.find((b) => b.link === `${origin}/gone`)?.reason).toBe('answers 404');
    expect(report.broken.find((b) => b.link === 'install.md#missing')?.reason).toContain('no heading with the anchor #missing');
    // A server error may pass: it is listed apart, for a person, never fixed as broken.
    expect(report.unchecked).toEqual([expect.objectContaining({ link: `${origin}/flaky`, reason: expect.stringContaining('503') })]);
    // Each outside URL asked once, and the large page's body was not read to the end to know it answers.
    expect(asked.filter((u) => u === '/ok')).toHaveLength(1);
    // Every request went through the turn's proxy: one tunnel per URL asked and per redirect followed.
    expect(records.map((r) => [r.method, r.host, r.port, r.allowed])).toEqual(Array.from({ length: 5 }, () => ['CONNECT', '127.0.0.1', sitePort(), true]));
  });

  it('asks no outside URL the egress rules refuse, and says which setting would allow it', async () => {
    asked.length = 0;
    let report!: Report;
    const records = await throughProxy({ operatorAllow: [] }, async (network) => {
      report = await check(network, 'docs');
    });
    expect(asked).toEqual([]);
    expect(report.broken.map((b) => b.link)).not.toContain(`${origin}/gone`);
    expect(report.unchecked.map((u) => u.link).sort()).toEqual([`${origin}/flaky`, `${origin}/gone`, `${origin}/moved`, `${origin}/ok`]);
    expect(report.unchecked[0]!.reason).toContain('DOCENT_SANDBOX_EGRESS_ALLOW');
    expect(records.map((r) => r.allowed)).toEqual([false, false, false, false]);
  });

  it('follows a redirect only to a host the turn may reach', async () => {
    await files(base, { 'away/index.md': `# Away\n\n[moved away](http://localhost:${sitePort()}/away)\n` });
    asked.length = 0;
    let report!: Report;
    // The project allows localhost alone; the redirect leads to 127.0.0.1, the same server under another name.
    const records = await throughProxy({ operatorAllow: [{ kind: 'host', host: 'localhost', port: sitePort() }], allowHosts: ['localhost'] }, async (network) => {
      report = await check(network, 'away');
    });
    expect(asked).toEqual(['/away']);
    expect(report.broken).toEqual([]);
    expect(report.unchecked).toEqual([expect.objectContaining({ link: `http://localhost:${sitePort()}/away`, reason: expect.stringContaining("127.0.0.1 is not in the project's allowed hosts") })]);
    expect(records.map((r) => [r.host, r.allowed])).toEqual([
      ['localhost', true],
      ['127.0.0.1', false],
    ]);
  });

  it("with the project's network off, asks no outside URL and says the outside links are unchecked", async () => {
    asked.length = 0;
    const report = await check({ off: "the project's network is off" }, 'docs');
    expect(asked).toEqual([]);
    expect(report.broken.map((b) => b.link)).toEqual(['./setup.md', 'install.md#missing', '/guides/gone', '#nowhere', './ghost.md']);
    expect(report.unchecked.map((u) => u.link).sort()).toEqual([`${origin}/flaky`, `${origin}/gone`, `${origin}/moved`, `${origin}/ok`]);
    expect(report.unchecked[0]!.reason).toContain("the project's network is off");
    expect(report.note).toMatch(/not asked: the project's network is off\. Only links inside the repository were checked/);
  });

  it('refuses a folder outside the clone with the reason, and no host path', async () => {
    const report = await check({ off: "the project's network is off" }, '../..');
    expect(report.error).toBeDefined();
    expect(JSON.stringify(report)).not.toContain(base);
  });
});
