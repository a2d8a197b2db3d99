import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Code, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentJobStatus, AgentService } from '../../src/gen/agent/v2/agent_pb';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, type JsonResponse } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { createWidgetsProject } from '../support/projects';

// Whole agent jobs through the gateway over sockets, a worker process, real Temporal, MongoDB and git over HTTP;
// only the model provider and the GitHub API are doubles.

const token = 'ghs_docenttesttoken0123456789';
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
let adminKey: string;
let otherKey: string;
const delayedOnce = new Set<string>();

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === 'tool';

/** The model's script, keyed by the instruction in the prompt: a tool call first, then the title and summary. */
function script(req: ChatRequest): ScriptedTurn {
  const prompt = lastUser(req);
  const instruction = /Instruction: ([^"\\]*)/.exec(prompt)?.[1] ?? '';
  if (instruction.startsWith('fix the typo')) {
    return afterTool(req) ? { text: ['Fix typo in README', '\n\nCorrected "wrold" to "world".'] } : { toolCalls: [{ name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } }] };
  }
  if (instruction.startsWith('add a contributing guide')) {
    return afterTool(req)
      ? { text: 'Add CONTRIBUTING.md\n\nExplains how to send changes.' }
      : { toolCalls: [{ name: 'write_file', args: { path: 'CONTRIBUTING.md', content: '# Contributing\n\nOpen a pull request.\n' } }] };
  }
  if (instruction.startsWith('escape the workspace')) {
    return afterTool(req) ? { text: 'Nothing changed\n\nThe path was refused.' } : { toolCalls: [{ name: 'write_file', args: { path: '../../etc/evil', content: 'x' } }] };
  }
  if (instruction.startsWith('slow durable change')) {
    if (afterTool(req)) return { text: 'Add NOTES.md\n\nA durable note.' };
    // The first attempt stalls long enough for the test to kill its worker; the retry answers at once.
    const first = !delayedOnce.has(instruction);
    delayedOnce.add(instruction);
    return { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'durable\n' } }], firstChunkDelayMs: first ? 60_000 : 0 };
  }
  if (instruction.startsWith('think forever')) return { text: 'never', firstChunkDelayMs: 60_000 };
  return { text: 'No change needed\n\nThe repository already does what was asked.' };
}

const workerEnv = () => ({
  ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }),
  DOCENT_LOG_LEVEL: 'info',
  // The durability tests kill a worker: its workflows' next tasks go to another worker after 2 s instead of 10.
  DOCENT_WORKER_STICKY_TIMEOUT_MS: '2000',
});

const startWorker = () => startWorkerProcess(workerEnv());

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello wrold\n', 'src/index.js': 'module.exports = 42;\n' });
  gw = await startGateway({
    ...modelSettings(model),
    DOCENT_GITHUB_GIT_URL: git.url,
    DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS: '3000',
  });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  await gw.deps.tenancy.createProject({ _id: 'ghost', orgId: 'acme', repository: `${git.url}/acme/no-such-repo.git`, ref: 'main' });
  await gw.deps.tenancy.createProject({ _id: 'other', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;
  otherKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'other' })).key;
  worker = await startWorker();
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (method: string, p: string, body?: unknown, key = adminKey, headers: Record<string, string> = {}): Promise<JsonResponse> => callApi(gw.url, key, method, p, body, headers);

async function waitForJob(projectId: string, jobId: string, done: (job: any) => boolean, key = adminKey, timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await (await api('GET', `/v2/agent/${projectId}/job/${jobId}`, undefined, key)).json();
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${JSON.stringify(job)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
const finished = (job: { status: string }) => job.status !== 'active';

describe('agent jobs over REST', () => {
  let jobId: string;
  let failedJobId: string;

  it('a job that edits a file ends completed with a pull request holding exactly its commit', async () => {
    const r = await api('POST', '/v2/agent/widgets/job', { prompt: 'fix the typo in the README' });
    expect(r.status).toBe(201);
    const created = await r.json();
    jobId = created.id;
    expect(r.headers.get('location')).toBe(`/v2/agent/widgets/job/${jobId}`);
    expect(created).toMatchObject({ status: 'active', prLink: null, model: model.modelId, archivedAt: null });
    // As Mintlify gives it: the repository's URL and the branch the agent works on; docent's values beside them.
    expect(created.source).toEqual({ repository: `${git.url}/acme/widgets`, ref: `docent/${jobId}`, name: 'acme/widgets', baseRef: 'main' });

    const job = await waitForJob('widgets', jobId, finished);
    expect(job.status).toBe('completed');
    expect(github.pulls).toHaveLength(1);
    const pr = github.pulls[0]!;
    expect(job.prLink).toBe(pr.html_url);
    expect(pr).toMatchObject({ head: `docent/${jobId}`, base: 'main', title: 'Fix typo in README', draft: false });
    expect(pr.body).toContain('Corrected');

    const commits = (await git.git('acme', 'widgets', 'rev-list', `main..docent/${jobId}`)).trim().split('\n');
    expect(commits).toHaveLength(1);
    expect(await git.git('acme', 'widgets', 'show', `docent/${jobId}:README.md`)).toBe('# Widgets\n\nHello world\n');
    expect((await git.git('acme', 'widgets', 'diff', '--name-only', `main`, `docent/${jobId}`)).trim()).toBe('README.md');
  });

  it('a follow-up adds one commit to the same branch and pull request', async () => {
    const r = await api('POST', `/v2/agent/widgets/job/${jobId}/message`, { prompt: 'add a contributing guide' });
    expect(r.status).toBe(200);
    expect((await r.json()).status).toBe('active');
    const job = await waitForJob('widgets', jobId, finished);
    expect(job.status).toBe('completed');
    expect(github.pulls).toHaveLength(1);
    expect(job.prLink).toBe(github.pulls[0]!.html_url);
    const commits = (await git.git('acme', 'widgets', 'rev-list', `main..docent/${jobId}`)).trim().split('\n');
    expect(commits).toHaveLength(2);
    expect(await git.git('acme', 'widgets', 'show', `docent/${jobId}:CONTRIBUTING.md`)).toContain('Open a pull request.');
    // The follow-up's model call saw the first instruction as context.
    const followUpRequest = model.requests.find((q) => lastUser(q).includes('add a contributing guide'))!;
    expect(lastUser(followUpRequest)).toContain('fix the typo in the README');
  });

  it('a job whose agent changes nothing ends completed with prLink null and pushes nothing', async () => {
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'check the README is fine' })).json();
    const job = await waitForJob('widgets', created.id, finished);
    expect(job).toMatchObject({ status: 'completed', prLink: null });
    await expect(git.git('acme', 'widgets', 'rev-parse', '--verify', `refs/heads/docent/${created.id}`)).rejects.toThrow(/Needed a single revision/);
  });

  it('a path outside the repository is refused and nothing is pushed', async () => {
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'escape the workspace' })).json();
    const job = await waitForJob('widgets', created.id, finished);
    expect(job).toMatchObject({ status: 'completed', prLink: null });
    const toolReply = model.requests
      .filter((q) => lastUser(q).includes('escape the workspace'))
      .at(-1)!
      .messages.at(-1);
    expect(JSON.stringify(toolReply)).toContain('outside the repository');
  });

  it('a job whose repository does not exist ends failed with a clear error', async () => {
    const ghostKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'ghost' })).key;
    const created = await (await api('POST', '/v2/agent/ghost/job', { prompt: 'fix the typo' }, ghostKey)).json();
    const job = await waitForJob('ghost', created.id, finished, ghostKey);
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('repository_not_found');
    expect(job.error.message).toMatch(/does not exist/);
    expect(job.prLink).toBeNull();
    failedJobId = created.id;
  });

  it('the Temporal UI tells the failed job from a completed one: DocentJobStatus is listed and filterable', async () => {
    // What the UI's search box sends (the workflow list query); both runs themselves ended Completed.
    const listed = async (query: string) => {
      const ids: string[] = [];
      for await (const w of gw.deps.temporal.workflow.list({ query })) ids.push(w.workflowId);
      return ids;
    };
    const failed = `agent-job-${failedJobId}`;
    const completed = `agent-job-${jobId}`;
    const deadline = Date.now() + 30_000;
    // Temporal's visibility store takes the upsert a moment after the workflow made it.
    while (!(await listed(`DocentJobStatus = 'failed' AND DocentProjectId = 'ghost'`)).includes(failed)) {
      if (Date.now() > deadline) throw new Error(`${failed} not listed with DocentJobStatus = 'failed' within 30 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(await listed(`DocentJobStatus = 'completed' AND DocentProjectId = 'widgets'`)).toContain(completed);
    expect(await listed(`DocentJobStatus = 'completed'`)).not.toContain(failed);
    const shown = await gw.deps.temporal.workflow.getHandle(failed).describe();
    expect(shown.status.name).toBe('COMPLETED');
    expect(shown.searchAttributes).toMatchObject({ DocentJobStatus: ['failed'], DocentProjectId: ['ghost'] });
  });

  it('a repeated Idempotency-Key returns the same job, never a second one', async () => {
    const headers = { 'idempotency-key': 'retry-me-1' };
    const first = await api('POST', '/v2/agent/widgets/job', { prompt: 'check the README is fine' }, adminKey, headers);
    const second = await api('POST', '/v2/agent/widgets/job', { prompt: 'check the README is fine' }, adminKey, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect((await second.json()).id).toBe((await first.json()).id);
  });

  it('another project’s key gets 404 for the job and does not see it in its list', async () => {
    const r = await api('GET', `/v2/agent/widgets/job/${jobId}`, undefined, otherKey);
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({ error: 'project not found', code: 'not_found' });
    expect((await api('GET', `/v2/agent/other/job/${jobId}`, undefined, otherKey)).status).toBe(404);
    const list = await (await api('GET', '/v2/agent/other/jobs', undefined, otherKey)).json();
    expect(list.jobs).toEqual([]);
  });

  it('lists jobs newest first, one page at a time, filtered by status', async () => {
    const all = await (await api('GET', '/v2/agent/widgets/jobs?limit=100')).json();
    expect(all.jobs.length).toBeGreaterThanOrEqual(4);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { jobs: Array<{ id: string }>; nextCursor: string | null } = await (await api('GET', `/v2/agent/widgets/jobs?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json();
      expect(page.jobs.length).toBeLessThanOrEqual(2);
      seen.push(...page.jobs.map((j) => j.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.jobs.map((j: { id: string }) => j.id));
    const completed = await (await api('GET', '/v2/agent/widgets/jobs?status=completed')).json();
    expect(completed.jobs.every((j: { status: string }) => j.status === 'completed')).toBe(true);
    expect((await api('GET', '/v2/agent/widgets/jobs?limit=0')).status).toBe(400);
  });

  it('lists jobs with their instruction, by the text of their instruction and by when they were created; a malformed filter is a 400', async () => {
    const list = async (query: string) => (await (await api('GET', `/v2/agent/widgets/jobs?limit=100&${query}`)).json()).jobs as Array<{ id: string; instruction: string; createdAt: string }>;
    const all = await list('');
    expect(all.find((j) => j.instruction === 'fix the typo in the README')).toBeDefined();
    const ids = (jobs: Array<{ id: string }>) => jobs.map((j) => j.id);
    // Case-insensitive text, matched as text: a pattern's characters match nothing here.
    const readme = await list('instruction=README%20IS');
    expect(ids(readme)).toEqual(ids(all.filter((j) => j.instruction.includes('README is'))));
    expect(readme.length).toBeGreaterThan(0);
    expect(await list(`instruction=${encodeURIComponent('.*')}`)).toEqual([]);
    const newest = all[0]!;
    expect(ids(await list(`createdBefore=${newest.createdAt}`))).toEqual(ids(all.filter((j) => j.createdAt < newest.createdAt)));
    expect(ids(await list(`createdAfter=${newest.createdAt}`))).toEqual(ids(all.filter((j) => j.createdAt >= newest.createdAt)));
    for (const query of ['createdAfter=yesterday', 'createdBefore=2026-13-01', `instruction=${'x'.repeat(201)}`, 'instruction=%20']) {
      const r = await api('GET', `/v2/agent/widgets/jobs?${query}`);
      expect([query, r.status]).toEqual([query, 400]);
      expect((await r.json()).code).toBe('invalid_argument');
    }
    // The Connect list filters alike.
    const connect = createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
    const { jobs } = await connect.listAgentJobs({ projectId: 'widgets', instruction: 'readme is', limit: 100 }, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(jobs.map((j) => j.id)).toEqual(ids(readme));
    expect(jobs.every((j) => j.instruction.includes('README is'))).toBe(true);
  });

  it('archiving an active job cancels it and records archivedAt; the job then takes no follow-up', async () => {
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'think forever' })).json();
    await waitForJob('widgets', created.id, () => model.requests.some((q) => lastUser(q).includes('think forever')));
    // While the agent works, its clone exists: the token must not have been written into it.
    const gitConfig = await readFile(path.join(workspaceDir, created.id, '.git', 'config'), 'utf8');
    expect(gitConfig).toContain('[remote "origin"]');
    expect(gitConfig).not.toContain(token);
    expect(gitConfig).not.toContain(Buffer.from(`x-access-token:${token}`).toString('base64'));
    const r = await api('POST', `/v2/agent/widgets/job/${created.id}/archive`);
    expect(r.status).toBe(200);
    const archived = await r.json();
    expect(archived.status).toBe('archived');
    expect(Date.parse(archived.archivedAt)).toBeGreaterThan(0);
    const handle = gw.deps.temporal.workflow.getHandle(`agent-job-${created.id}`);
    await expect(handle.result()).rejects.toMatchObject({ name: 'WorkflowFailedError', cause: { name: 'CancelledFailure' } });
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    // The cancelled workflow still removed the clone, in a scope the cancellation does not reach.
    await expect(stat(path.join(workspaceDir, created.id))).rejects.toThrow(/ENOENT/);
    expect((await waitForJob('widgets', created.id, () => true)).status).toBe('archived');
    const followUp = await api('POST', `/v2/agent/widgets/job/${created.id}/message`, { prompt: 'more' });
    expect(followUp.status).toBe(400);
    expect((await followUp.json()).code).toBe('failed_precondition');
  });

  it('rejects bad input with the error shape and creates nothing', async () => {
    const before = await gw.deps.mongo.db.collection('jobs').countDocuments();
    for (const body of [{ prompt: '   ' }, {}, { prompt: 'x'.repeat(40_000) }, { prompt: 'ok', asDraft: 'yes' }, { prompt: 'ok', surprise: 1 }]) {
      const r = await api('POST', '/v2/agent/widgets/job', body);
      expect(r.status).toBe(400);
      expect((await r.json()).code).toBe('invalid_argument');
    }
    expect(await gw.deps.mongo.db.collection('jobs').countDocuments()).toBe(before);
  });

  it('keeps the GitHub token out of the database and removes a finished job’s clone', async () => {
    const everything = JSON.stringify(await gw.deps.mongo.db.collection('jobs').find().toArray());
    expect(everything).not.toContain(token);
    await expect(stat(path.join(workspaceDir, jobId))).rejects.toThrow(/ENOENT/);
    expect(github.rejected).toEqual([]);
    expect(model.rejected).toEqual([]);
  });
});

describe('agent jobs over Connect', () => {
  const client = () => createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
  const headers = () => ({ authorization: `Bearer ${adminKey}` });

  it('creates a job and watches it to completion without polling', async () => {
    const { job } = await client().createAgentJob({ projectId: 'widgets', prompt: 'check the README is fine' }, { headers: headers() });
    expect(job?.status).toBe(AgentJobStatus.ACTIVE);
    const seen: AgentJobStatus[] = [];
    for await (const update of client().watchAgentJob({ projectId: 'widgets', jobId: job!.id }, { headers: headers() })) {
      seen.push(update.job!.status);
    }
    expect(seen[0]).toBe(AgentJobStatus.ACTIVE);
    expect(seen.at(-1)).toBe(AgentJobStatus.COMPLETED);
    const { job: final } = await client().getAgentJob({ projectId: 'widgets', jobId: job!.id }, { headers: headers() });
    expect(final?.prLink).toBeUndefined();
  });

  it('answers failed_precondition naming the setting when no model is configured', async () => {
    const bare = await startGateway({ DOCENT_MODEL_PROVIDER: '', DOCENT_MODEL: '' });
    try {
      const key = await createWidgetsProject(bare);
      const c = createClient(AgentService, createConnectTransport({ baseUrl: bare.url, httpVersion: '1.1' }));
      await expect(c.createAgentJob({ projectId: 'widgets', prompt: 'anything' }, { headers: { authorization: `Bearer ${key}` } })).rejects.toMatchObject({
        code: Code.FailedPrecondition,
        rawMessage: expect.stringContaining('DOCENT_MODEL_PROVIDER'),
      });
      const r = await fetch(`${bare.url}/v2/agent/widgets/job`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"prompt":"x"}' });
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ code: 'failed_precondition' });
    } finally {
      await bare.stop();
    }
  });
});

describe('durability', () => {
  it('a worker killed during the agent step is replaced and the job completes with one pull request and one commit', async () => {
    const prsBefore = github.pulls.length;
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'slow durable change' })).json();
    await waitForJob('widgets', created.id, () => model.requests.some((q) => lastUser(q).includes('slow durable change')));
    expect(await worker.stop('SIGKILL')).toBeNull();
    worker = await startWorker();
    const job = await waitForJob('widgets', created.id, finished);
    expect(job.status).toBe('completed');
    expect(github.pulls.length).toBe(prsBefore + 1);
    expect(job.prLink).toBe(github.pulls.at(-1)!.html_url);
    const commits = (await git.git('acme', 'widgets', 'rev-list', `main..docent/${created.id}`)).trim().split('\n');
    expect(commits).toHaveLength(1);
    expect(await git.git('acme', 'widgets', 'show', `docent/${created.id}:NOTES.md`)).toBe('durable\n');
  });

  it('a turn that starts over after its own push (its worker died before the push was recorded) opens its pull request with that one commit', async () => {
    const prsBefore = github.pulls.length;
    expect(await worker.stop('SIGKILL')).toBeNull();
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'add a contributing guide, once' })).json();
    // What the turn's earlier attempt pushed before its worker died: the turn's commit, with the turn's trailer.
    const trailer = `Docent-Job: ${created.id}\nDocent-Turn: ${created.id}/1`;
    const pushed = await git.commitFiles('acme', 'widgets', { 'CONTRIBUTING.md': '# Contributing\n\nOpen a pull request.\n' }, `Add CONTRIBUTING.md\n\n${trailer}`, `docent/${created.id}`);
    worker = await startWorker();
    const job = await waitForJob('widgets', created.id, finished);
    expect(job.status).toBe('completed');
    expect(github.pulls.length).toBe(prsBefore + 1);
    expect(job.prLink).toBe(github.pulls.at(-1)!.html_url);
    expect((await git.git('acme', 'widgets', 'rev-list', `main..docent/${created.id}`)).trim().split('\n')).toEqual([pushed]);
  });

  it('a repository slower to clone and fetch than the heartbeat timeout (3 s here) still gets its pull request', async () => {
    const prsBefore = github.pulls.length;
    // Issue 12 part 2: every clone and fetch of this repository is held 4 s; git steps heartbeat while they wait.
    git.slowDown('/acme/widgets.git', 4_000);
    try {
      const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'add a contributing guide, slowly' })).json();
      const job = await waitForJob('widgets', created.id, finished);
      expect({ status: job.status, error: job.error }).toEqual({ status: 'completed', error: undefined });
      expect(github.pulls.length).toBe(prsBefore + 1);
      expect(await git.git('acme', 'widgets', 'show', `docent/${created.id}:CONTRIBUTING.md`)).toContain('Open a pull request.');
    } finally {
      git.slowDown('/acme/widgets.git', 0);
    }
  });
});
