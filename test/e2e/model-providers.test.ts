import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { deleteTestIndexes, ingestMiniDocs } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, sseChunks, v2Body } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';

// One agent job end to end through each provider's own API: DOCENT_MODEL_PROVIDER=openai speaks the Responses API,
// anthropic speaks Messages. The double refuses what the real API would (a tool result that answers no call, an
// unknown item reference, a missing max_tokens), so a job that completes is one the real API would have served.
// Then the provider's failures: a 429 with retry-after and a 500 are retried, a refusal fails the turn at once, a
// missing usage report leaves the turn's tokens at zero, and a stalled answer is ended by the turn's time cap.

const token = 'ghs_docenttesttoken0123456789';
const readme = '# Widgets\n\nHello world\n';

const instructionOf = (req: ChatRequest) => /Instruction: ([^\n"\\]*)/.exec(JSON.stringify(req.messages.find((m) => m.role === 'user')?.content ?? ''))?.[1] ?? '';
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === 'tool';
const failedOnce = new Set<string>();

/** Reads the README (a tool call), then answers; some instructions first fail the way a provider does. */
function script(req: ChatRequest): ScriptedTurn {
  // The assistant asks without tools, and streams.
  if (!req.tools?.length) return { text: ['Load the kiln, ', 'then fire it ', 'slowly.'], chunkDelayMs: 10 };
  const instruction = instructionOf(req);
  const once = (fault: ScriptedTurn): ScriptedTurn | undefined => {
    if (failedOnce.has(instruction)) return undefined;
    failedOnce.add(instruction);
    return fault;
  };
  if (instruction.startsWith('rate limited')) {
    const fault = once({ error: { status: 429, retryAfterSeconds: 3 } });
    if (fault) return fault;
  }
  if (instruction.startsWith('server error')) {
    const fault = once({ error: { status: 500 } });
    if (fault) return fault;
  }
  if (instruction.startsWith('always failing')) return { error: { status: 500 } };
  if (instruction.startsWith('stall')) return { stall: true, text: 'never' };
  if (instruction.startsWith('no usage')) return { text: 'No change needed\n\nNothing to do.', omitUsage: true };
  if (!afterTool(req)) return { toolCalls: [{ name: 'read_file', args: { path: 'README.md' } }] };
  return { text: ['No change needed', '\n\nThe README already says hello.'] };
}

const domain = 'docs.kiln.test';

interface Stack {
  gw: RunningGateway;
  assistantKey: string;
  model: ScriptedModel;
  worker: Started;
  keys: Record<string, string>;
  close(): Promise<void>;
}

let git: GitServer;
let github: GitHubDouble;
let workspaceDir: string;

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': readme });
});
afterAll(async () => {
  await Promise.all([git?.close(), github?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

/** A gateway and a worker process whose model is the double, through the given provider setting. */
async function startStack(provider: 'openai' | 'anthropic' | 'openai-compatible', { docs }: { docs: boolean }): Promise<Stack> {
  const model = await startScriptedModel(script);
  const baseUrl = provider === 'openai' ? model.openaiBaseUrl : provider === 'anthropic' ? model.anthropicBaseUrl : model.baseUrl;
  const modelSettings = { DOCENT_MODEL_PROVIDER: provider, DOCENT_MODEL: model.modelId, DOCENT_MODEL_BASE_URL: baseUrl, DOCENT_MODEL_API_KEY: model.apiKey };
  const gw = await startGateway({ ...modelSettings, DOCENT_GITHUB_GIT_URL: git.url });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  // 3 s: the stalled answer's test waits for this cap.
  await gw.deps.tenancy.createProject({ _id: 'capped', orgId: 'acme', repository: 'acme/widgets', ref: 'main', maxTurnMinutes: 0.05 });
  const keys: Record<string, string> = {};
  for (const projectId of ['widgets', 'capped']) keys[projectId] = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId })).key;
  if (docs) await ingestMiniDocs(gw.deps.config, domain);
  const assistantKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  const worker = await startWorkerProcess({ ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), ...modelSettings, DOCENT_LOG_LEVEL: 'info' });
  return {
    gw,
    assistantKey,
    model,
    worker,
    keys,
    async close() {
      await worker.stop('SIGKILL');
      await gw.stop();
      await model.close();
      if (docs) await deleteTestIndexes(gw.deps.config);
    },
  };
}

async function runJob(stack: Stack, prompt: string, project = 'widgets'): Promise<any> {
  const key = stack.keys[project]!;
  const created = await callApi(stack.gw.url, key, 'POST', `/v2/agent/${project}/job`, { prompt });
  expect(created.status).toBe(201);
  const { id } = await created.json();
  const deadline = Date.now() + 90_000;
  for (;;) {
    const job = await (await callApi(stack.gw.url, key, 'GET', `/v2/agent/${project}/job/${id}`)).json();
    if (job.status !== 'active') return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still active: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.each([
  ['openai', 'responses'],
  ['anthropic', 'messages'],
] as const)('DOCENT_MODEL_PROVIDER=%s', (provider, api) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack(provider, { docs: true });
  });
  afterAll(() => stack?.close());

  it(`runs an agent job through the ${api} API: a tool call, its result sent back as that API wants it, then the answer`, async () => {
    const job = await runJob(stack, 'check the README says hello');
    expect(job).toMatchObject({ status: 'completed', prLink: null, turns: [{ turn: 1, status: 'completed' }] });
    expect(stack.model.rejected).toEqual([]);
    const asked = stack.model.requests.filter((r) => instructionOf(r) === 'check the README says hello');
    expect(asked.map((r) => r.api)).toEqual([api, api]);
    // The second request carries the README, as the result of the first request's call.
    const result = asked[1]!.messages.find((m) => m.role === 'tool');
    expect(String(result?.content)).toContain('Hello world');
    expect(asked[1]!.messages.some((m) => m.role === 'assistant' && JSON.stringify(m.tool_calls).includes('read_file'))).toBe(true);
  });

  it(`streams an assistant answer through the ${api} API, piece by piece, to a UI message stream`, async () => {
    const r = await callApi(stack.gw.url, stack.assistantKey, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body('how do I fire the kiln?'));
    expect(r.status).toBe(200);
    const chunks = sseChunks(await r.text());
    expect(chunks.filter((c: any) => c.type === 'text-delta').map((c: any) => c.delta)).toEqual(['Load the kiln, ', 'then fire it ', 'slowly.']);
    expect(chunks.at(-2)).toMatchObject({ type: 'finish' });
    const streamed = stack.model.requests.filter((q) => !q.tools?.length);
    expect(streamed.map((q) => [q.api, q.stream])).toEqual([[api, true]]);
    expect(stack.model.rejected).toEqual([]);
  });
});

describe('the provider failing (openai-compatible)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack('openai-compatible', { docs: false });
  });
  afterAll(() => stack?.close());

  it('retries a 429 after its retry-after and completes the job', async () => {
    const job = await runJob(stack, 'rate limited once');
    expect(job).toMatchObject({ status: 'completed', turns: [{ turn: 1, status: 'completed' }] });
    // The refused call, its retry (a tool call) and the answer; the retry waited as long as the provider asked.
    const asked = stack.model.requests.filter((r) => instructionOf(r) === 'rate limited once');
    expect(asked).toHaveLength(3);
    expect(asked[1]!.receivedAt! - asked[0]!.receivedAt!).toBeGreaterThanOrEqual(3_000);
  });

  it('retries a 500 and completes the job', async () => {
    const job = await runJob(stack, 'server error once');
    expect(job).toMatchObject({ status: 'completed', turns: [{ turn: 1, status: 'completed' }] });
  });

  it('fails the job with model_unavailable once a provider that keeps answering 500 has had every attempt', async () => {
    const job = await runJob(stack, 'always failing');
    expect(job).toMatchObject({ status: 'failed', error: { code: 'model_unavailable', message: expect.stringContaining('HTTP 500') } });
    // The agent step's three attempts (workflows/agent-job/job.ts), no more.
    expect(stack.model.requests.filter((r) => instructionOf(r) === 'always failing')).toHaveLength(3);
  });

  it('completes a job whose provider reports no usage, counting no tokens for it', async () => {
    const job = await runJob(stack, 'no usage reported');
    expect(job).toMatchObject({ status: 'completed', turns: [{ turn: 1, status: 'completed' }] });
    expect(job.turns[0].usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('ends a turn whose answer stalls at the project’s maxTurnMinutes, as budget_exceeded', async () => {
    const job = await runJob(stack, 'stall forever', 'capped');
    expect(job).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded', message: expect.stringContaining('cap of 0.05 minutes') } });
  });
});
