import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings, startScriptedModel } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';

// Mintlify's deprecated v1 agent API as a Mintlify client uses it, through the gateway over sockets, a worker process,
// real Temporal, MongoDB and git over HTTP; only the model provider and the GitHub API are doubles.

const token = 'ghs_docenttesttoken0123456789';
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
let adminKey: string;

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

function script(req: ChatRequest): ScriptedTurn {
  if (lastUser(req).includes('fix the typo')) {
    return req.messages.at(-1)?.role === 'tool'
      ? { text: ['Fix typo in README', '\n\nCorrected "wrold" to "world".'] }
      : { toolCalls: [{ name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } }] };
  }
  return { text: 'No change needed\n\nThe repository already does what was asked.' };
}

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello wrold\n' });
  gw = await startGateway({ ...modelSettings(model), DOCENT_GITHUB_GIT_URL: git.url });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main', domain: 'docs.widgets.test' });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;
  worker = await startWorkerProcess(agentWorkerEnv({ gw, model, github, git, token, workspaceDir }));
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  // A worker killed mid-step may still be writing in a clone: retried, as a busy folder empties.
  await rm(workspaceDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
});

const api = (method: string, p: string, body?: unknown) => callApi(gw.url, adminKey, method, p, body);

/** The SSE frames of a stream, read to its end. */
const framesOf = (text: string) =>
  text
    .split('\n\n')
    .filter((f) => f.includes('data: '))
    .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as { type: string; data: Record<string, unknown> });

describe('POST /v1/agent/{projectId}/job (Mintlify v1, deprecated)', () => {
  let sessionId: string;
  let branchName: string;

  it('runs the messages as a job and streams its events until it ends, naming the session and its branch in headers', async () => {
    const r = await api('POST', '/v1/agent/widgets/job', {
      messages: [
        { role: 'system', content: 'Keep the wording short.' },
        { role: 'user', content: 'Please fix the typo in the README' },
      ],
      asDraft: true,
      model: 'sonnet',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    sessionId = r.headers.get('x-session-id')!;
    branchName = r.headers.get('x-branch-name')!;
    expect(sessionId).toMatch(/^job_/);
    expect(branchName).toBe(`docent/${sessionId}`);
    // The stream ends by itself once the job is no longer active.
    const frames = framesOf(await r.text());
    expect(frames.map((f) => f.type)).toEqual(expect.arrayContaining(['turn.started', 'pull_request', 'turn.finished']));
    expect(frames.at(-1)).toMatchObject({ type: 'status', data: { status: 'completed' } });
    // The system message reached the agent after the instruction.
    expect(model.requests.some((q) => lastUser(q).includes('Please fix the typo in the README') && lastUser(q).includes('Additional instructions:\\nKeep the wording short.'))).toBe(true);
    const pull = github.pulls.find((p) => p.head === branchName)!;
    expect(pull.draft).toBe(true);
  });

  it('reads back as a Mintlify session: haulted, completed, the pull request, its title and one to-do per instruction', async () => {
    const r = await api('GET', `/v1/agent/widgets/job/${sessionId}`);
    expect(r.status).toBe(200);
    const pull = github.pulls.find((p) => p.head === branchName)!;
    expect(await r.json()).toEqual({
      sessionId,
      subdomain: 'docs.widgets.test',
      branch: branchName,
      haulted: true,
      haultReason: 'completed',
      pullRequestLink: pull.html_url,
      messageToUser: expect.stringContaining('Corrected'),
      todos: [{ id: 'turn-1', content: expect.stringContaining('Please fix the typo in the README'), status: 'completed', priority: 'medium' }],
      title: 'Fix typo in README',
      createdAt: expect.any(String),
    });
  });

  it('lists sessions newest first, skip and take paging through them', async () => {
    const other = await api('POST', '/v2/agent/widgets/job', { prompt: 'say nothing' });
    const created = await other.json();
    const newest = created.id as string;
    // Mintlify's v2 source: the repository's URL (git clones it) and the branch the agent works on.
    expect(created.source).toEqual({ repository: `${git.url}/acme/widgets`, ref: `docent/${newest}`, name: 'acme/widgets', baseRef: 'main' });
    const all = (await (await api('GET', '/v1/agent/widgets/jobs')).json()).allSessions as Array<{ sessionId: string; haultReason: string }>;
    expect(all.map((s) => s.sessionId)).toEqual([newest, sessionId]);
    expect((await (await api('GET', '/v1/agent/widgets/jobs?skip=1&take=1')).json()).allSessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([sessionId]);
    expect((await (await api('GET', '/v1/agent/widgets/jobs?take=1')).json()).allSessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([newest]);
    for (const q of ['take=0', 'take=101', 'skip=-1', 'take=abc']) expect((await api('GET', `/v1/agent/widgets/jobs?${q}`)).status).toBe(400);
  });

  it('refuses messages with no text (400) and an unknown session (404), with the error field', async () => {
    for (const body of [{ messages: [] }, { messages: [{ role: 'user', content: '   ' }] }, { messages: [{ role: 'user', content: 'x' }], branch: 'bad..name' }]) {
      const r = await api('POST', '/v1/agent/widgets/job', body);
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ error: expect.any(String), code: 'invalid_argument' });
    }
    const missing = await api('GET', '/v1/agent/widgets/job/job_nope');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: expect.any(String) });
  });
});
