// tenant-fairness: project A queues a backlog of agent jobs at once, then project B queues one, each job opening a pull
// request, on a worker with the settings a deployment starts with; how long B's job waits, and how many of A's jobs
// started or finished before it. Fairness on (the stack's Temporal, infra/stack.sh, and the worker's turns by project,
// DOCENT_WORKER_FAIRNESS) against off (the same dev server without matching.enableFairness, the worker first come first
// served), in alternating blocks: each side has its own in-memory dev server, gateway and `node dist/src/worker.js` process.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { JobDoc } from '../src/jobs/job';
import { startGateway, type RunningGateway } from '../test/support/gateway';
import { backedBy, startGitHubDouble } from '../test/support/github-double';
import { startGitServer } from '../test/support/git-server';
import { besideBacklog, jobTimeline, workflowClosed, type JobTimeline } from '../test/support/job-timeline';
import { isWorkerPolling, startProcess, type Started } from '../test/support/process';
import { startTemporalDevServer, type TemporalDevServer } from '../test/support/temporal-server';
import type { Benchmark } from './lib/bench';
import { benchEnv, runId } from './lib/stack';
import { fairnessBar, fairnessGoal, judgedRow } from './lib/goals';
import { fmtRatio, median, medianRatio, percentile } from './lib/stats';

const token = 'ghs_benchtoken0123456789';
const backlogJobs = 40;
const pairs = 2;
/** Per model call; each job writes one file, pushes it and opens a pull request (GitHub's client spaces those 3 s apart). */
const modelLatencyMs = 300;
const prompt = `add a note [latency=${modelLatencyMs}]`;

interface Side {
  label: string;
  server: TemporalDevServer;
  gw: RunningGateway;
  worker: Started;
  workspaceDir: string;
  /** Each project's id and admin key. */
  projects: Record<'a' | 'b', { id: string; key: string }>;
}

interface Block {
  /** B's job: queued → its first step started, and → its end recorded (ms). */
  bWaitMs: number;
  bRunMs: number;
  startedBefore: number;
  /** A's jobs that started after B was queued and before B started: went ahead of it. */
  startedWhileWaiting: number;
  finishedBeforeStart: number;
  finishedBeforeFinish: number;
  aWaitsMs: number[];
  /** One of A's jobs from its first step to its end, median (waits between its steps included). */
  aTurnMs: number;
  wallSeconds: number;
}

export const tenantFairness: Benchmark = {
  name: 'tenant-fairness',
  summary: `project A queues ${backlogJobs} jobs at once, then B one, each opening a pull request; default worker settings: fairness on vs off`,
  async run(ctx) {
    const model = await ctx.model();
    const git = await startGitServer(token);
    const github = await startGitHubDouble({ token, ...backedBy(git) });
    await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello world\n', 'src/index.js': 'module.exports = 42;\n' });
    const sides: Side[] = [];

    const startSide = async (label: string, fairness: boolean): Promise<Side> => {
      const run = runId();
      const server = await startTemporalDevServer({ inMemory: true, fairness });
      const side: Partial<Side> & { label: string; server: TemporalDevServer } = { label, server };
      try {
        const env = {
          ...model.env,
          DOCENT_TEMPORAL_ADDRESS: server.address,
          DOCENT_GITHUB_GIT_URL: git.url,
          DOCENT_GITHUB_API_URL: github.apiUrl,
          DOCENT_GITHUB_TOKEN: token,
          DOCENT_GITHUB_SHARED_ORGS: '*',
        };
        const gw = await startGateway(benchEnv(run, env));
        side.gw = gw;
        const { config } = gw.deps;
        await gw.deps.tenancy.createOrg(`org-${run}`);
        const projects = { a: { id: `a-${run}`, key: '' }, b: { id: `b-${run}`, key: '' } };
        for (const p of Object.values(projects)) {
          await gw.deps.tenancy.createProject({ _id: p.id, orgId: `org-${run}`, repository: 'acme/widgets', ref: 'main' });
          p.key = (await gw.deps.keys.create({ kind: 'admin', orgId: `org-${run}`, projectId: p.id })).key;
        }
        side.projects = projects;
        const workspaceDir = await mkdtemp(path.join(os.tmpdir(), `docent-bench-fair-${label}-`));
        side.workspaceDir = workspaceDir;
        const worker = startProcess('src/worker.js', {
          ...env,
          DOCENT_MONGO_DB: config.mongo.db,
          DOCENT_TASK_QUEUE_PREFIX: config.temporal.taskQueuePrefix,
          DOCENT_ES_INDEX_PREFIX: config.elasticsearch.indexPrefix,
          DOCENT_WORKSPACE_DIR: workspaceDir,
          // The worker's own defaults otherwise (100 activity slots per queue): as `npm start` runs it.
          DOCENT_WORKER_FAIRNESS: fairness ? 'on' : 'off',
          DOCENT_RECONCILER: 'off',
          DOCENT_LOG_LEVEL: 'info',
        });
        side.worker = worker;
        await worker.waitForLog(isWorkerPolling, 120_000);
        sides.push(side as Side);
        return side as Side;
      } catch (err) {
        await stopSide(side);
        throw err;
      }
    };
    const stopSide = async (s: Partial<Side> & { server: TemporalDevServer }) => {
      await s.worker?.stop('SIGTERM').catch(() => undefined);
      await s.gw?.stop().catch(() => undefined);
      await s.server.close().catch(() => undefined);
      if (s.workspaceDir) await rm(s.workspaceDir, { recursive: true, force: true });
    };

    const create = async (s: Side, p: 'a' | 'b'): Promise<string> => {
      const { id: projectId, key } = s.projects[p];
      const r = await fetch(`${s.gw.url}/v2/agent/${projectId}/job`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt }),
      });
      const job = (await r.json()) as { id: string };
      if (r.status !== 201) throw new Error(`create answered ${r.status}: ${JSON.stringify(job)}`);
      return job.id;
    };

    const block = async (s: Side, jobs: number): Promise<Block> => {
      const t0 = performance.now();
      const aIds = await Promise.all(Array.from({ length: jobs }, () => create(s, 'a')));
      const bId = await create(s, 'b');
      const all = [...aIds, bId];
      const deadline = Date.now() + 15 * 60_000;
      for (;;) {
        const open = (await Promise.all(all.map((id) => workflowClosed(s.gw.deps.temporal, id)))).filter((closed) => !closed).length;
        if (open === 0) break;
        if (Date.now() > deadline) throw new Error(`${open} job workflows still running after 15 minutes`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const wallSeconds = (performance.now() - t0) / 1000;
      for (const id of all) {
        const job = await s.gw.deps.mongo.db.collection<JobDoc>('jobs').findOne({ _id: id });
        if (job?.status !== 'completed') throw new Error(`job ${id} ended ${job?.status}: ${JSON.stringify(job?.error ?? {})}`);
      }
      const a: JobTimeline[] = await Promise.all(aIds.map((id) => jobTimeline(s.gw.deps.temporal, id)));
      const b = await jobTimeline(s.gw.deps.temporal, bId);
      const seen = besideBacklog(a, b);
      return {
        bWaitMs: b.startedAt - b.queuedAt,
        bRunMs: b.finishedAt - b.queuedAt,
        startedBefore: seen.startedBeforeItStarted,
        startedWhileWaiting: seen.startedWhileItWaited,
        finishedBeforeStart: seen.finishedBeforeItStarted,
        finishedBeforeFinish: seen.finishedBeforeItFinished,
        aWaitsMs: a.map((j) => j.startedAt - j.queuedAt),
        aTurnMs: median(a.map((j) => j.finishedAt - j.startedAt)),
        wallSeconds,
      };
    };
    const show = (label: string, f: Block) =>
      ctx.log(
        `${label}: B waited ${(f.bWaitMs / 1000).toFixed(1)} s to start, done after ${(f.bRunMs / 1000).toFixed(1)} s; of A's jobs ${f.startedBefore} had started (${f.startedWhileWaiting} after B was queued), ${f.finishedBeforeStart} finished before B started, ` +
          `${f.finishedBeforeFinish} before B finished; A waits p50 ${(percentile(f.aWaitsMs, 50) / 1000).toFixed(1)} s p99 ${(percentile(f.aWaitsMs, 99) / 1000).toFixed(1)} s; A's job first step to end ${(f.aTurnMs / 1000).toFixed(1)} s; block ${f.wallSeconds.toFixed(0)} s`,
      );

    try {
      const fair = await startSide('on', true);
      const fifo = await startSide('off', false);
      // Warm-up: the workers' first clones and model calls, a few jobs each.
      show('warm-up, fairness on', await block(fair, 4));
      show('warm-up, fairness off', await block(fifo, 4));
      const on: Block[] = [];
      const off: Block[] = [];
      for (let i = 0; i < pairs; i++) {
        on.push(await block(fair, backlogJobs));
        show(`pair ${i + 1}, fairness on`, on.at(-1)!);
        off.push(await block(fifo, backlogJobs));
        show(`pair ${i + 1}, fairness off`, off.at(-1)!);
      }

      const m = (bs: Block[], f: (b: Block) => number) => median(bs.map(f));
      const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
      const describe = (bs: Block[]) => {
        const waits = bs.flatMap((b) => b.aWaitsMs);
        return (
          `B waited ${seconds(m(bs, (b) => b.bWaitMs))} to start (blocks ${bs.map((b) => seconds(b.bWaitMs)).join(', ')}), done after ${seconds(m(bs, (b) => b.bRunMs))}; ` +
          `of A's ${backlogJobs}: ${bs.map((b) => b.startedBefore).join(', ')} started (${bs.map((b) => b.startedWhileWaiting).join(', ')} of them after B was queued) and ${bs.map((b) => b.finishedBeforeStart).join(', ')} finished before B started, ` +
          `${bs.map((b) => b.finishedBeforeFinish).join(', ')} finished before B finished; A waits p50 ${seconds(percentile(waits, 50))}, p99 ${seconds(percentile(waits, 99))}; ` +
          `A's job from first step to end ${seconds(m(bs, (b) => b.aTurnMs))}`
        );
      };
      const bar = fairnessBar(backlogJobs);
      return {
        rows: [
          {
            bench: 'tenant-fairness',
            case: `A queues ${backlogJobs} jobs, then B 1, each opening a pull request (default worker settings): B's job from queued to finished, fairness on vs off`,
            ratio: fmtRatio(
              medianRatio(
                on.map((b) => b.bRunMs),
                off.map((b) => b.bRunMs),
              ),
            ),
            // The same measure on both sides, and one the floor fails: fairness off must not meet it.
            target: `B's job finishes before ${bar} of A's ${backlogJobs} (10 %) have, in every block with fairness on, and in none with it off`,
            ...judgedRow(fairnessGoal(backlogJobs, on, off)),
            subject: describe(on),
            baseline: describe(off),
          },
        ],
        notes: [
          `${pairs} pairs of blocks (fairness on, then off) after a warm-up pair of 4 jobs each. Each side has its own in-memory Temporal dev server ` +
            '(on: `matching.enableFairness=true` as infra/stack.sh starts it, and the worker with DOCENT_WORKER_FAIRNESS=on, its default; off: neither, one partition per task queue, as the test suite runs it), gateway and worker process; the code is the same, every job starts with its project as fairness key. ' +
            `A block creates A's ${backlogJobs} jobs through REST at once, then B's one, and ends when every workflow has closed. ` +
            'The worker runs with its defaults (100 activities at a time per task queue: at this size nothing waits in Temporal, whose fairness then orders nothing). ' +
            `Each job clones over local git HTTP, makes two model calls (${modelLatencyMs} ms each), writes a file, pushes and opens a pull request on the GitHub double, which answers at once; ` +
            "GitHub's client spaces pull-request creations 3 s apart for the whole worker (@octokit/plugin-throttling), and that wait is what B's job shares with A's. " +
            '"Started" is the job\'s first activity starting, "finished" its end recorded (its last `recordJobStatus`), both from the workflow history.',
        ],
      };
    } finally {
      for (const s of [...sides]) await stopSide(s);
      await Promise.allSettled([git.close(), github.close()]);
    }
  },
};
