import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Code, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, type JsonResponse } from '../support/http';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';

// Issue 35 items 2 and 4, end to end: a job reads a read-only context repository beside its own (and cannot write
// there), and the agent reads the repository's AGENTS.md (.docent/AGENTS.md wins) into its system prompt, bounded.
// Real gateway, worker, Temporal, MongoDB and git over HTTP; only the model and the GitHub API are doubles.

const token = 'ghs_docenttesttoken0123456789';
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let outsideDir: string;
let worker: Started;
const keys: Record<string, string> = {};
/** What the worker's disk held while the agent's write to the context repository was being answered. */
let duringTurn: { entries: string[]; codeFile: string | null } | undefined;

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const systemOf = (req: ChatRequest) => JSON.stringify(req.messages.find((m) => m.role === 'system')?.content ?? '');
const toolReplies = (req: ChatRequest) => req.messages.filter((m) => m.role === 'tool').length;
const requestsFor = (instruction: string) => model.requests.filter((q) => lastUser(q).includes(instruction));

const codeFile = 'module.exports = 42; // CODE-MARKER\n';
const bigInstructions = `BIG-START\n${'x'.repeat(20_000)}\nBIG-END\n`;

/** Reads the code repository, tries to write there with a tool and a command, then writes the docs: one tool call a request. */
function script(req: ChatRequest): ScriptedTurn {
  const prompt = lastUser(req);
  if (!prompt.includes('document the answer')) return { text: 'Nothing to change\n\nThe repository is fine.' };
  switch (toolReplies(req)) {
    case 0:
      return { toolCalls: [{ name: 'read_file', args: { path: 'src/answer.js', repository: 'acme/code' } }] };
    case 1:
      return { toolCalls: [{ name: 'write_file', args: { path: 'src/answer.js', content: 'module.exports = 0;\n', repository: 'acme/code' } }] };
    case 2:
      return { toolCalls: [{ name: 'run_command', args: { command: 'cat /context/acme/code/src/answer.js; touch /context/acme/code/new 2>&1; echo ran' } }] };
    case 3: {
      const entries = readdirSync(workspaceDir);
      const context = entries.find((e) => e.endsWith('.context'));
      duringTurn = { entries, codeFile: context ? readFileSync(path.join(workspaceDir, context, 'acme/code/src/answer.js'), 'utf8') : null };
      return { toolCalls: [{ name: 'write_file', args: { path: 'docs/api.md', content: '# API\n\nThe answer is 42.\n' } }] };
    }
    default:
      return { text: 'Document the answer\n\nRead it from acme/code.' };
  }
}

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  outsideDir = await mkdtemp(path.join(os.tmpdir(), 'docent-outside-'));
  await writeFile(path.join(outsideDir, 'AGENTS.md'), 'OUTSIDE-SECRET\n');
  await git.createRepo('acme', 'docs', {
    'docs/api.md': '# API\n\nThe answer is unknown.\n',
    'AGENTS.md': 'ROOT-INSTRUCTIONS\n',
    '.docent/AGENTS.md': 'DOCENT-WINS-MARKER: write short pages.\n',
  });
  await git.createRepo('acme', 'code', { 'src/answer.js': codeFile });
  await git.createRepo('acme', 'big', { 'AGENTS.md': bigInstructions });
  await git.createRepo('acme', 'linked', { 'README.md': '# Linked\n' }, async (work) => symlink(path.join(outsideDir, 'AGENTS.md'), path.join(work, 'AGENTS.md')));
  gw = await startGateway({
    ...modelSettings(model),
    DOCENT_GITHUB_GIT_URL: git.url,
  });
  await gw.deps.tenancy.createOrg('acme');
  for (const name of ['docs', 'big', 'linked']) {
    await gw.deps.tenancy.createProject({ _id: name, orgId: 'acme', repository: `acme/${name}`, ref: 'main' });
    keys[name] = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: name })).key;
  }
  worker = await startWorkerProcess(agentWorkerEnv({ gw, model, github, git, token, workspaceDir }));
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
  await rm(outsideDir, { recursive: true, force: true });
});

const api = (project: string, method: string, p: string, body?: unknown): Promise<JsonResponse> => callApi(gw.url, keys[project]!, method, `/v2/agent/${project}${p}`, body);

async function finishedJob(project: string, prompt: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await api(project, 'POST', '/job', { prompt, ...extra });
  expect(r.status).toBe(201);
  const { id } = await r.json();
  return poll(
    `job ${id}`,
    async () => (await api(project, 'GET', `/job/${id}`)).json(),
    (job) => job.status !== 'active',
    90_000,
  );
}

describe('context repositories', () => {
  it('the agent reads a context repository, its write there is refused, and only the job repository changes in the pull request', async () => {
    const job = await finishedJob('docs', 'document the answer from the code', { contextRepositories: [{ repo: 'acme/code' }] });
    expect(job).toMatchObject({ status: 'completed', contextRepositories: [{ repo: 'acme/code' }] });

    const requests = requestsFor('document the answer');
    expect(lastUser(requests[0]!)).toContain('acme/code');
    // The file read from the code repository reaches the model's next request; the write there comes back refused.
    expect(JSON.stringify(requests[1]!.messages.at(-1))).toContain('CODE-MARKER');
    expect(JSON.stringify(requests[2]!.messages.at(-1))).toMatch(/acme\/code.*is a read-only context repository/);
    // Sandboxed commands read it at /context and cannot change it either.
    const ran = JSON.stringify(requests[3]!.messages.at(-1));
    expect(ran).toContain('CODE-MARKER');
    expect(ran).toContain('Read-only file system');
    expect(duringTurn?.entries).toContain(`${job.id}.context`);
    expect(duringTurn?.codeFile).toBe(codeFile);

    // The pull request holds the docs change alone; nothing was pushed to the code repository.
    expect(github.pulls.map((p) => p.head)).toEqual([`docent/${job.id}`]);
    expect(job.prLink).toBe(github.pulls[0]!.html_url);
    expect((await git.git('acme', 'docs', 'diff', '--name-only', 'main', `docent/${job.id}`)).trim()).toBe('docs/api.md');
    expect(await git.git('acme', 'docs', 'show', `docent/${job.id}:docs/api.md`)).toBe('# API\n\nThe answer is 42.\n');
    expect(git.pushes.get('/acme/code.git')).toBeUndefined();
    expect((await git.git('acme', 'code', 'branch', '--list')).trim()).toBe('* main');

    // The context clone goes with the job's workspace.
    await poll(
      'the context clone removed',
      async () => existsSync(path.join(workspaceDir, `${job.id}.context`)),
      (present) => !present,
    );
  });

  it('refuses a create with more than 10 context repositories, a refused URL, or the job repository itself (400)', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => ({ repo: `acme/lib${i}` }));
    for (const contextRepositories of [
      eleven,
      [{ repo: 'file:///etc/passwd/x' }],
      [{ repo: 'https://user:pw@example.com/acme/code.git' }],
      [{ repo: 'acme/docs' }],
      [{ repo: 'acme/code', ref: '../main' }],
    ]) {
      const r = await api('docs', 'POST', '/job', { prompt: 'document the answer', contextRepositories });
      expect({ contextRepositories, status: r.status }).toEqual({ contextRepositories, status: 400 });
      expect(await r.json()).toMatchObject({ code: 'invalid_argument' });
    }
  });
});

describe('context repositories over Connect', () => {
  const client = () => createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
  const headers = () => ({ authorization: `Bearer ${keys.docs}` });

  it('CreateAgentJob takes them, the job and its turns show them, and 11 are invalid_argument', async () => {
    const { job } = await client().createAgentJob({ projectId: 'docs', prompt: 'check over connect', contextRepositories: [{ repo: 'acme/code', ref: 'main' }] }, { headers: headers() });
    expect(job?.contextRepositories.map((c) => [c.repo, c.ref])).toEqual([['acme/code', 'main']]);
    const done = await poll(
      'the Connect job',
      async () => (await client().getAgentJob({ projectId: 'docs', jobId: job!.id }, { headers: headers() })).job!,
      (j) => j.turns[0]?.status !== 'active',
    );
    expect(done.turns[0]?.projectInstructions).toMatchObject({ path: '.docent/AGENTS.md', truncated: false });
    expect(lastUser(requestsFor('check over connect')[0]!)).toContain('acme/code at main');
    const eleven = Array.from({ length: 11 }, (_, i) => ({ repo: `acme/lib${i}` }));
    await expect(client().createAgentJob({ projectId: 'docs', prompt: 'too many', contextRepositories: eleven }, { headers: headers() })).rejects.toMatchObject({ code: Code.InvalidArgument });
  });
});

describe("the repository's AGENTS.md", () => {
  it('.docent/AGENTS.md wins over AGENTS.md in the first request, and the first turn names it', async () => {
    const job = await finishedJob('docs', 'check the instructions');
    const first = requestsFor('check the instructions')[0]!;
    expect(systemOf(first)).toContain('DOCENT-WINS-MARKER');
    expect(systemOf(first)).not.toContain('ROOT-INSTRUCTIONS');
    expect(job.turns[0].projectInstructions).toEqual({ path: '.docent/AGENTS.md', bytes: Buffer.byteLength('DOCENT-WINS-MARKER: write short pages.\n'), truncated: false });
  });

  it('an oversized AGENTS.md is cut at 16 KiB with a note that says so', async () => {
    const job = await finishedJob('big', 'look at the big instructions');
    const system = systemOf(requestsFor('look at the big instructions')[0]!);
    expect(system).toContain('BIG-START');
    expect(system).not.toContain('BIG-END');
    expect(system).toContain(`AGENTS.md is ${Buffer.byteLength(bigInstructions)} bytes; only its first 16384 bytes are shown`);
    expect(job.turns[0].projectInstructions).toEqual({ path: 'AGENTS.md', bytes: Buffer.byteLength(bigInstructions), truncated: true });
  });

  it('an AGENTS.md that links outside the clone is not read, and the turn says why', async () => {
    const job = await finishedJob('linked', 'look at the linked instructions');
    expect(job.status).toBe('completed');
    expect(systemOf(requestsFor('look at the linked instructions')[0]!)).not.toContain('OUTSIDE-SECRET');
    expect(job.turns[0].projectInstructions).toMatchObject({ path: 'AGENTS.md', refused: expect.stringMatching(/outside the repository/) });
  });
});
