import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { besideBacklog, jobTimeline, workflowClosed } from '../support/job-timeline';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';

// Two projects share one worker that runs one activity at a time per queue: project `hog` queues a backlog of jobs at
// once, then project `small` queues one. Temporal's fairness keys (the project) make the queue take projects in turn,
// so small's job does not wait behind hog's whole backlog. Real gateway, worker process, Temporal, git over HTTP.

const token = 'ghs_fairnesstoken0123456789';
const backlog = 12;
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
const keys: Record<string, string> = {};
/** The worker share is the operator's (a project admin key may only lower it): set with an operator key. */
let operatorKey: string;

/** Every job finds nothing to change: no pull request, whose spacing on GitHub (one every 3 s per worker) would set the pace. */
const script = (_req: ChatRequest): ScriptedTurn => ({ text: 'No change needed\n\nThe repository already does this.' });

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-fair-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  gw = await startGateway({ ...modelSettings(model), DOCENT_GITHUB_GIT_URL: git.url });
  await gw.deps.tenancy.createOrg('acme');
  for (const id of ['hog', 'small', 'heavy', 'light']) {
    await gw.deps.tenancy.createProject({ _id: id, orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
    keys[id] = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: id })).key;
  }
  operatorKey = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  // One activity at a time per queue: jobs beyond the first wait in Temporal, where the fairness keys apply.
  worker = await startWorkerProcess({ ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), DOCENT_LOG_LEVEL: 'info', DOCENT_WORKER_MAX_ACTIVITIES: '1' });
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (projectId: string, method: string, p: string, body?: unknown) => callApi(gw.url, keys[projectId]!, method, p, body);
const asOperator = (method: string, p: string, body?: unknown) => callApi(gw.url, operatorKey, method, p, body);

async function createJob(projectId: string, prompt: string): Promise<string> {
  const r = await api(projectId, 'POST', `/v2/agent/${projectId}/job`, { prompt });
  const body = await r.json();
  if (r.status !== 201) throw new Error(`create answered ${r.status}: ${JSON.stringify(body)}`);
  return body.id as string;
}

const jobStatus = async (projectId: string, jobId: string) => (await (await api(projectId, 'GET', `/v2/agent/${projectId}/job/${jobId}`)).json()).status as string;

describe('tenant fairness', () => {
  it('the operator sets a project’s weight within bounds', async () => {
    const set = await asOperator('PATCH', '/v2/admin/projects/small', { fairnessWeight: 2 });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ id: 'small', fairnessWeight: 2 });
    const tooMuch = await asOperator('PATCH', '/v2/admin/projects/small', { fairnessWeight: 5000 });
    expect(tooMuch.status).toBe(400);
    expect(await tooMuch.json()).toMatchObject({ code: 'invalid_argument', error: expect.stringContaining('fairnessWeight') });
  });

  it('one project’s single job starts before another project’s backlog drains, with its project as fairness key and weight', async () => {
    const hogJobs = await Promise.all(Array.from({ length: backlog }, (_, i) => createJob('hog', `check the readme, hog ${i}`)));
    const smallJob = await createJob('small', 'check the readme, small');
    const all = [...hogJobs.map((id) => ['hog', id] as const), ['small', smallJob] as const];
    await poll(
      'job workflows still running',
      async () => (await Promise.all(all.map(([, id]) => workflowClosed(gw.deps.temporal, id)))).filter((closed) => !closed).length,
      (running) => running === 0,
      240_000,
    );
    for (const [p, id] of all) expect(await jobStatus(p, id)).toBe('completed');

    const hog = await Promise.all(hogJobs.map((id) => jobTimeline(gw.deps.temporal, id)));
    const small = await jobTimeline(gw.deps.temporal, smallJob);
    const seen = besideBacklog(hog, small);
    // In arrival order small's first step would wait for all of hog's queued before it; taking turns, for a free slot only.
    expect(seen.startedWhileItWaited).toBeLessThanOrEqual(2);
    expect(seen.finishedBeforeItFinished).toBeLessThan(backlog / 2);

    const { raw } = await gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(smallJob)).describe();
    expect(raw.workflowExecutionInfo?.priority).toMatchObject({ fairnessKey: 'small', fairnessWeight: 2 });
  }, 300_000);

  it('two projects with backlogs share the worker in proportion to their weights', async () => {
    expect((await asOperator('PATCH', '/v2/admin/projects/heavy', { fairnessWeight: 3 })).status).toBe(200);
    const perProject = 8;
    const created = await Promise.all(Array.from({ length: perProject }, (_, i) => [createJob('heavy', `check the readme, heavy ${i}`), createJob('light', `check the readme, light ${i}`)]).flat());
    await poll(
      'job workflows still running',
      async () => (await Promise.all(created.map((id) => workflowClosed(gw.deps.temporal, id)))).filter((closed) => !closed).length,
      (running) => running === 0,
      240_000,
    );
    const timelines = await Promise.all(created.map(async (id, i) => ({ project: i % 2 === 0 ? 'heavy' : 'light', ...(await jobTimeline(gw.deps.temporal, id)) })));
    const allQueued = Math.max(...timelines.map((t) => t.queuedAt));
    const order = timelines
      .filter((t) => t.startedAt > allQueued)
      .sort((a, b) => a.startedAt - b.startedAt)
      .map((t) => t.project);
    // Weights 3 : 1 hand heavy 6 of the first 8 slots; equal weights alternate (4 of 8).
    const first = order.slice(0, perProject);
    expect(first.filter((p) => p === 'heavy').length).toBeGreaterThanOrEqual(5);
  }, 300_000);
});
