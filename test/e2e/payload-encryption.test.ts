import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, WorkflowFailedError } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { checkoutClean, createGitActivities } from '../../activities/agent-job/git';
import { ensureReconcileSchedule } from '../../src/agent/reconcile-schedule';
import { redeliverWebhook } from '../../src/cli/webhook-redeliver';
import { AesGcmPayloadCodec } from '../../src/temporal/payload-codec';
import type { AgentJobInput } from '../../workflows/agent-job-contract';
import { reconcileScheduleId } from '../../workflows/reconcile-jobs-contract';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';
import { webhookDeliveryWorkflowId } from '../../workflows/webhook-delivery-contract';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, modelSettings } from '../support/scripted-model';
import { replayWorkflows } from '../support/workflow-bundle';
import { createWidgetsProject } from '../support/projects';

// Payload encryption end to end: a gateway and a worker process sharing DOCENT_PAYLOAD_KEYS, real Temporal history
// read back through the real client, and the gateway's codec endpoint over HTTP.

const token = 'ghs_encryptiontoken0123456789';
const codecToken = 'operator-token-for-the-codec-endpoint-0001';
const oldKey = randomBytes(32);
const newKey = randomBytes(32);
// The new key encrypts; the old one still decrypts what it encrypted before the rotation.
const payloadKeys = `k2026b:${newKey.toString('base64')},k2026a:${oldKey.toString('base64')}`;
const uiOrigin = 'http://127.0.0.1:8233';
const secretPrompt = 'rename the marmalade-quokka-4471 helper';
const secretContent = 'quokka-file-body-9913\n';

let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let base: string;
let workspaceDir: string;
let adminKey: string;

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel((req: ChatRequest) =>
    req.messages.at(-1)?.role === 'tool' ? { text: 'Add the quokka file\n\nAs asked.' } : { toolCalls: [{ name: 'write_file', args: { path: 'QUOKKA.md', content: secretContent } }] },
  );
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  // The workspace sits two levels inside `base`, so `../..` from it names `base` itself.
  base = await mkdtemp(path.join(os.tmpdir(), 'docent-enc-'));
  workspaceDir = path.join(base, 'nest', 'workspaces');
  await mkdir(workspaceDir, { recursive: true });
  // The sandbox's unprivileged user must be able to pass through the parents of the workspace.
  for (const dir of [base, path.dirname(workspaceDir)]) await chmod(dir, 0o711);
  await writeFile(path.join(base, 'keep.txt'), 'must survive\n');
  const encryption = { DOCENT_PAYLOAD_KEYS: payloadKeys, DOCENT_CODEC_TOKEN: codecToken, DOCENT_TEMPORAL_UI_URL: uiOrigin, DOCENT_SECRET_KEY: randomBytes(32).toString('base64') };
  gw = await startGateway({ ...encryption, ...modelSettings(model), DOCENT_GITHUB_GIT_URL: git.url });
  adminKey = await createWidgetsProject(gw);
  worker = await startWorkerProcess({ ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), DOCENT_PAYLOAD_KEYS: payloadKeys, DOCENT_LOG_LEVEL: 'info' });
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(base, { recursive: true, force: true });
});

/** Every byte string in a history, as text: where a prompt in clear would show. */
function bytesIn(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) bytesIn(v, out);
  return out;
}

const asJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const codecCall = (p: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers }, body: JSON.stringify(body) });
const asOperator = { authorization: `Bearer ${codecToken}` };

let jobId: string;
let startedInput: Payload;

describe('payload encryption', () => {
  it('keeps the prompt and the changed file out of Temporal history while the job completes', async () => {
    const created = await (await callApi(gw.url, adminKey, 'POST', '/v2/agent/widgets/job', { prompt: secretPrompt })).json();
    jobId = created.id;
    const deadline = Date.now() + 90_000;
    let job = created;
    while (job.status === 'active' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      job = await (await callApi(gw.url, adminKey, 'GET', `/v2/agent/widgets/job/${jobId}`)).json();
    }
    expect(job.status).toBe('completed');
    expect(await git.git('acme', 'widgets', 'show', `docent/${jobId}:QUOKKA.md`)).toBe(secretContent);

    const history = await gw.deps.temporal.workflow.getHandle(`agent-job-${jobId}`).fetchHistory();
    const text = bytesIn(history).join('\n');
    expect(text).not.toContain('marmalade-quokka');
    expect(text).not.toContain('quokka-file-body');
    const started = history.events!.find((e) => e.workflowExecutionStartedEventAttributes)!;
    startedInput = started.workflowExecutionStartedEventAttributes!.input!.payloads![0] as Payload;
    expect(Buffer.from(startedInput.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(startedInput.metadata!['encryption-key-id']!).toString()).toBe('k2026b');
  });

  it('replays the encrypted history with the codec loaded', async () => {
    const history = await gw.deps.temporal.workflow.getHandle(`agent-job-${jobId}`).fetchHistory();
    const codec = new AesGcmPayloadCodec({ encryptWith: 'k2026b', keys: new Map([['k2026b', newKey]]) });
    await expect(Worker.runReplayHistory({ ...replayWorkflows(), dataConverter: { payloadCodecs: [codec] } }, history, jobId)).resolves.toBeUndefined();
  });
});

describe('the codec endpoint', () => {
  it('decodes history payloads for the operator token only', async () => {
    const ok = await codecCall('/codec/decode', { payloads: [asJson(startedInput)] }, asOperator);
    expect(ok.status).toBe(200);
    const [decoded] = ((await ok.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> }).payloads;
    expect(Buffer.from(decoded!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
    expect(JSON.parse(Buffer.from(decoded!.data, 'base64').toString()).first.prompt).toBe(secretPrompt);

    const none = await codecCall('/codec/decode', { payloads: [asJson(startedInput)] });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 'unauthenticated' });
    const wrong = await codecCall('/codec/decode', { payloads: [asJson(startedInput)] }, { authorization: 'Bearer not-the-operator-token-at-all' });
    expect(wrong.status).toBe(401);
    const apiKey = await codecCall('/codec/decode', { payloads: [asJson(startedInput)] }, { authorization: `Bearer ${adminKey}` });
    expect(apiKey.status).toBe(403);
    const refused = JSON.stringify([await wrong.text(), await apiKey.text()]);
    expect(refused).not.toContain(codecToken);
    expect(refused).not.toContain('marmalade');
  });

  it('lets the Temporal Web UI origin call it from a browser, and no other origin', async () => {
    const preflight = (origin: string) =>
      fetch(`${gw.url}/codec/decode`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-namespace' } });
    const ui = await preflight(uiOrigin);
    expect(ui.status).toBe(204);
    expect(ui.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(ui.headers.get('access-control-allow-headers')).toContain('x-namespace');
    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('still decrypts what the old key encrypted, encrypts with the new key, and refuses unknown keys', async () => {
    const plain: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"from before the rotation"') };
    const [underOldKey] = await new AesGcmPayloadCodec({ encryptWith: 'k2026a', keys: new Map([['k2026a', oldKey]]) }).encode([plain]);
    const decoded: any = await (await codecCall('/codec/decode', { payloads: [asJson(underOldKey!)] }, asOperator)).json();
    expect(Buffer.from(decoded.payloads[0].data, 'base64').toString()).toBe('"from before the rotation"');

    const encoded: any = await (await codecCall('/codec/encode', { payloads: [asJson(plain)] }, asOperator)).json();
    expect(Buffer.from(encoded.payloads[0].metadata['encryption-key-id'], 'base64').toString()).toBe('k2026b');

    const [underRetiredKey] = await new AesGcmPayloadCodec({ encryptWith: 'k2025', keys: new Map([['k2025', randomBytes(32)]]) }).encode([plain]);
    const unknown = await codecCall('/codec/decode', { payloads: [asJson(underRetiredKey!)] }, asOperator);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: 'invalid_argument', error: expect.stringContaining('k2025') });
  });

  it('passes through payloads that were never encrypted (histories from before encryption)', async () => {
    const plain = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('{"a":1}').toString('base64') };
    const r = await codecCall('/codec/decode', { payloads: [plain] }, asOperator);
    expect(await r.json()).toEqual({ payloads: [plain] });
  });
});

describe('clear payloads once keys are set', () => {
  // Anyone who reaches Temporal could start a workflow with input of their own; with keys set the worker must not run it.
  it('a workflow started with clear input never runs: its workflow task fails, naming the migration flag', async () => {
    const clear = new Client({ connection: gw.deps.temporalConnection, namespace: gw.deps.config.temporal.namespace });
    const jobId = `job_clear${randomBytes(4).toString('hex')}`;
    const input: AgentJobInput = {
      jobId,
      projectId: 'widgets',
      repository: 'acme/widgets',
      baseRef: 'main',
      branch: `docent/${jobId}`,
      model: model.modelId,
      asDraft: false,
      first: { prompt: 'injected without the key', turn: 1, history: [] },
      heartbeatTimeoutMs: 10_000,
      maxSteps: 5,
    };
    const handle = await clear.workflow.start('agentJob', { taskQueue: taskQueueName(gw.deps.config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE), workflowId: `clear-${jobId}`, args: [input] });
    try {
      const deadline = Date.now() + 60_000;
      let failure: string | undefined;
      let events: Awaited<ReturnType<typeof handle.fetchHistory>>['events'] = [];
      while (!failure && Date.now() < deadline) {
        events = (await handle.fetchHistory()).events ?? [];
        failure = events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.failure?.message ?? undefined;
        if (!failure) await new Promise((r) => setTimeout(r, 200));
      }
      expect(failure).toMatch(/not encrypted although DOCENT_PAYLOAD_KEYS is set; DOCENT_PAYLOAD_ALLOW_PLAINTEXT=1/);
      expect(events.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      expect(model.requests.some((q) => JSON.stringify(q).includes('injected without the key'))).toBe(false);
    } finally {
      await handle.terminate('test over');
    }
  });
});

describe('every client encrypts', () => {
  it('the reconciler schedule made before keys were set is made again with its input encrypted', async () => {
    const prefix = `clear-schedule-${randomBytes(3).toString('hex')}-`;
    const clear = new Client({ connection: gw.deps.temporalConnection, namespace: gw.deps.config.temporal.namespace });
    await ensureReconcileSchedule(clear, prefix);
    const handle = gw.deps.temporal.schedule.getHandle(reconcileScheduleId(prefix));
    try {
      await expect(handle.describe()).rejects.toThrow(/not encrypted although DOCENT_PAYLOAD_KEYS is set/);
      await ensureReconcileSchedule(gw.deps.temporal, prefix);
      const action = (await handle.describe()).action as { args?: unknown[] };
      expect(action.args).toEqual([expect.objectContaining({ olderThanMs: expect.any(Number) })]);
      const raw = await clear.workflowService.describeSchedule({ namespace: gw.deps.config.temporal.namespace, scheduleId: reconcileScheduleId(prefix) });
      const input = raw.schedule!.action!.startWorkflow!.input!.payloads![0]!;
      expect(Buffer.from(input.metadata!.encoding!).toString()).toBe('binary/encrypted');
    } finally {
      await handle.delete().catch(() => undefined);
    }
  });

  it('a redelivery started by the docent CLI sends its payload encrypted, so the worker takes it', async () => {
    const { endpoint } = await gw.deps.webhooks.create('widgets', { url: 'https://hooks.widgets.example/docent' });
    const messageId = `msg_${randomBytes(4).toString('hex')}`;
    await gw.deps.webhooks.saveMessage({ _id: messageId, projectId: 'widgets', type: 'agent_job.completed', payload: '{"secret":"quokka-webhook-body"}', at: new Date() });
    await redeliverWebhook(gw.deps, gw.deps.config, 'widgets', endpoint._id, messageId);
    const prefix = `${webhookDeliveryWorkflowId(messageId)}-redeliver-`;
    // Visibility lists a started workflow a moment later.
    let workflowId: string | undefined;
    for (const deadline = Date.now() + 20_000; !workflowId && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      for await (const w of gw.deps.temporal.workflow.list({ query: `WorkflowId STARTS_WITH "${prefix}"` })) workflowId = w.workflowId;
    }
    const handle = gw.deps.temporal.workflow.getHandle(workflowId!);
    try {
      const history = await handle.fetchHistory();
      const input = history.events!.find((e) => e.workflowExecutionStartedEventAttributes)!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      expect(Buffer.from(input.metadata!.encoding!).toString()).toBe('binary/encrypted');
      expect(bytesIn(history).join('\n')).not.toContain('quokka-webhook-body');
    } finally {
      await handle.terminate('test over').catch(() => undefined);
    }
  });
});

describe('workflow input is not trusted', () => {
  it.each(['../..', 'job_x/../../..'])('a workflow started by hand with jobId %j fails without touching anything outside the workspace folder', async (hostile) => {
    const before = (await readdir(base)).sort();
    const input: AgentJobInput = {
      jobId: hostile,
      projectId: 'widgets',
      repository: 'acme/widgets',
      baseRef: 'main',
      branch: `docent/hostile-${randomBytes(3).toString('hex')}`,
      model: model.modelId,
      asDraft: false,
      first: { prompt: 'anything', turn: 1, history: [] },
      heartbeatTimeoutMs: 10_000,
      maxSteps: 5,
    };
    const handle = await gw.deps.temporal.workflow.start('agentJob', {
      taskQueue: taskQueueName(gw.deps.config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE),
      workflowId: `hand-started-${randomBytes(4).toString('hex')}`,
      args: [input],
    });
    const failure = await handle.result().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toMatchObject({ type: 'InvalidJobId' });
    expect((await readdir(base)).sort()).toEqual(before);
    expect(await readFile(path.join(base, 'keep.txt'), 'utf8')).toBe('must survive\n');
  });
});

describe('activity input is not trusted either', () => {
  // A history can be forged or replayed with other input: the workspace activities check the job id themselves.
  it.each(['../..', 'job_x/../../..', 'job_x.home/..'])('removeWorkspace and a checkout given jobId %j fail for good and touch nothing', async (hostile) => {
    const before = (await readdir(base)).sort();
    const deps = { gitBaseUrl: git.url, token: git.token, workspaceDir, allowPrivateNetworks: [] };
    await expect(createGitActivities(deps).removeWorkspace({ jobId: hostile })).rejects.toMatchObject({ type: 'InvalidJobId', nonRetryable: true });
    await expect(checkoutClean(deps, hostile, { repository: 'acme/widgets' }, 'main')).rejects.toMatchObject({ type: 'InvalidJobId' });
    expect((await readdir(base)).sort()).toEqual(before);
    expect(await readFile(path.join(base, 'keep.txt'), 'utf8')).toBe('must survive\n');
  });
});
