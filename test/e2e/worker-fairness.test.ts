import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writesContributingGuide } from '../support/forge-jobs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { jobTimeline, workflowClosed } from '../support/job-timeline';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { modelSettings, startScriptedModel, type ScriptedModel } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';

// Two tenants on a worker with the settings a deployment starts with (100 activity slots: nothing waits in Temporal,
// so its fairness keys order nothing). Project `backlog` queues 40 jobs at once, then project `single` one; every job
// opens a pull request, which GitHub's client spaces 3 s apart for the whole worker. Inside the worker that spacing is
// taken by project in turn (src/github/request-turns.ts), so single's job does not wait for backlog's 40 pull requests.
// Real gateway, worker process, Temporal, git over HTTP, the GitHub double (answering at once; the spacing is real).

const token = 'ghs_workerfairness0123456789';
const backlogJobs = 40;
/** A tenth of the backlog: single's job finishes before this many of backlog's have. */
const bar = backlogJobs / 10;
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
const keys: Record<string, string> = {};
const created: string[] = [];

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(writesContributingGuide);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-worker-fair-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  gw = await startGateway({ ...modelSettings(model), DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_API_URL: github.apiUrl });
  await gw.deps.tenancy.createOrg('acme');
  for (const id of ['backlog', 'single']) {
    await gw.deps.tenancy.createProject({ _id: id, orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
    keys[id] = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: id })).key;
  }
  // No worker setting of the test's own: the defaults `npm start` runs with.
  worker = await startWorkerProcess(agentWorkerEnv({ gw, model, github, git, token, workspaceDir }));
});

afterAll(async () => {
  // The backlog's jobs still open when single's had finished are not waited for.
  await Promise.allSettled(created.map(async (id) => (await workflowClosed(gw.deps.temporal, id)) || gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(id)).terminate('test over')));
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (projectId: string, method: string, p: string, body?: unknown) => callApi(gw.url, keys[projectId]!, method, p, body);

async function createJob(projectId: string, prompt: string): Promise<string> {
  const r = await api(projectId, 'POST', `/v2/agent/${projectId}/job`, { prompt });
  const body = await r.json();
  if (r.status !== 201) throw new Error(`create answered ${r.status}: ${JSON.stringify(body)}`);
  created.push(body.id as string);
  return body.id as string;
}

/** A job's timeline once Temporal has recorded its last status step: the job reads completed a moment before that. */
const recordedTimeline = (jobId: string) =>
  poll(
    `job ${jobId}'s recorded end`,
    () => jobTimeline(gw.deps.temporal, jobId).catch(() => null),
    (t) => t !== null,
  ).then((t) => t!);

const jobStatus = async (projectId: string, jobId: string) => (await (await api(projectId, 'GET', `/v2/agent/${projectId}/job/${jobId}`)).json()).status as string;

describe('fairness inside the worker', () => {
  it("one project's single job finishes before a tenth of another's 40 queued first, with the default worker settings", async () => {
    const backlog = await Promise.all(Array.from({ length: backlogJobs }, (_, i) => createJob('backlog', `add a contributing guide, ${i}`)));
    const single = await createJob('single', 'add a contributing guide');
    await poll(
      'single’s job',
      () => jobStatus('single', single),
      (s) => s !== 'active',
      300_000,
    );
    expect(await jobStatus('single', single)).toBe('completed');

    // On the forge: single's pull request was among the first the worker sent, not after the backlog's 40.
    const opened = github.pulls.map((pr) => (pr.head.endsWith(single) ? 'single' : 'backlog'));
    expect(opened.indexOf('single')).toBeGreaterThanOrEqual(0);
    expect(opened.indexOf('single')).toBeLessThan(bar);

    // And for its user: single's job had finished when fewer than a tenth of the backlog's had.
    const { finishedAt } = await recordedTimeline(single);
    const done = (await Promise.all(backlog.map(async (id) => ((await jobStatus('backlog', id)) === 'completed' ? recordedTimeline(id) : null)))).filter((t) => t !== null);
    expect(done.filter((t) => t.finishedAt < finishedAt).length).toBeLessThan(bar);
  }, 360_000);
});
