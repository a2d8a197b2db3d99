import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import { runDocent } from '../support/cli';
import { poll } from '../support/poll';
import { asMetricsScraper } from '../support/config';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, type JsonResponse } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { readEventStream } from '../support/sse';
import { startReceiver } from '../support/webhook-receiver';
import { createWidgetsProject } from '../support/projects';

// What a job shows while and after it runs (turns, usage, events, webhooks, stop, retry, caps), through the gateway
// over sockets, a worker process, real Temporal, MongoDB and git over HTTP; only the model and GitHub are doubles.

const token = 'ghs_docenttransparency0123456789';
const secretKey = randomBytes(32).toString('base64');
// USD per million tokens: the scripted model's usage fields are priced with these.
const prices = { 'scripted-model': { input: 3, output: 15 } };
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
let adminKey: string;

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === 'tool';
const instructionOf = (req: ChatRequest) => /Instruction: ([^"\\]*)/.exec(lastUser(req))?.[1] ?? '';

/** The model's script: write the file the instruction names, then answer with a title and summary. */
function script(req: ChatRequest): ScriptedTurn {
  const instruction = instructionOf(req);
  const file = /^write (\S+)/.exec(instruction)?.[1];
  if (file) {
    return afterTool(req)
      ? { text: `Add ${file}\n\nWrites the file asked for.` }
      : { toolCalls: [{ name: 'write_file', args: { path: file, content: 'first line\nsecond line\nthird line\n' } }], ...(instruction.includes('slowly') ? { firstChunkDelayMs: 1500 } : {}) };
  }
  if (instruction.startsWith('think forever')) return { text: 'never', firstChunkDelayMs: 120_000 };
  return { text: 'No change needed\n\nNothing to do.' };
}

const settings = () => ({
  ...modelSettings(model),
  DOCENT_GITHUB_GIT_URL: git.url,
  DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS: '3000',
  DOCENT_SECRET_KEY: secretKey,
  // The test's webhook receiver listens on loopback, which only this setting lets docent call.
  DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
  DOCENT_MODEL_PRICES: JSON.stringify(prices),
});

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nline one\nline two\n' });
  gw = await startGateway(settings());
  adminKey = await createWidgetsProject(gw);
  worker = await startWorkerProcess({ ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), ...settings(), DOCENT_LOG_LEVEL: 'info' });
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> => callApi(gw.url, adminKey, method, p, body, headers);
const eventsUrl = (jobId: string, query = '') => `${gw.url}/v2/agent/widgets/job/${jobId}/events${query}`;

async function waitForJob(jobId: string, done: (job: any) => boolean, timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${JSON.stringify(job)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
const finished = (job: { status: string }) => job.status !== 'active';
const create = async (prompt: string) => (await (await api('POST', '/v2/agent/widgets/job', { prompt })).json()).id as string;

describe('turns and the event stream', () => {
  let jobId: string;
  let all: any[];

  it("streams a job's events live: the write of the named file, its commit and pull request, then the final status", async () => {
    jobId = await create('write docs/GUIDE.md slowly');
    const r = await readEventStream(eventsUrl(jobId), adminKey);
    expect(r.status).toBe(200);
    all = r.events;
    const types = all.map((e) => e.type);
    expect(types[0]).toBe('turn.started');
    expect(all).toContainEqual(expect.objectContaining({ type: 'step', data: expect.objectContaining({ kind: 'tool', tool: 'write_file', path: 'docs/GUIDE.md' }) }));
    // Each model call is a step too, with its tokens and its time.
    expect(all).toContainEqual(expect.objectContaining({ type: 'step', data: expect.objectContaining({ kind: 'model', inputTokens: 10, outputTokens: 1, startedAt: expect.any(String) }) }));
    expect(types.indexOf('commit')).toBeGreaterThan(types.indexOf('step'));
    expect(all.find((e) => e.type === 'pull_request').data.url).toBe(github.pulls.at(-1)!.html_url);
    expect(all.at(-1)).toMatchObject({ type: 'status', data: { status: 'completed' } });
    // Ids grow by one, and the SSE id and event name are the event's own.
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
    expect(all.every((e) => e.sseId === String(e.id) && e.sseEvent === e.type)).toBe(true);
    // A step names the tool, the path and the length of what was written, never the text.
    expect(r.raw).not.toContain('second line');
  });

  it('shows each turn with its files changed, line counts and token usage priced from the table', async () => {
    const job = await (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
    expect(job.turns).toHaveLength(1);
    const [turn] = job.turns;
    expect(turn).toMatchObject({ turn: 1, prompt: 'write docs/GUIDE.md slowly', status: 'completed', prLink: job.prLink, error: null });
    expect(turn.filesChanged).toEqual([{ path: 'docs/GUIDE.md', additions: 3, deletions: 0 }]);
    // Two model calls of the scripted provider, each reporting prompt_tokens 10 and one completion token.
    const calls = model.requests.filter((q) => instructionOf(q).startsWith('write docs/GUIDE.md'));
    expect(calls).toHaveLength(2);
    expect(turn.usage.inputTokens).toBe(20);
    expect(turn.usage.outputTokens).toBe(2);
    expect(turn.usage.costUsd).toBeCloseTo((20 * 3 + 2 * 15) / 1e6, 12);
    expect(new Date(turn.finishedAt).getTime()).toBeGreaterThanOrEqual(new Date(turn.startedAt).getTime());
    const list = await (await api('GET', '/v2/agent/widgets/jobs')).json();
    expect(list.jobs.find((j: any) => j.id === jobId).turns).toBeUndefined();
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: asMetricsScraper })).text();
    expect(metrics).toMatch(/docent_agent_tokens\{project="widgets",model="scripted-model",direction="input"\} [1-9]/);
  });

  it('a client that reconnects with Last-Event-ID gets exactly the events it missed', async () => {
    const live = await create('write docs/RESUME.md slowly');
    // The client goes away after the first two events, while the job is still working.
    const before = await readEventStream(eventsUrl(live), adminKey, { stopWhen: (events) => events.length >= 2 });
    expect(before.events).toHaveLength(2);
    const after = await readEventStream(eventsUrl(live), adminKey, { lastEventId: before.events[1].sseId });
    const everything = await readEventStream(eventsUrl(live), adminKey);
    expect([...before.events, ...after.events].map((e) => e.id)).toEqual(everything.events.map((e) => e.id));
    expect(after.events[0].id).toBe(3);
    expect(after.events.at(-1)).toMatchObject({ type: 'status', data: { status: 'completed' } });
    // ?after= does the same for clients that cannot set headers.
    const query = await readEventStream(eventsUrl(live, '?after=2'), adminKey);
    expect(query.events.map((e) => e.id)).toEqual(after.events.map((e) => e.id));
  });

  it('WatchAgentJob sends the same events, step records and all', async () => {
    const client = createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
    const seen: Array<{ id: number; type: string; data: unknown }> = [];
    for await (const m of client.watchAgentJob({ projectId: 'widgets', jobId, afterEventId: 0n }, { headers: { authorization: `Bearer ${adminKey}` } }))
      if (m.event) seen.push({ id: Number(m.event.id), type: m.event.type, data: JSON.parse(m.event.dataJson) });
    expect(seen).toEqual(all.map((e) => ({ id: e.id, type: e.type, data: e.data })));
  });

  it("names the job's workflow in the Temporal UI by its project and the prompt's first line", async () => {
    const description = await gw.deps.temporal.workflow.getHandle(`agent-job-${jobId}`).describe();
    expect(await description.staticSummary()).toBe('widgets: write docs/GUIDE.md slowly');
    expect(await description.staticDetails()).toContain('**Project** widgets');
  });

  it('refuses a Last-Event-ID that is not an event id, and another project cannot read the stream', async () => {
    const bad = await readEventStream(eventsUrl(jobId), adminKey, { lastEventId: 'abc' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.raw)).toMatchObject({ code: 'invalid_argument' });
    const unknown = await readEventStream(eventsUrl('job_nope'), adminKey);
    expect(unknown.status).toBe(404);
  });
});

describe('webhooks', () => {
  it('delivers agent_job.completed signed; a 500 is retried with the same webhook-id; the log (REST, `docent webhook deliveries`) shows every attempt, and REST and `docent webhook redeliver` send it again', async () => {
    const receiver = await startReceiver((n) => (n === 0 ? 500 : 204));
    try {
      const created = await api('POST', '/v2/agent/widgets/webhooks', { url: receiver.url, events: ['agent_job.completed'] });
      expect(created.status).toBe(201);
      const endpoint = await created.json();
      expect(endpoint.secret).toMatch(/^whsec_/);
      receiver.setSecret(endpoint.secret);
      // The secret is shown once: not in the list, and not in clear in the database.
      const listed = await (await api('GET', '/v2/agent/widgets/webhooks')).json();
      expect(JSON.stringify(listed)).not.toContain(endpoint.secret.slice(6));
      const stored = await gw.deps.mongo.db.collection('webhook_endpoints').findOne({ _id: endpoint.id });
      expect(JSON.stringify(stored)).not.toContain(endpoint.secret.slice(6));

      const jobId = await create('write NOTIFY.md');
      const deadline = Date.now() + 90_000;
      while (!receiver.received.some((r) => r.status === 204) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(receiver.received.map((r) => [r.verified, r.status])).toEqual([
        [true, 500],
        [true, 204],
      ]);
      const [first, second] = receiver.received;
      expect(second!.id).toBe(first!.id);
      expect(second!.body).toEqual(first!.body);
      // The delivery workflow's history names the endpoint, never its secret.
      const history = await gw.deps.temporal.workflow.getHandle(`webhook-${first!.id}`).fetchHistory();
      expect(JSON.stringify(history)).not.toContain(endpoint.secret.slice(6));
      expect(second!.body).toMatchObject({ type: 'agent_job.completed', data: { job: { id: jobId, status: 'completed', turns: [{ turn: 1, status: 'completed' }] } } });

      // The attempt is recorded once the receiver has answered it: the log may be a moment behind the receiver.
      const log = await poll(
        'both attempts in the log',
        async () => (await api('GET', `/v2/agent/widgets/webhooks/${endpoint.id}/deliveries`)).json(),
        (l) => l.deliveries.length >= 2,
        10_000,
      );
      expect(log.deliveries.map((d: any) => [d.messageId, d.attempt, d.status, d.ok])).toEqual([
        [first!.id, 2, 204, true],
        [first!.id, 1, 500, false],
      ]);

      // A redelivery sends the same message again, with the same webhook-id.
      const again = await api('POST', `/v2/agent/widgets/webhooks/${endpoint.id}/redeliver`, { messageId: first!.id });
      expect(again.status).toBe(202);
      while (receiver.received.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(receiver.received[2]).toMatchObject({ id: first!.id, verified: true, status: 204 });

      // The same through the `docent` command, run as a process with the deployment's settings.
      const cliEnv = { ...settings(), DOCENT_MONGO_DB: gw.deps.config.mongo.db, DOCENT_TASK_QUEUE_PREFIX: gw.deps.config.temporal.taskQueuePrefix };
      const cliLog = await runDocent(['webhook', 'deliveries', '--project', 'widgets', endpoint.id, '--json'], cliEnv);
      expect(cliLog).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(cliLog.stdout).map((d: any) => [d.messageId, d.attempt, d.status, d.ok])).toEqual([
        [first!.id, 1, 204, true],
        [first!.id, 2, 204, true],
        [first!.id, 1, 500, false],
      ]);
      const redelivered = await runDocent(['webhook', 'redeliver', '--project', 'widgets', endpoint.id, first!.id], cliEnv);
      expect(redelivered).toEqual({ code: 0, stdout: `redelivering ${first!.id} to ${endpoint.id}\n`, stderr: '' });
      while (receiver.received.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(receiver.received[3]).toMatchObject({ id: first!.id, verified: true, status: 204 });
      const unknown = await runDocent(['webhook', 'redeliver', '--project', 'widgets', endpoint.id, 'msg_none'], cliEnv);
      expect(unknown).toMatchObject({ code: 1, stdout: '' });
      expect(unknown.stderr).toContain('project widgets has no message msg_none');

      expect((await api('DELETE', `/v2/agent/widgets/webhooks/${endpoint.id}`)).status).toBe(200);
      expect((await (await api('GET', '/v2/agent/widgets/webhooks')).json()).webhooks).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('sends agent_job.archived when a job is archived, and its event stream ends with that status', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const endpoint = await (await api('POST', '/v2/agent/widgets/webhooks', { url: receiver.url, events: ['agent_job.archived'] })).json();
      receiver.setSecret(endpoint.secret);
      const jobId = await create('check nothing here');
      await waitForJob(jobId, finished);
      expect((await api('POST', `/v2/agent/widgets/job/${jobId}/archive`)).status).toBe(200);
      const deadline = Date.now() + 60_000;
      while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(receiver.received).toEqual([expect.objectContaining({ verified: true, status: 204 })]);
      expect(receiver.received[0]!.body).toMatchObject({ type: 'agent_job.archived', data: { job: { id: jobId, status: 'archived', archivedAt: expect.any(String) } } });
      const stream = await readEventStream(eventsUrl(jobId), adminKey);
      expect(stream.events.at(-1)).toMatchObject({ type: 'status', data: { status: 'archived' } });
      await api('DELETE', `/v2/agent/widgets/webhooks/${endpoint.id}`);
    } finally {
      await receiver.close();
    }
  });

  it.each([
    ['a link-local address', 'http://169.254.169.254/latest/meta-data'],
    ['a private address', 'https://10.1.2.3/hook'],
    ['a non-http scheme', 'ftp://example.com/hook'],
  ])('refuses a webhook URL with %s', async (_, url) => {
    const r = await api('POST', '/v2/agent/widgets/webhooks', { url });
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ code: 'invalid_argument', error: expect.stringContaining('refused') });
  });
});

describe('stop, retry and caps', () => {
  it('stops a running turn, keeps the job, and a follow-up then completes', async () => {
    const jobId = await create('think forever');
    const deadline = Date.now() + 60_000;
    while (!model.requests.some((q) => instructionOf(q).startsWith('think forever')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect((await api('POST', `/v2/agent/widgets/job/${jobId}/stop`)).status).toBe(202);
    const stopped = await waitForJob(jobId, finished);
    expect(stopped).toMatchObject({ status: 'failed', error: { code: 'stopped' } });
    expect(stopped.turns[0]).toMatchObject({ status: 'stopped', error: { code: 'stopped' } });

    expect((await api('POST', `/v2/agent/widgets/job/${jobId}/message`, { prompt: 'write AFTER_STOP.md' })).status).toBe(200);
    const done = await waitForJob(jobId, finished);
    expect(done.status).toBe('completed');
    expect(done.prLink).toMatch(/\/pull\/\d+$/);
    expect(done.turns.map((t: any) => t.status)).toEqual(['stopped', 'completed']);
    expect(await git.git('acme', 'widgets', 'show', `docent/${jobId}:AFTER_STOP.md`)).toContain('first line');
  });

  it('retries a turn whose pull request call failed without pushing again', async () => {
    github.refuseNextCreate();
    const jobId = await create('write RETRY.md');
    const failed = await waitForJob(jobId, finished);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'pull_request_rejected' } });
    const pushesBefore = git.pushes.get('/acme/widgets.git');
    const modelCallsBefore = model.requests.length;
    expect(await git.git('acme', 'widgets', 'rev-list', '--count', `main..docent/${jobId}`)).toBe('1\n');

    expect((await api('POST', `/v2/agent/widgets/job/${jobId}/retry`)).status).toBe(200);
    const done = await waitForJob(jobId, finished);
    expect(done.status).toBe('completed');
    expect(done.prLink).toBe(github.pulls.find((p) => p.head === `docent/${jobId}`)!.html_url);
    expect(git.pushes.get('/acme/widgets.git')).toBe(pushesBefore);
    expect(model.requests.length).toBe(modelCallsBefore);
    expect(await git.git('acme', 'widgets', 'rev-list', '--count', `main..docent/${jobId}`)).toBe('1\n');
    expect(done.turns).toEqual([expect.objectContaining({ turn: 1, status: 'completed', filesChanged: [{ path: 'RETRY.md', additions: 3, deletions: 0 }] })]);
  });

  it('only a failed job can be retried and only an active one stopped', async () => {
    const jobId = await create('check nothing');
    const done = await waitForJob(jobId, finished);
    expect(done.status).toBe('completed');
    expect(await (await api('POST', `/v2/agent/widgets/job/${jobId}/retry`)).json()).toMatchObject({ code: 'failed_precondition' });
    expect(await (await api('POST', `/v2/agent/widgets/job/${jobId}/stop`)).json()).toMatchObject({ code: 'failed_precondition' });
  });

  it('a token cap stops the agent with budget_exceeded and pushes nothing', async () => {
    await gw.deps.tenancy.updateChecks('widgets', { caps: { maxTurnTokens: 5 } });
    try {
      const jobId = await create('write CAPPED.md');
      const job = await waitForJob(jobId, finished);
      expect(job).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded', message: expect.stringContaining('cap of 5') } });
      expect(job.turns[0].usage.inputTokens).toBe(10);
      await expect(git.git('acme', 'widgets', 'rev-parse', '--verify', `refs/heads/docent/${jobId}`)).rejects.toThrow();
    } finally {
      await gw.deps.tenancy.updateChecks('widgets', { caps: { maxTurnTokens: 0 } });
    }
  });

  it('a job cost cap stops the agent with budget_exceeded once the priced usage reaches it', async () => {
    // One model step costs (10 × $3 + 1 × $15) per million tokens = $0.000045.
    await gw.deps.tenancy.updateChecks('widgets', { caps: { maxJobCostUsd: 0.00004 } });
    try {
      const jobId = await create('write PRICEY.md');
      const job = await waitForJob(jobId, finished);
      expect(job).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded', message: expect.stringContaining('cap of $0.00004') } });
      expect(job.turns[0].usage.costUsd).toBeCloseTo(0.000045, 12);
    } finally {
      await gw.deps.tenancy.updateChecks('widgets', { caps: { maxJobCostUsd: 0 } });
    }
  });
});
