import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { installTestRuntime } from '../support/temporal-runtime';
import os from 'node:os';
import path from 'node:path';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Config } from '../../src/config';
import { deploymentIdentity } from '../../src/config/deployment';
import { buildWorkers } from '../../src/worker-build';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { poll } from '../support/poll';
import { createWidgetsProject } from '../support/projects';
import { noteJobs } from '../support/note-jobs';
import { startScriptedModel, type ScriptedModel, modelSettings } from '../support/scripted-model';
import { testConfig } from '../support/config';
import { createMongo } from '../../src/store/mongo';

// Issue 38, invariant 8 (docs/reliability.md, "Found: clones left behind"): the three ways the soak left a clone on a
// worker after its job ended, each replayed with two real workers in this process, the gateway, Temporal, the
// database and git; only the model and the GitHub API are doubles. Each worker sweeps every 250 ms here.

const token = 'ghs_clonecleanuptoken0123456789';
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let key: string;
let workspaces: string[];
const { script, stalled } = noteJobs();

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  gw = await startGateway({
    ...modelSettings(model),
    DOCENT_GITHUB_API_URL: github.apiUrl,
    DOCENT_GITHUB_GIT_URL: git.url,
    DOCENT_GITHUB_TOKEN: token,
    DOCENT_SETUP_CACHE: 'off',
    // A step that stops heartbeating is retried after 1 s; a turn waits 1 s for its clone's worker before it moves.
    DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS: '1000',
    DOCENT_AGENT_CLONE_WAIT_MS: '1000',
  });
  key = await createWidgetsProject(gw);
  installTestRuntime(gw.deps.config);
  workspaces = await Promise.all([0, 1].map(() => mkdtemp(path.join(os.tmpdir(), 'docent-clone-cleanup-'))));
});

afterAll(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await Promise.all((workspaces ?? []).map((w) => rm(w, { recursive: true, force: true })));
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});

interface TestWorker {
  /** Starts polling (a worker built but not polling yet is one still starting up). */
  poll(): void;
  stop(): Promise<void>;
}
const running: TestWorker[] = [];

/** Worker `i` on its own workspace folder, sweeping as src/worker.ts does; built, and polling unless `poll: false`. */
async function startWorker(i: number, opts: { hold?: ActivityInterceptorsFactory; maxActivities?: number; poll?: boolean; base?: Config } = {}): Promise<TestWorker> {
  const base = opts.base ?? gw.deps.config;
  const config: Config = {
    ...base,
    agent: { ...base.agent, workspaceDir: workspaces[i]!, workspaceSweepMs: 250 },
    temporal: { ...base.temporal, workerMaxActivities: opts.maxActivities ?? base.temporal.workerMaxActivities },
  };
  const set = await buildWorkers(config, { identity: `clone-cleanup-${i}`, sweepWorkspaces: true, activityInterceptors: opts.hold ? [opts.hold] : [] });
  let runs: Promise<void> | undefined;
  const worker: TestWorker = {
    poll: () => {
      runs ??= set.run();
    },
    async stop() {
      set.shutdown();
      await runs;
      await set.close();
    },
  };
  running.push(worker);
  if (opts.poll !== false) worker.poll();
  return worker;
}

/** Holds `activityType` of a job on this worker once `next` has run (its clone is made), until released. */
function holdAfter(activityType: string, jobId: () => string | undefined) {
  let reached!: () => void;
  let release!: () => void;
  const state = {
    reached: new Promise<void>((r) => (reached = r)),
    released: new Promise<void>((r) => (release = r)),
    release: () => release(),
    interceptor: ((ctx) => ({
      inbound: {
        execute: async (input, next) => {
          const result = await next(input);
          if (ctx.info.activityType === activityType && (input.args[0] as { jobId?: string }).jobId === jobId() && ctx.info.attempt === 1) {
            reached();
            await state.released;
          }
          return result;
        },
      },
    })) as ActivityInterceptorsFactory,
  };
  return state;
}

const api = (method: string, p: string, body?: unknown) => callApi(gw.url, key, method, p, body);
/** A worker's job folders and (with `markers`) the `<jobId>.owner` files that say whose they are. */
const jobFolders = async (i: number, markers = false) => (await readdir(workspaces[i]!)).filter((name) => name.startsWith('job_') && (markers || !name.endsWith('.owner')));

async function createJob(prompt: string): Promise<string> {
  const r = await api('POST', '/v2/agent/widgets/job', { prompt });
  expect(r.status).toBe(201);
  return (await r.json()).id;
}

/** The job once it has ended and its workflow is done (it removed the clones it knows of). */
async function ended(jobId: string): Promise<any> {
  const job = await poll(
    'the job',
    async () => (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json(),
    (j: any) => j.status !== 'active',
    60_000,
  );
  await gw.deps.temporal.workflow.getHandle(`agent-job-${jobId}`).result();
  return job;
}

const noClonesLeft = (i: number) =>
  poll(
    `worker-${i}'s clones`,
    () => jobFolders(i, true),
    (names) => names.length === 0,
    10_000,
  );

it('a prepare attempt that missed its heartbeat and was retried on the other worker leaves no clone on the first', async () => {
  let jobId: string | undefined;
  const hold = holdAfter('prepareWorkspace', () => jobId);
  // One activity slot: while it holds the timed-out attempt, worker-1 takes no retry, so worker-0 gets it.
  await startWorker(1, { hold: hold.interceptor, maxActivities: 1 });
  jobId = await createJob('write note alpha');
  await hold.reached;
  expect(await jobFolders(1)).toEqual([jobId]);
  await startWorker(0);

  const job = await ended(jobId);
  expect({ status: job.status, error: job.error ?? null }).toEqual({ status: 'completed', error: null });
  expect(github.pulls.filter((p) => p.head === `docent/${jobId}`)).toHaveLength(1);
  // The timed-out attempt finishes its clone only now, after its job ended elsewhere.
  hold.release();
  expect(await noClonesLeft(1)).toEqual([]);
  expect(await noClonesLeft(0)).toEqual([]);
});

it('a stop that arrives while the first clone is made leaves no clone once that clone is done', async () => {
  let jobId: string | undefined;
  const hold = holdAfter('prepareWorkspace', () => jobId);
  await startWorker(0, { hold: hold.interceptor });
  jobId = await createJob('write note beta');
  await hold.reached;
  expect((await api('POST', `/v2/agent/widgets/job/${jobId}/stop`)).status).toBe(202);

  const job = await ended(jobId);
  expect({ status: job.status, code: job.error?.code }).toEqual({ status: 'failed', code: 'stopped' });
  expect(await jobFolders(0)).toEqual([jobId]);
  // The prepare, asked to cancel but not having heartbeated since, completes its clone after the workflow ended.
  hold.release();
  expect(await noClonesLeft(0)).toEqual([]);
});

it('a worker stopped mid-turn that starts again before its job ends elsewhere, and polls after, leaves no clone', async () => {
  const w0 = await startWorker(0);
  const jobId = await createJob('slow note gamma');
  await poll('the stalled model call', () => stalled.has('gamma'), Boolean);
  expect(await jobFolders(0)).toContain(jobId);
  // worker-0 goes with the turn's agent step in flight; the turn starts over on worker-1, held before its push.
  await w0.stop();
  const hold = holdAfter('runAgent', () => jobId);
  await startWorker(1, { hold: hold.interceptor });
  await hold.reached;
  // worker-0 is back (its start-up sweep keeps the clone of the job, still active) but not polling yet when the job ends.
  const back = await startWorker(0, { poll: false });
  hold.release();

  const job = await ended(jobId);
  expect({ status: job.status, error: job.error ?? null }).toEqual({ status: 'completed', error: null });
  expect(github.pulls.filter((p) => p.head === `docent/${jobId}`)).toHaveLength(1);
  back.poll();
  expect(await noClonesLeft(0)).toEqual([]);
  expect(await noClonesLeft(1)).toEqual([]);
});

it("two deployments sharing a workspace folder: each one's sweep keeps the other's clones", async () => {
  // Another stack on the same host (its own database and queue prefix), told to use worker-0's folder.
  const other = testConfig();
  const otherDb = createMongo(other.mongo.url, other.mongo.db, other.dependencyTimeoutMs, other.mongo);
  let jobId: string | undefined;
  const hold = holdAfter('prepareWorkspace', () => jobId);
  try {
    await startWorker(0, { hold: hold.interceptor });
    jobId = await createJob('write note delta');
    await hold.reached;
    expect(await jobFolders(0)).toEqual([jobId]);

    // The other stack's own leftovers: a clone of a job that ended there (from before folders were marked), and a
    // clone its worker marked for a job live there that this stack's database has never heard of.
    await otherDb.db.collection<{ _id: string; status: string }>('jobs').insertMany([
      { _id: 'job_otherstackdone', status: 'completed' },
      { _id: 'job_otherstacklive', status: 'active' },
    ]);
    await mkdir(path.join(workspaces[0]!, 'job_otherstackdone', '.git'), { recursive: true });
    await mkdir(path.join(workspaces[0]!, 'job_otherstacklive', '.git'), { recursive: true });
    await writeFile(path.join(workspaces[0]!, 'job_otherstacklive.owner'), JSON.stringify({ deployment: deploymentIdentity(other), worker: 'other-worker' }));

    // Its worker starts (and sweeps) on the shared folder: its own ended clone goes, worker-0's live clone stays.
    await startWorker(0, { base: other, poll: false });
    await poll(
      'the other stack sweeping its own ended clone',
      () => jobFolders(0),
      (names) => !names.includes('job_otherstackdone'),
      10_000,
    );
    expect((await jobFolders(0)).sort()).toEqual([jobId, 'job_otherstacklive'].sort());
    // And this stack's periodic sweep, seen removing a clone of its own ended job, keeps the other stack's live one.
    await gw.deps.mongo.db.collection<{ _id: string; status: string }>('jobs').insertOne({ _id: 'job_thisstackdone', status: 'completed' });
    await mkdir(path.join(workspaces[0]!, 'job_thisstackdone', '.git'), { recursive: true });
    await writeFile(path.join(workspaces[0]!, 'job_thisstackdone.owner'), JSON.stringify({ deployment: deploymentIdentity(gw.deps.config), worker: 'clone-cleanup-0' }));
    await poll(
      'worker-0 sweeping its own ended clone',
      () => jobFolders(0),
      (names) => !names.includes('job_thisstackdone'),
      10_000,
    );
    expect(await jobFolders(0)).toContain('job_otherstacklive');

    hold.release();
    const job = await ended(jobId);
    expect({ status: job.status, error: job.error ?? null }).toEqual({ status: 'completed', error: null });
    expect(github.pulls.filter((p) => p.head === `docent/${jobId}`)).toHaveLength(1);
    // This stack's sweep (every 250 ms) and its job's cleanup leave the other stack's live clone alone.
    await poll(
      'worker-0 removing its own clone',
      () => jobFolders(0, true),
      (names) => !names.some((n) => n.startsWith(jobId!)),
      10_000,
    );
    expect((await jobFolders(0, true)).sort()).toEqual(['job_otherstacklive', 'job_otherstacklive.owner']);
  } finally {
    hold.release();
    await otherDb.db.dropDatabase();
    await otherDb.client.close();
  }
});
