import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, type JsonResponse } from '../support/http';
import { startProcess, type Started } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn } from '../support/scripted-model';

// The model catalog through the gateway and a worker process: the provider double serves two models and records which
// one each call asked for.

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
  const afterTool = req.messages.at(-1)?.role === 'tool';
  if (lastUser(req).includes('write the notes')) {
    return afterTool ? { text: 'Add NOTES.md\n\nNotes.' } : { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'notes\n' } }] };
  }
  return { text: 'No change needed\n\nNothing to do.' };
}

const catalog = () => [
  { name: model.modelId, provider: 'openai-compatible', prices: { input: 1, output: 2 } },
  { name: 'scripted-large', provider: 'openai-compatible', images: true },
];

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script, { otherModelIds: ['scripted-large'] });
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  const models = { DOCENT_MODELS: JSON.stringify(catalog()), DOCENT_MODEL_BASE_URL: model.baseUrl, DOCENT_MODEL_API_KEY: model.apiKey };
  gw = await startGateway({ ...models, DOCENT_GITHUB_GIT_URL: git.url });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;
  worker = startProcess('src/worker.js', { ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), DOCENT_MODEL_PROVIDER: '', DOCENT_MODEL: '', ...models });
  await worker.waitForLog((l) => l.msg === 'worker polling');
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (method: string, p: string, body?: unknown): Promise<JsonResponse> => callApi(gw.url, adminKey, method, p, body);
const rpc = () => createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
const asAdmin = () => ({ headers: { authorization: `Bearer ${adminKey}` } });

async function waitForJob(jobId: string): Promise<any> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const job = await (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
    if (job.status !== 'active') return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still active`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the model catalog', () => {
  it('GET models lists the catalog, the default first, without endpoints or keys', async () => {
    const r = await api('GET', '/v2/agent/widgets/models');
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(JSON.parse(text)).toEqual({
      models: [
        { id: model.modelId, provider: 'openai-compatible', default: true, images: false, prices: { input: 1, output: 2 } },
        { id: 'scripted-large', provider: 'openai-compatible', default: false, images: true, prices: null },
      ],
    });
    expect(text).not.toContain(model.apiKey);
    expect(text).not.toContain(model.baseUrl);
    const listed = await rpc().listAgentModels({ projectId: 'widgets' }, asAdmin());
    expect(listed.models.map((m) => [m.id, m.isDefault, m.images])).toEqual([
      [model.modelId, true, false],
      ['scripted-large', false, true],
    ]);
  });

  it('a create naming a model outside the catalog gets 400 and starts nothing', async () => {
    const r = await api('POST', '/v2/agent/widgets/job', { prompt: 'write the notes', model: 'gpt-unlisted' });
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.code).toBe('invalid_argument');
    expect(body.error).toContain('gpt-unlisted');
    const err = await rpc()
      .createAgentJob({ projectId: 'widgets', prompt: 'write the notes', model: 'gpt-unlisted' }, asAdmin())
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.InvalidArgument);
    expect((await (await api('GET', '/v2/agent/widgets/jobs')).json()).jobs).toEqual([]);
  });

  it('a job naming a catalog model calls that model, and its turns and cost name it', async () => {
    const r = await api('POST', '/v2/agent/widgets/job', { prompt: 'write the notes', model: 'scripted-large' });
    expect(r.status).toBe(201);
    const created = await r.json();
    expect(created.model).toBe('scripted-large');
    const job = await waitForJob(created.id);
    expect(job.status).toBe('completed');
    const calls = model.requests.filter((q) => lastUser(q).includes('write the notes'));
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls.map((q) => q.model))).toEqual(new Set(['scripted-large']));
    expect(job.turns[0]).toMatchObject({ model: 'scripted-large' });
    expect(job.turns[0].usage.costUsd).toBeUndefined();
    expect(model.rejected).toEqual([]);
  });

  it('a create naming no model uses the default, priced from its catalog entry', async () => {
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'look around' })).json();
    expect(created.model).toBe(model.modelId);
    const job = await waitForJob(created.id);
    expect(job.status).toBe('completed');
    expect(model.requests.filter((q) => lastUser(q).includes('look around')).map((q) => q.model)).toEqual([model.modelId]);
    expect(job.turns[0]).toMatchObject({ model: model.modelId });
    expect(job.turns[0].usage.costUsd).toBeGreaterThan(0);
  });
});
