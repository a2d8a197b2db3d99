import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Code, ConnectError, createDocentClient } from '../../src/client';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, type JsonResponse } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { readEventStream } from '../support/sse';
import { startReceiver } from '../support/webhook-receiver';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { createWidgetsProject } from '../support/projects';

// Issue 23 item 2 through the gateway over sockets, worker processes, real Temporal, MongoDB and git over HTTP: a job
// created with requirePlanApproval plans with read-only tools, pushes nothing while its plan awaits approval (across
// a worker restart), takes a message as feedback for a new plan, and edits with the approved plan once approved; an
// approval names the revision it read, and one read before another revision came is refused (409 aborted).

const token = 'ghs_docentplanapproval0123456789';
// Webhook signing secrets are sealed with it.
const secretKey = randomBytes(32).toString('base64');
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
let adminKey: string;

const toolNames = (req: ChatRequest) => (req.tools ?? []).map((t) => t.function.name).sort();
/** A planning call: the model is offered no tool that writes. */
const planning = (req: ChatRequest) => !toolNames(req).includes('write_file');
const userText = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').map((m) => m.content));
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === 'tool';

const firstPlan = '## Plan\n\n1. Create NOTES.md with a line about widgets (PLAN-ONE).';
const revisedPlan = '## Plan\n\n1. Create NOTES.md with a line about widgets and the license (PLAN-TWO).';

function script(req: ChatRequest): ScriptedTurn {
  if (planning(req)) {
    // A revision answers the feedback, slowly enough that the test sees the plan being written again.
    if (userText(req).includes('Revise the plan with this feedback')) return { text: revisedPlan, firstChunkDelayMs: 1500 };
    return afterTool(req) ? { text: firstPlan } : { toolCalls: [{ name: 'read_file', args: { path: 'README.md' } }] };
  }
  return afterTool(req) ? { text: 'Add NOTES.md\n\nNotes, as planned.' } : { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'widgets, MIT licensed\n' } }] };
}

const settings = () => ({
  ...modelSettings(model),
  DOCENT_GITHUB_GIT_URL: git.url,
  DOCENT_SECRET_KEY: secretKey,
  // The test's webhook receiver listens on loopback, which only this setting lets docent call.
  DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
});

// The test kills a worker while a plan waits: the update that follows reaches the next one after 2 s instead of 10.
const startWorker = () => startWorkerProcess({ ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), ...settings(), DOCENT_WORKER_STICKY_TIMEOUT_MS: '2000' });

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  gw = await startGateway(settings());
  adminKey = await createWidgetsProject(gw);
  worker = await startWorker();
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (method: string, p: string, body?: unknown): Promise<JsonResponse> => callApi(gw.url, adminKey, method, p, body);
const client = () => createDocentClient({ baseUrl: gw.url, apiKey: adminKey });
const getJob = async (jobId: string) => (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
const branches = async () => (await git.git('acme', 'widgets', 'for-each-ref', '--format=%(refname:short)', 'refs/heads/')).split('\n').filter(Boolean);

async function waitForJob(jobId: string, done: (job: any) => boolean, timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(jobId);
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${JSON.stringify(job)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function waitFor<T>(read: () => T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a plan job', () => {
  it('pushes nothing until its plan is approved, through a worker restart and a revision, then opens the pull request with the plan followed', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const created = await api('POST', '/v2/agent/widgets/webhooks', { url: receiver.url, events: ['agent_job.plan_ready'] });
      expect(created.status).toBe(201);
      const endpoint = await created.json();
      receiver.setSecret(endpoint.secret);

      const create = await api('POST', '/v2/agent/widgets/job', { prompt: 'write NOTES.md about the widgets', requirePlanApproval: true });
      expect(create.status).toBe(201);
      const jobId = (await create.json()).id as string;

      // The plan is shown, the job active and waiting; the agent was offered only tools that read.
      const awaiting = await waitForJob(jobId, (j) => j.awaitingApproval === true);
      expect(awaiting).toMatchObject({ status: 'active', requirePlanApproval: true, awaitingApproval: true, plan: firstPlan, planRevision: 1, prLink: null });
      const plans = model.requests.filter(planning);
      expect(plans.length).toBeGreaterThanOrEqual(2);
      for (const req of plans) expect(toolNames(req)).toEqual(['list_files', 'read_file', 'search_files']);
      expect(model.requests.filter((r) => !planning(r))).toEqual([]);

      // The webhook announces it, signed, with the job and its plan.
      const announced = await waitFor(() => receiver.received[0], 'plan_ready delivery');
      expect(announced).toMatchObject({ verified: true, body: { type: 'agent_job.plan_ready', data: { job: { id: jobId, awaitingApproval: true, plan: firstPlan } } } });

      // The worker crashes while the job waits and another starts: the wait lives in Temporal, not in the process.
      await worker.stop('SIGKILL');
      worker = await startWorker();
      expect(await branches()).toEqual(['main']);
      expect(github.pulls).toEqual([]);

      // A message while the plan awaits approval asks for another plan instead of starting a turn.
      const revise = await api('POST', `/v2/agent/widgets/job/${jobId}/message`, { prompt: 'mention the license too' });
      expect(revise.status).toBe(200);
      expect(await revise.json()).toMatchObject({ turn: 1, awaitingApproval: false, planRevision: 1 });
      // Nothing to approve while the agent writes the new plan.
      const early = await api('POST', `/v2/agent/widgets/job/${jobId}/approve`);
      expect(early.status).toBe(400);
      expect(await early.json()).toEqual({ code: 'failed_precondition', error: expect.stringContaining('writing its plan') });

      const revised = await waitForJob(jobId, (j) => j.planRevision === 2 && j.awaitingApproval === true);
      expect(revised).toMatchObject({ status: 'active', turn: 1, plan: revisedPlan });
      const revisionCall = model.requests.find((r) => planning(r) && userText(r).includes('mention the license too'));
      expect(JSON.stringify(revisionCall?.messages)).toContain('PLAN-ONE');
      expect(await branches()).toEqual(['main']);
      expect(github.pulls).toEqual([]);
      await waitFor(() => receiver.received[1], 'second plan_ready delivery');
      expect(receiver.received[1]).toMatchObject({ verified: true, body: { type: 'agent_job.plan_ready', data: { job: { id: jobId, plan: revisedPlan, planRevision: 2 } } } });
      expect(receiver.received[1]!.id).not.toBe(receiver.received[0]!.id);

      // An approval of the revision read before the second plan came is refused, over REST and Connect alike, and
      // so is one naming no revision now that the plan was revised: the plan still awaits approval, nothing is edited.
      const stale = await api('POST', `/v2/agent/widgets/job/${jobId}/approve`, { revision: 1 });
      expect(stale.status).toBe(409);
      expect(await stale.json()).toEqual({ code: 'aborted', error: expect.stringContaining('the plan is at revision 2, not 1') });
      const staleRpc = await client()
        .agent.approveAgentJobPlan({ projectId: 'widgets', jobId, revision: 1 })
        .catch((e: unknown) => e);
      expect(ConnectError.from(staleRpc).code).toBe(Code.Aborted);
      const unnamed = await api('POST', `/v2/agent/widgets/job/${jobId}/approve`);
      expect(unnamed.status).toBe(400);
      expect(await unnamed.json()).toEqual({ code: 'invalid_argument', error: expect.stringContaining('the plan has been revised and is at revision 2') });
      expect(await getJob(jobId)).toMatchObject({ status: 'active', awaitingApproval: true, planRevision: 2, plan: revisedPlan });
      expect(model.requests.filter((r) => !planning(r))).toEqual([]);

      // Approved through the typed client with the revision it read: the agent edits, following the approved plan.
      const approved = await client().agent.approveAgentJobPlan({ projectId: 'widgets', jobId, revision: revised.planRevision });
      expect(approved.job).toMatchObject({ awaitingApproval: false, planRevision: 2, plan: revisedPlan });
      const done = await waitForJob(jobId, (j) => j.status !== 'active');
      expect(done).toMatchObject({ status: 'completed', turn: 1, awaitingApproval: false, prLink: expect.stringContaining('/pull/1') });
      expect(github.pulls).toEqual([expect.objectContaining({ head: `docent/${jobId}`, title: 'Add NOTES.md' })]);
      expect(await branches()).toContain(`docent/${jobId}`);
      const edits = model.requests.filter((r) => !planning(r));
      expect(edits.length).toBeGreaterThanOrEqual(1);
      expect(userText(edits[0]!)).toContain('PLAN-TWO');
      expect(userText(edits[0]!)).not.toContain('PLAN-ONE');

      // The job's events tell the story in order.
      const stream = await readEventStream(`${gw.url}/v2/agent/widgets/job/${jobId}/events`, adminKey);
      const planEvents = stream.events.filter((e) => e.type.startsWith('plan.')).map((e) => [e.type, e.data.revision]);
      expect(planEvents).toEqual([
        ['plan.ready', 1],
        ['plan.revision', 1],
        ['plan.ready', 2],
        ['plan.approved', 2],
      ]);
      expect(stream.events.find((e) => e.type === 'plan.ready')?.data.plan).toBe(firstPlan);
      // The planner's read is a step like the editor's: its path, what it took and when.
      const read = stream.events.find((e) => e.type === 'step' && e.data.tool === 'read_file');
      expect(read?.data).toMatchObject({ kind: 'tool', path: 'README.md', startedAt: expect.any(String), durationMs: expect.any(Number) });
      // Each decision was recorded once, by the workflow inside its update, before the gateway answered (which writes
      // nothing itself): one recordPlanRevisionAsked and one recordPlanApproved in the job's history.
      const history = await gw.deps.temporal.workflow.getHandle(`agent-job-${jobId}`).fetchHistory();
      const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
      expect(scheduled.filter((n) => n === 'recordPlanApproved')).toHaveLength(1);
      expect(scheduled.filter((n) => n === 'recordPlanRevisionAsked')).toHaveLength(1);
      expect(stream.events.at(-1)).toMatchObject({ type: 'status', data: { status: 'completed' } });

      // Approving again is refused: nothing awaits approval.
      const again = await api('POST', `/v2/agent/widgets/job/${jobId}/approve`);
      expect(again.status).toBe(400);
      expect(await again.json()).toEqual({ code: 'failed_precondition', error: expect.stringContaining('awaits no plan approval') });
      const rpcAgain = await client()
        .agent.approveAgentJobPlan({ projectId: 'widgets', jobId })
        .catch((e: unknown) => e);
      expect(ConnectError.from(rpcAgain).code).toBe(Code.FailedPrecondition);
      expect(model.rejected).toEqual([]);
      expect(github.rejected).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 240_000);

  it('archiving a job that awaits approval ends the wait, and nothing is pushed', async () => {
    const jobId = (await client().agent.createAgentJob({ projectId: 'widgets', prompt: 'write NOTES.md again', requirePlanApproval: true })).job!.id;
    await waitForJob(jobId, (j) => j.awaitingApproval === true);
    const archived = await api('POST', `/v2/agent/widgets/job/${jobId}/archive`);
    expect(await archived.json()).toMatchObject({ status: 'archived', awaitingApproval: false });
    const handle = gw.deps.temporal.workflow.getHandle(`agent-job-${jobId}`);
    await handle.result().catch(() => undefined);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(await branches()).not.toContain(`docent/${jobId}`);
    const approve = await api('POST', `/v2/agent/widgets/job/${jobId}/approve`);
    expect(approve.status).toBe(400);
    expect((await approve.json()).code).toBe('failed_precondition');
  }, 120_000);

  it('a plan turn stopped while it awaits approval ends stopped, and its retry writes the next plan', async () => {
    const jobId = (await (await api('POST', '/v2/agent/widgets/job', { prompt: 'write NOTES.md a third time', requirePlanApproval: true })).json()).id as string;
    await waitForJob(jobId, (j) => j.awaitingApproval === true);
    expect((await api('POST', `/v2/agent/widgets/job/${jobId}/stop`)).status).toBe(202);
    const stopped = await waitForJob(jobId, (j) => j.status !== 'active');
    expect(stopped).toMatchObject({ status: 'failed', error: { code: 'stopped' }, awaitingApproval: false, planRevision: 1 });
    expect((await api('POST', `/v2/agent/widgets/job/${jobId}/approve`)).status).toBe(400);

    const retried = await api('POST', `/v2/agent/widgets/job/${jobId}/retry`);
    expect(await retried.json()).toMatchObject({ status: 'active', awaitingApproval: false });
    const replanned = await waitForJob(jobId, (j) => j.planRevision === 2);
    expect(replanned).toMatchObject({ status: 'active', awaitingApproval: true, plan: firstPlan });
    expect(await branches()).not.toContain(`docent/${jobId}`);
    await api('POST', `/v2/agent/widgets/job/${jobId}/archive`);
  }, 120_000);

  it('an approval naming no revision (a client from before `revision`) approves a plan that was never revised', async () => {
    const jobId = (await (await api('POST', '/v2/agent/widgets/job', { prompt: 'write NOTES.md for old clients', requirePlanApproval: true })).json()).id as string;
    await waitForJob(jobId, (j) => j.awaitingApproval === true);
    const approved = await api('POST', `/v2/agent/widgets/job/${jobId}/approve`);
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ awaitingApproval: false, planRevision: 1 });
    expect(await waitForJob(jobId, (j) => j.status !== 'active')).toMatchObject({ status: 'completed' });
  }, 120_000);

  it('a job created without requirePlanApproval has no plan to approve', async () => {
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'write NOTES.md once more' })).json();
    expect(created).not.toHaveProperty('awaitingApproval');
    const r = await api('POST', `/v2/agent/widgets/job/${created.id}/approve`);
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({ code: 'failed_precondition', error: expect.stringContaining('not created with requirePlanApproval') });
    await waitForJob(created.id, (j) => j.status !== 'active');
  }, 120_000);
});
