import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ApiKeyStore } from '../../src/auth/api-keys';
import { createMongo, ensureIndexes, type Mongo } from '../../src/store/mongo';
import { TenancyStore } from '../../src/tenancy/store';
import { testConfig } from '../support/config';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { startNpmScript, type Started, isWorkerPolling } from '../support/process';
import { noteJobs } from '../support/note-jobs';
import { poll } from '../support/poll';
import { startScriptedModel, type ScriptedModel, modelSettings } from '../support/scripted-model';

// Two gateways and two workers, each started with `npm run gateway` / `npm run worker` as an operator would, sharing
// one Temporal, database and git remote. Jobs go to both gateways; one worker is killed mid-turn and stays away.

const token = 'ghs_scaleouttoken0123456789';
const config = testConfig();
// Enough that the killed worker holds turns of other jobs besides the slow one when it dies: in a timed run every job
// was inside a step at the kill, four on each worker. Each worker opens one pull request every 3 s, so more jobs cost
// 3 s each and add no other case (12 took 13 s longer).
const jobCount = 8;
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let mongo: Mongo;
let temporal: Client;
let workspaces: string[];
let gateways: Started[] = [];
let workers: Array<Started | undefined> = [];
let gatewayUrls: string[];
let adminKey: string;
const { script, stalled: stalledOnce } = noteJobs();

const sharedEnv = (): Record<string, string> => ({
  DOCENT_HTTP_PORT: '0',
  DOCENT_GRPC_PORT: '0',
  DOCENT_MONGO_DB: config.mongo.db,
  DOCENT_TASK_QUEUE_PREFIX: config.temporal.taskQueuePrefix,
  DOCENT_ES_INDEX_PREFIX: config.elasticsearch.indexPrefix,
  DOCENT_LOG_LEVEL: 'info',
  // Each run's task-queue prefix would leave a reconciler schedule on the shared dev server (test/e2e/processes.test.ts covers it).
  DOCENT_RECONCILER: 'off',
  ...modelSettings(model),
  DOCENT_GITHUB_API_URL: github.apiUrl,
  DOCENT_GITHUB_GIT_URL: git.url,
  DOCENT_GITHUB_TOKEN: token,
  // The test's organization uses the deployment's token (test/support/config.ts says why).
  DOCENT_GITHUB_SHARED_ORGS: '*',
  // A killed worker's turn is handed to the other one within seconds.
  DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS: '3000',
  // A turn waits this long for the worker holding its clone before it starts over on the other one.
  DOCENT_AGENT_CLONE_WAIT_MS: '4000',
  // The killed worker's workflows go to the other one 2 s after their next task, instead of 10.
  DOCENT_WORKER_STICKY_TIMEOUT_MS: '2000',
  // A step attempt that timed out under load may still write its clone after the workflow removed it; each worker's
  // sweep removes such a clone of an ended job within one period (docs/decisions/2026-11-27-clone-cleanup.md).
  DOCENT_WORKSPACE_SWEEP_MS: '500',
});

async function startWorker(i: number): Promise<Started> {
  const w = startNpmScript('worker', { ...sharedEnv(), DOCENT_WORKSPACE_DIR: workspaces[i]! });
  await w.waitForLog(isWorkerPolling);
  return w;
}

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  mongo = createMongo(config.mongo.url, config.mongo.db, 5_000);
  await ensureIndexes(mongo.db);
  const tenancy = new TenancyStore(mongo.db);
  await tenancy.createOrg('acme');
  await tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  adminKey = (await new ApiKeyStore(mongo.db).create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;
  temporal = new Client({ connection: await Connection.connect({ address: config.temporal.address }), namespace: config.temporal.namespace });
  workspaces = await Promise.all([0, 1].map(() => mkdtemp(path.join(os.tmpdir(), 'docent-scale-ws-'))));
  gateways = [startNpmScript('gateway', sharedEnv()), startNpmScript('gateway', sharedEnv())];
  const listening = await Promise.all(gateways.map((g) => g.waitForLog((l) => typeof l.httpPort === 'number')));
  gatewayUrls = listening.map((l) => `http://127.0.0.1:${l.httpPort}`);
  workers = await Promise.all([0, 1].map(startWorker));
});

afterAll(async () => {
  await Promise.all([...gateways, ...workers].map((p) => p?.stop('SIGKILL')));
  await mongo?.db.dropDatabase().catch(() => undefined);
  await mongo?.client.close();
  await temporal?.connection.close();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await Promise.all((workspaces ?? []).map((w) => rm(w, { recursive: true, force: true })));
});

async function waitForJob(url: string, jobId: string, timeoutMs = 180_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await (await callApi(url, adminKey, 'GET', `/v2/agent/widgets/job/${jobId}`)).json();
    if (job.status !== 'active') return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still active after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The worker process (its npm process group) that is running a workflow's pending activity now. */
async function workerRunning(workflowId: string, activityType: string): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { raw } = await temporal.workflow.getHandle(workflowId).describe();
    const identity = raw.pendingActivities?.find((a) => a.activityType?.name === activityType)?.lastWorkerIdentity;
    const pid = identity ? Number(/:(\d+)$/.exec(identity)?.[1]) : NaN;
    // The identity names the node process; /proc/<pid>/stat's fifth field is its process group, the npm process.
    if (pid > 0) return Number((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[2]);
    if (Date.now() > deadline) throw new Error(`${workflowId} has no running ${activityType}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('two gateways and two workers started with npm run', () => {
  it('serve jobs sent to either gateway; a worker killed mid-turn costs no job and no second pull request', async () => {
    const created = await Promise.all(
      Array.from({ length: jobCount }, async (_, i) => {
        const url = gatewayUrls[i % 2]!;
        const prompt = i === 0 ? `slow note ${i}` : `write note ${i}`;
        const r = await callApi(url, adminKey, 'POST', '/v2/agent/widgets/job', { prompt });
        expect(r.status).toBe(201);
        return { url, id: (await r.json()).id as string };
      }),
    );
    // Kill the worker that is inside the slow job's agent step; it stays away until every job is done, so the turns
    // on its clones start over on the other worker.
    // Killed once the slow job's model call is stalled, so the call that starts over elsewhere is answered at once.
    for (const deadline = Date.now() + 60_000; !stalledOnce.has('0'); ) {
      if (Date.now() > deadline) throw new Error('the slow job never called the model');
      await new Promise((r) => setTimeout(r, 100));
    }
    const victim = await workerRunning(`agent-job-${created[0]!.id}`, 'runAgent');
    const index = workers.findIndex((w) => w?.child.pid === victim);
    expect(index).toBeGreaterThanOrEqual(0);
    expect(await workers[index]!.stop('SIGKILL')).toBeNull();

    // Each job is read back through the other gateway than the one that created it.
    const jobs = await Promise.all(created.map((c) => waitForJob(gatewayUrls[(gatewayUrls.indexOf(c.url) + 1) % 2]!, c.id)));
    // The workflows end after removing their clones; then the killed worker comes back and sweeps what it left.
    await Promise.all(created.map((c) => temporal.workflow.getHandle(`agent-job-${c.id}`).result()));
    workers[index] = await startWorker(index);
    const clones = async () => (await Promise.all(workspaces.map((dir) => readdir(dir)))).flat().filter((name) => name.startsWith('job_'));
    expect(await poll('the clones of ended jobs', clones, (left) => left.length === 0, 10_000)).toEqual([]);
    for (const [i, job] of jobs.entries()) {
      const pulls = github.pulls.filter((p) => p.head === `docent/${job.id}`);
      expect({ status: job.status, pulls: pulls.length }).toEqual({ status: 'completed', pulls: 1 });
      expect(job.prLink).toBe(pulls[0]!.html_url);
      expect((await git.git('acme', 'widgets', 'rev-list', `main..docent/${job.id}`)).trim().split('\n')).toHaveLength(1);
      expect(await git.git('acme', 'widgets', 'show', `docent/${job.id}:notes/${i}.md`)).toBe(`note ${i}\n`);
    }
    expect(github.pulls).toHaveLength(jobCount);
    expect(github.rejected).toEqual([]);
  });
});
